"""The fast path driving real MQTT devices (the demo home's devices as separate MQTT clients on a
real mosquitto): several commands in one sentence, rooms named in English asked for in other
languages, questions answered from the devices' reported state, chit-chat left to the model."""

from __future__ import annotations

import asyncio

import pytest

import hub.home.entity_tool as entity_tool

from hub.agent.agent import Agent
from hub.agent.pending import ConfirmationHook
from hub.agent.types import TurnRequest
from hub.config import validate
from hub.home.catalogue import build_home_tools
from hub.home.entities import EntityStore
from hub.understanding.fast_path import FastPath
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.home.policy import ActionPolicy
from hub.home.resolve import EntityResolver
from hub.home.view import StoreHomeView
from hub.core.tools import ToolContext, ToolRegistry
from hub.locales import phrase, template
from hub.options import hub_options
from hub.settings import RuntimeSettings
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import eventually
from mqtt.test_tools_on_mqtt import home as mqtt_home  # noqa: F401  (the MQTT demo home, tools on it)

pytestmark = pytest.mark.timeout(90)
LIGHTS = ("light.desk_lamp", "light.kitchen_light", "light.living_room_lamp")


class MqttHome:
    def __init__(self, store: EntityStore, fast_path: FastPath, demo: MqttDemoHome) -> None:
        self.store, self.fast_path, self.demo = store, fast_path, demo

    async def say(self, text: str, language: str):
        return await self.fast_path.try_handle(text, language, ToolContext("t", language=language))

    def states(self) -> dict[str, str]:
        """The controllable devices' states (the weather station reports on its own)."""
        return {e.entity_id: e.state for e in self.store.all() if "sensor" not in e.domain}


@pytest.fixture
async def home(mqtt_home) -> MqttHome:
    store, registry, demo = mqtt_home
    await eventually(lambda: all(store.get(i) is not None and store.get(i).state == "off" for i in LIGHTS))
    return MqttHome(store, FastPath(store, registry, EntityResolver(store)), demo)


@pytest.mark.parametrize("text, language", [
    ("turn on the desk lamp and the kitchen light", "en"),
    ("Schalte das Licht in der Küche und im Büro ein", "de"),
    ("Allume la lumière de la cuisine et la lumière du bureau", "fr"),
    ("Enciende la luz de la cocina y la luz de la oficina", "es"),
    ("Zet het licht in de keuken aan en het licht in het kantoor", "nl"),
])
async def test_several_commands_switch_real_mqtt_devices(home: MqttHome, sniffer_factory, text,
                                                         language) -> None:
    sniffer = sniffer_factory(["bolt_demo/#"])
    outcome = await home.say(text, language)
    assert outcome is not None, text
    assert sorted(c.arguments["entity_id"] for c in outcome.calls) == ["light.desk_lamp", "light.kitchen_light"]
    assert all(r.ok for r in outcome.results), [r.data for r in outcome.results]
    assert await sniffer.wait_for("bolt_demo/desk_lamp/set") == b"ON"
    assert b'"ON"' in await sniffer.wait_for("bolt_demo/kitchen_light/set")
    await eventually(lambda: home.store.get("light.desk_lamp").state == "on"
                     and home.store.get("light.kitchen_light").state == "on")
    assert home.demo.device("desk_lamp").on
    assert home.store.get("light.living_room_lamp").state == "off"  # nothing else switched
    assert "Desk Lamp" in outcome.reply and "Kitchen Light" in outcome.reply


@pytest.mark.parametrize("text, language, answer", [
    ("is the front door locked", "en", "Yes."),
    ("Welche Lichter sind an?", "de", "Nichts ist an."),
    ("Combien de lumières sont allumées ?", "fr", "En marche : 0 sur 3."),
    ("¿Qué luces están encendidas?", "es", "Nada está encendido."),
    ("Hoeveel lampen zijn aan?", "nl", "Aan: 0 van 3."),
])
async def test_questions_are_answered_from_the_devices_state(home: MqttHome, sniffer_factory, text,
                                                             language, answer) -> None:
    sniffer = sniffer_factory(["bolt_demo/+/set", "bolt_demo/+/+/set"])
    before = home.states()
    outcome = await home.say(text, language)
    assert outcome is not None and outcome.calls == [], text
    assert outcome.reply.startswith(answer), outcome.reply
    assert home.states() == before and not sniffer.messages


@pytest.mark.parametrize("text, language", [
    ("Hey, what can you do for me?", "en"), ("Was kannst du für mich tun?", "de"),
    ("Raconte-moi une blague", "fr"), ("¿Qué puedes hacer por mí?", "es"), ("Vertel me een mop", "nl"),
])
async def test_chit_chat_sends_nothing_to_the_devices(home: MqttHome, sniffer_factory, text, language) -> None:
    sniffer = sniffer_factory(["bolt_demo/+/set", "bolt_demo/+/+/set"])
    assert await home.say(text, language) is None
    assert not sniffer.messages


def policed_agent(store: EntityStore, tmp_path) -> Agent:
    """The real agent over the MQTT home, its sensitive actions held for a yes by the policy."""
    policy = ActionPolicy()
    registry = ToolRegistry()
    resolver = EntityResolver(store)
    for tool in build_home_tools(store, resolver, policy):
        registry.register(tool)
    options = hub_options(validate({"data_dir": str(tmp_path)}))
    return Agent(engine=ScriptedEngine([]), registry=registry, settings=RuntimeSettings(options.settings),
                 options=options.agent, home=StoreHomeView(store, resolver),
                 fast_path=FastPath(store, registry, resolver), confirmations=ConfirmationHook(policy, registry))


async def test_one_yes_unlocks_the_lock_and_opens_the_garage_door_over_mqtt(mqtt_home, tmp_path) -> None:
    """Two sensitive parts of one sentence, through the real agent and policy: nothing moves on
    the question, both real devices move on the one yes."""
    store, _, demo = mqtt_home
    agent = policed_agent(store, tmp_path)
    await eventually(lambda: store.get("lock.front_door") is not None and store.get("cover.garage_door") is not None)
    asked = await agent.ask(TurnRequest("unlock the front door and open the garage door", "door", language="en"))
    names = [store.get("lock.front_door").name, store.get("cover.garage_door").name]
    assert asked.reply == " ".join([
        phrase("en", "policy.confirm", action=phrase("en", "policy.verb.unlock"), name=names[0]),
        phrase("en", "policy.confirm", action=phrase("en", "policy.verb.open"), name=names[1])])
    assert demo.device("front_door").locked and demo.device("garage_door").position == 0
    done = await agent.ask(TurnRequest("yes", "door", language="en"))
    assert done.path == "confirmation" and all(f.ok for f in done.tool_calls), done.reply
    await eventually(lambda: not demo.device("front_door").locked and demo.device("garage_door").position == 100)


@pytest.mark.parametrize("text, language", [
    ("entriegle alle Türen im Flur", "de"),  # 2025.6: the lock domain required as context, no name
    ("déverrouiller toutes les portes", "fr"),
])
async def test_unlocking_the_doors_is_unlocking_the_locks_after_a_yes(mqtt_home, tmp_path, text, language) -> None:
    """"The doors" of an unlock command are the locks (in the hallway said, or the home's): the
    policy asks first, nothing else moves, and the real lock opens on the language's yes."""
    store, _, demo = mqtt_home
    agent = policed_agent(store, tmp_path)
    await eventually(lambda: store.get("lock.front_door") is not None and store.get("cover.garage_door") is not None)
    before = {e.entity_id: e.state for e in store.all() if "sensor" not in e.domain}
    asked = await agent.ask(TurnRequest(text, "doors", language=language))
    assert asked.reply == phrase(language, "policy.confirm", action=phrase(language, "policy.verb.unlock"),
                                 name=store.get("lock.front_door").name), asked.reply
    assert demo.device("front_door").locked
    yes = template(language, "policy.yes_words").split("|")[0]
    done = await agent.ask(TurnRequest(yes, "doors", language=language))
    assert done.path == "confirmation" and [f.ok for f in done.tool_calls] == [True], done.reply
    await eventually(lambda: not demo.device("front_door").locked)
    after = {e.entity_id: e.state for e in store.all() if "sensor" not in e.domain}
    assert {i for i in after if after[i] != before[i]} == {"lock.front_door"}


async def test_a_command_that_changes_nothing_is_answered_without_waiting_for_a_report(
        mqtt_home, tmp_path, sniffer_factory, monkeypatch) -> None:
    """The real agent over real MQTT devices: a command that changes a device answers with the
    state the device reported; one that finds it so already (the same brightness again, the
    thermostat's own target, the blinds where they are) is still sent, but no report comes for
    it and the agent does not wait for one (here a wait would last 60 s)."""
    store, _, demo = mqtt_home
    monkeypatch.setattr(entity_tool, "STATE_ECHO_TIMEOUT_S", 60.0)
    agent = policed_agent(store, tmp_path)
    sniffer = sniffer_factory(["bolt_demo/#"])
    await eventually(lambda: all(store.get(i) is not None for i in ("light.kitchen_light", "cover.bedroom_blinds")))
    assert store.get("light.kitchen_light").state == "off"
    changed = await asyncio.wait_for(agent.ask(TurnRequest("set the kitchen light to 50%", language="en")), 10)
    [call] = changed.tool_calls
    assert call.ok and (call.data["state"], call.data["brightness"]) == ("on", 50), call.data  # as reported
    assert store.get("climate.thermostat").attributes["temperature"] == demo.device("thermostat").target == 21.0
    # (text, tool, the command's topic, how many commands it will have seen: the first one too)
    for text, tool, topic, sent in [
            ("set the kitchen light to 50%", "set_light", "bolt_demo/kitchen_light/set", 2),
            ("set the thermostat to 21 degrees", "set_temperature", "bolt_demo/thermostat/target/set", 1),
            ("set the bedroom blinds to 0%", "set_position", "bolt_demo/bedroom_blinds/position/set", 1)]:
        again = await asyncio.wait_for(agent.ask(TurnRequest(text, language="en")), 10)
        assert again.ok and again.path == "fast_path", (text, again.reply)
        assert [(f.call.name, f.ok) for f in again.tool_calls] == [(tool, True)]
        await eventually(lambda: len(sniffer.on(topic)) == sent)  # the command went out all the same
