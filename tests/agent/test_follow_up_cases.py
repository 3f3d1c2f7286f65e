"""Follow-ups and relative commands in the cases around them (issue #28 points 3 and 4), through
the real agent, the demo home and the real fast path: "which one?" asked and answered (one, or
"both"), "the other one", "all of them", a follow-up past its window or from another client, a
follow-up to the model's own action, the speaker's area, a thermostat's own step, the policy
holding a follow-up that unlocks. The model is scripted: where it has no rounds it must not be
asked."""

from __future__ import annotations

import dataclasses

import pytest

from hub.locales import format_number, join_list, phrase
from hub.understanding.referents import FOLLOW_UP_WINDOW_S

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(60)


def percent(value: int) -> str:
    return phrase("en", "unit.percent", value=format_number(value, "en"))


def level(hub: TestHub, entity_id: str) -> int:
    entity = hub.store.get(entity_id)
    return round(entity.attributes["brightness"] * 100 / 255) if entity.state == "on" else 0


def only_lights(hub: TestHub, *keep: str) -> None:
    for entity in hub.store.all():
        if entity.domain == "light" and entity.entity_id not in keep:
            hub.store.remove(entity.entity_id)


async def test_a_relative_command_with_several_devices_asks_which_and_the_answer_carries_it_out(tmp_path) -> None:
    engine = ScriptedEngine([])
    hub = TestHub(tmp_path, engine, fast_path=True)
    only_lights(hub, "light.kitchen", "light.bedroom")
    asked = await hub.ask("a bit brighter")
    options = join_list(["Bedroom light", "Kitchen light"], "en")
    assert asked.reply == phrase("en", "entity.ambiguous", options=options) and asked.tool_calls == []
    chosen = await hub.ask("the kitchen light")
    assert level(hub, "light.kitchen") == 10 and level(hub, "light.bedroom") == 0, chosen.reply
    again = await hub.ask("brighter")  # now the conversation's last target
    assert level(hub, "light.kitchen") == 30, again.reply
    assert again.reply == phrase("en", "relative.up", name="Kitchen light", value=percent(30))
    assert engine.requests == []


async def test_both_answers_which_one_with_all_the_options(tmp_path) -> None:
    engine = ScriptedEngine([])
    hub = TestHub(tmp_path, engine, fast_path=True)
    only_lights(hub, "light.kitchen", "light.bedroom")
    await hub.ask("make it brighter")
    both = await hub.ask("both")
    assert level(hub, "light.kitchen") == 20 and level(hub, "light.bedroom") == 20, both.reply
    assert engine.requests == []


async def test_the_other_one_and_all_of_them(tmp_path) -> None:
    engine = ScriptedEngine([])
    hub = TestHub(tmp_path, engine, fast_path=True)
    await hub.ask("turn on the floor lamp")
    other = await hub.ask("the other one")
    assert [c.call.arguments["entity_id"] for c in other.tool_calls] == ["light.living_room"]
    await hub.ask("turn it off")
    assert hub.state("light.living_room") == "off" and hub.state("light.floor_lamp") == "on"
    everything = await hub.ask("all of them")
    assert {c.call.arguments["entity_id"] for c in everything.tool_calls} == {"light.living_room", "light.floor_lamp"}
    assert hub.state("light.floor_lamp") == "off"
    assert engine.requests == []


async def test_no_other_one_is_said_plainly(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    await hub.ask("turn on the kitchen light")
    other = await hub.ask("the other one")
    assert other.reply == phrase("en", "follow_up.no_other") and other.tool_calls == []


async def test_a_follow_up_past_its_window_is_not_guessed(tmp_path) -> None:
    engine = ScriptedEngine([])
    hub = TestHub(tmp_path, engine, fast_path=True)
    await hub.ask("turn on the kitchen light")
    conversation = hub.agent.conversations.get("c1")
    conversation.recent = dataclasses.replace(conversation.recent, at=conversation.recent.at - FOLLOW_UP_WINDOW_S - 1)
    late = await hub.ask("turn it off")
    assert late.reply == phrase("en", "follow_up.unknown") and late.tool_calls == []
    assert hub.state("light.kitchen") == "on" and engine.requests == []


async def test_requests_without_a_conversation_id_follow_up_for_the_same_client_only(tmp_path) -> None:
    """HA 2025.4 sends no conversation id over Wyoming: the client's last command is still "it"."""
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    await hub.ask("turn on the kitchen light", conversation_id=None, client="wyoming:10.0.0.2/None")
    stranger = await hub.ask("turn it off", conversation_id=None, client="wyoming:10.0.0.9/None")
    assert stranger.reply == phrase("en", "follow_up.unknown") and hub.state("light.kitchen") == "on"
    same = await hub.ask("turn it off", conversation_id=None, client="wyoming:10.0.0.2/None")
    assert hub.state("light.kitchen") == "off", same.reply
    assert same.conversation_id != stranger.conversation_id


async def test_a_follow_up_to_the_models_own_action(tmp_path) -> None:
    engine = ScriptedEngine([[call("turn_on", entity_id="light.desk_lamp")], text("The desk lamp is on.")])
    hub = TestHub(tmp_path, engine, fast_path=True)
    hub.store.update_state("light.desk_lamp", "off", {})
    await hub.ask("could you give me some light for reading at my desk")
    asked = len(engine.requests)
    assert hub.state("light.desk_lamp") == "on" and asked >= 1
    dimmer = await hub.ask("a little dimmer")
    assert level(hub, "light.desk_lamp") == 90 and dimmer.path == "fast_path", dimmer.reply
    assert len(engine.requests) == asked


@pytest.mark.parametrize("area", ["Bedroom", "bedroom", "Schlafzimmer"])
async def test_too_dark_in_here_brightens_the_speakers_room(tmp_path, area) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    result = await hub.ask("it's too dark in here", area=area)
    assert level(hub, "light.bedroom") == 20 and level(hub, "light.kitchen") == 0, result.reply
    assert result.reply == phrase("en", "relative.up", name="Bedroom light", value=percent(20))


async def test_too_dark_brightens_the_lights_already_on_before_switching_others_on(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    result = await hub.ask("it's too dark in the living room")
    assert [c.call.arguments for c in result.tool_calls] == [{"entity_id": "light.living_room", "brightness": 91}]
    assert hub.state("light.floor_lamp") == "off"


async def test_a_thermostat_steps_by_its_own_step_within_its_range(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    thermostat = hub.store.get("climate.living_room")
    hub.store.update_state(thermostat.entity_id, "heat", {**thermostat.attributes, "target_temp_step": 0.5})
    warmer = await hub.ask("a bit warmer in the living room")
    assert hub.store.get("climate.living_room").attributes["temperature"] == 21.5, warmer.reply
    hub.store.update_state(thermostat.entity_id, "heat", {**thermostat.attributes, "temperature": 30.0})
    hot = await hub.ask("much warmer")
    degrees = phrase("en", "unit.degrees", value=format_number(30, "en"))
    assert hot.reply == phrase("en", "relative.at_limit", name="Living room thermostat", value=degrees)
    assert hot.tool_calls == []


async def test_nothing_of_the_kind_is_said_plainly(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    hub.store.remove("media_player.living_room_speaker")
    result = await hub.ask("louder")
    assert result.reply == phrase("en", "relative.none") and result.tool_calls == []
    bedroom = await hub.ask("it's too loud in the bedroom")
    assert bedroom.reply == phrase("en", "follow_up.none_in_area", area="Bedroom")


async def test_a_follow_up_that_unlocks_still_asks_first(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    await hub.ask("lock the front door")
    asked = await hub.ask("turn it off")
    assert hub.state("lock.front_door") == "locked"
    assert asked.reply == phrase("en", "policy.confirm", action=phrase("en", "policy.verb.unlock"), name="Front door")


async def test_a_plain_command_is_still_the_fast_paths(tmp_path) -> None:
    """The follow-up templates are tried first; a whole command never matches them."""
    engine = ScriptedEngine([])
    hub = TestHub(tmp_path, engine, fast_path=True)
    for said, entity_id, state in [("turn on the kitchen light", "light.kitchen", "on"),
                                   ("turn off the kitchen light", "light.kitchen", "off"),
                                   ("open the bedroom blinds", "cover.bedroom_blinds", "open")]:
        result = await hub.ask(said)
        assert result.path == "fast_path" and hub.state(entity_id) == state, result.reply
        assert not any(c.call.name == "set_light" for c in result.tool_calls)
    assert engine.requests == []


async def test_too_dark_by_an_on_off_light_switches_it_on(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    bedroom = hub.store.get("light.bedroom")
    hub.store.update_state(bedroom.entity_id, "off", {"supported_color_modes": ["onoff"]})
    result = await hub.ask("it's too dark in the bedroom")
    assert [c.call.name for c in result.tool_calls] == ["turn_on"] and hub.state("light.bedroom") == "on"
    assert result.reply == phrase("en", "action.turned_on", name="Bedroom light")
    again = await hub.ask("brighter")  # on, and nothing to step: said plainly, no other light guessed
    assert again.tool_calls == [] and again.reply == phrase("en", "error.unsupported", name="Bedroom light")


async def test_a_short_follow_up_is_also_read_in_the_language_of_the_command_it_follows(tmp_path) -> None:
    """"apágala" alone reads as Hungarian to language identification; the command before it was
    Spanish, so Spanish is tried too."""
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    await hub.ask("Enciende la luz de la cocina", language="es")
    off = await hub.ask("apágala", language="hu")
    assert hub.state("light.kitchen") == "off" and off.language == "es", off.reply
    assert off.reply == phrase("es", "action.turned_off", name="Kitchen light")


@pytest.mark.parametrize("language,command,follow_up", [
    ("en", "turn on the desk lamp", "now turn it off"), ("en", "turn on the desk lamp", "ok turn it off"),
    ("de", "Schalte die Desk Lamp ein", "jetzt schalte sie aus"),
    ("nl", "Zet de Desk Lamp aan", "nu zet hem uit"),
])
async def test_a_word_said_before_a_follow_up_is_no_part_of_it(tmp_path, language, command, follow_up) -> None:
    """"now turn it off" is "turn it off": the stand-in never meets it."""
    engine = ScriptedEngine([])
    hub = TestHub(tmp_path, engine, fast_path=True)
    await hub.ask(command, language=language)
    assert hub.state("light.desk_lamp") == "on"
    result = await hub.ask(follow_up, language=language)
    assert hub.state("light.desk_lamp") == "off", result.reply
    assert engine.requests == []
