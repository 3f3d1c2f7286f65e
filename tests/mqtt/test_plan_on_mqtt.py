"""Plans on real MQTT devices (the demo home's devices as their own client on a real mosquitto,
the hub discovering them): a plan changes no device, sends no command, holds nothing for a yes,
starts no timer and leaves no conversation behind, whatever the path; running it does exactly
what it showed, once, with the policy deciding again."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from hub.agent.personas import Persona, PersonaBook, UnknownPersona, home_persona
from hub.agent.plans import PlanNotRunnable
from hub.agent.prompt import ASSISTANT_INSTRUCTIONS
from hub.agent.types import TurnRequest
from hub.app import HubApp
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.config import validate
from hub.transport.mqtt_client import BrokerSettings
from helpers.scripted_engine import ScriptedEngine, call, text
from mqtt.mqtt_helpers import eventually

pytestmark = pytest.mark.timeout(120)
_STATE_FIELDS = ("on", "brightness", "rgb", "first", "position", "moving", "mode", "target", "speed")


def device_states(demo: MqttDemoHome) -> dict[str, dict[str, Any]]:
    """What each device itself holds (not what the hub believes)."""
    return {key: {k: v for k, v in vars(d).items() if k in _STATE_FIELDS} for key, d in demo.devices.items()}


class PlannedHome:
    def __init__(self, app: HubApp, demo: MqttDemoHome) -> None:
        self.app, self.demo = app, demo

    @property
    def agent(self):
        assert self.app.agent is not None
        return self.app.agent

    def hub_states(self) -> dict[str, str]:
        return {e.entity_id: e.state for e in self.app.store.all() if "sensor" not in e.domain}


@pytest.fixture
async def home(mosquitto, tmp_path: Path) -> AsyncIterator[PlannedHome]:
    # the model's round for the one request below that no template takes
    engine = ScriptedEngine([[call("turn_on", entity_id="switch.coffee_maker")]], constrained=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        http_port = probe.getsockname()[1]
    app = HubApp(validate({"data_dir": str(tmp_path), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                           "http_port": http_port, "rate_limit_per_minute": 0, "model_home_control": True}),
                 engine=engine)
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port), travel_seconds=1.0)
    await demo.start()
    await app.start(listeners=False)
    await eventually(lambda: (e := app.store.get("climate.thermostat")) is not None and e.state == "heat")
    await eventually(lambda: all(app.store.get(i) is not None for i in ("lock.front_door", "cover.garage_door")))
    # every device has told its state (a fan or switch is "unknown" until its first state message)
    await eventually(lambda: all(e.state != "unknown" for e in app.store.all() if "sensor" not in e.domain))
    yield PlannedHome(app, demo)
    await app.stop()
    await demo.stop()


PLANNED = [
    # (request, language, expected (tool, entity id, verdict) of every call)
    ("turn on the kitchen light", "en", [("turn_on", "light.kitchen_light", "would_run")]),
    ("turn on the desk lamp and the kitchen light", "en",
     [("turn_on", "light.desk_lamp", "would_run"), ("turn_on", "light.kitchen_light", "would_run")]),
    ("Schalte das Licht in der Küche ein", "de", [("turn_on", "light.kitchen_light", "would_run")]),
    ("set the living room lamp to 30 percent", "en", [("set_light", "light.living_room_lamp", "would_run")]),
    ("unlock the front door", "en", [("turn_off", "lock.front_door", "would_ask")]),
    ("open the garage door", "en", [("turn_on", "cover.garage_door", "would_ask")]),
    ("set a timer for 5 minutes", "en", [("start_timer", None, "unchecked")]),
    ("could you get the coffee maker going", "en", [("turn_on", "switch.coffee_maker", "would_run")]),
]


async def test_a_plan_changes_no_device_and_leaves_nothing_behind(home: PlannedHome, sniffer_factory) -> None:
    sniffer = sniffer_factory(["bolt_demo/+/set", "bolt_demo/+/+/set", "bolt_demo/+/command", "bolt_demo/#"])
    devices, believed = device_states(home.demo), home.hub_states()
    sniffer.clear()
    for request, language, expected in PLANNED:
        plan = await home.agent.plan(TurnRequest(request, language=language, source="rest"))
        got = [(c.name, c.entity_id, c.verdict) for c in plan.calls]
        assert got == expected, (request, plan)
        assert plan.reply is None  # it would act: nothing is said as if it had
        if "garage" in request or "unlock" in request:
            assert plan.calls[0].message and plan.calls[0].message.startswith("Do you really want me to")
    assert plan.path == "model"  # the last one: no template takes it
    await asyncio.sleep(1.5)  # a command sent would have reached the devices (and a cover moved)
    assert device_states(home.demo) == devices
    assert home.hub_states() == believed
    commands = [t for t, _, _ in sniffer.messages if t.endswith(("/set", "/command"))]
    assert commands == []
    assert not home.app.policy._pending  # nothing waits for a yes
    assert home.app.later.timers.timers() == []
    assert home.agent.conversations.ids() == []


async def test_running_a_plan_does_what_it_showed_once(home: PlannedHome, sniffer_factory) -> None:
    sniffer = sniffer_factory(["bolt_demo/#"])
    plan = await home.agent.plan(TurnRequest("turn on the desk lamp and the kitchen light", source="rest"))
    assert not home.demo.device("desk_lamp").on
    run = await home.agent.run_plan(plan.plan_id)
    # the commands the plan's check above watches for do go out now (that check can fail)
    assert await sniffer.wait_for("bolt_demo/desk_lamp/set") == b"ON"
    assert [c.ok for c in run.calls] == [True, True]
    assert "Desk Lamp" in run.reply and "Kitchen Light" in run.reply
    await eventually(lambda: home.demo.device("desk_lamp").on and home.demo.device("kitchen_light").on)
    assert not home.demo.device("living_room_lamp").on  # nothing else
    with pytest.raises(PlanNotRunnable) as again:
        await home.agent.run_plan(plan.plan_id)
    assert again.value.code == "plan_already_run"
    assert home.agent.conversations.ids() == []


async def test_running_a_sensitive_plan_asks_and_does_nothing(home: PlannedHome) -> None:
    plan = await home.agent.plan(TurnRequest("unlock the front door", source="rest"))
    run = await home.agent.run_plan(plan.plan_id)
    assert run.calls[0].data["error"] == "confirmation_required"
    assert run.reply.startswith("Do you really want me to unlock")
    await asyncio.sleep(0.5)
    assert home.demo.device("front_door").locked
    assert not home.app.policy._pending  # the question's conversation is gone: nothing waits


async def test_a_plan_runs_for_its_client_as_a_turn_of_its_place(home: PlannedHome) -> None:
    """A run is a turn of the planning request: its satellite and the place resolved from its
    area id (a timer started by the run is the satellite's, in its room), and another client's
    run is refused without spending the plan."""
    asked = TurnRequest("set a timer for 5 minutes", source="rest", client="rest:token:ab@10.0.0.2",
                        satellite_id="assist_satellite.kitchen_speaker", area="kitchen")
    plan = await home.agent.plan(asked)
    assert plan.satellite_id == "assist_satellite.kitchen_speaker"
    with pytest.raises(PlanNotRunnable) as stranger:
        await home.agent.run_plan(plan.plan_id, "rest:token:ab@10.0.0.3")
    assert stranger.value.code == "plan_of_another_client"
    assert home.app.later.timers.timers() == []
    run = await home.agent.run_plan(plan.plan_id, asked.client)
    assert [c.ok for c in run.calls] == [True]
    [timer] = home.app.later.timers.timers()
    assert timer.ctx.satellite_id == "assist_satellite.kitchen_speaker" and timer.area == "Kitchen"
    assert timer.ctx.source == "rest" and timer.ctx.client == asked.client


async def test_a_plan_whose_persona_is_gone_is_refused_and_kept(home: PlannedHome) -> None:
    keeper = Persona(key="keeper", name="Keeper", instructions="You keep the house.", home=True)
    with_keeper = PersonaBook(home_persona(ASSISTANT_INSTRUCTIONS), [keeper], home_tools=home.agent.personas.tool_names(
        home.agent.personas.get(None)))
    without_keeper, home.agent.personas = home.agent.personas, with_keeper
    plan = await home.agent.plan(TurnRequest("could you get the coffee maker going", persona="keeper",
                                             source="rest"))
    assert [(c.name, c.verdict) for c in plan.calls] == [("turn_on", "would_run")]
    home.agent.personas = without_keeper
    with pytest.raises(UnknownPersona):
        await home.agent.run_plan(plan.plan_id)
    home.agent.personas = with_keeper
    run = await home.agent.run_plan(plan.plan_id)  # not spent by the refusal
    assert [c.ok for c in run.calls] == [True]
    await eventually(lambda: home.demo.device("coffee_maker").on)
