"""The claim check of issue 16 point 3, with a scripted model on the demo home: a reply that
says something was done needs a successful action in that turn; a look at a state is no action;
what an action did is told from its results, not in the model's words."""

from __future__ import annotations

import pytest

from hub.locales import phrase

from async_policy.async_helpers import FakeClock, TestHub
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(60)


def hub_for(tmp_path, rounds) -> TestHub:
    return TestHub(tmp_path, ScriptedEngine(rounds), policy_clock=FakeClock(), model_home_control=True)


@pytest.mark.parametrize("language", ["en", "de", "es"])
async def test_a_look_at_a_state_backs_no_claim(tmp_path, language) -> None:
    hub = hub_for(tmp_path, [[call("get_state", entity_id="light.kitchen")],
                             text("I've turned on the kitchen light.")])
    result = await hub.ask("Make the kitchen bright", language=language)
    assert [f.call.name for f in result.tool_calls] == ["get_state"] and result.tool_calls[0].ok
    assert result.reply == phrase(language, "action.nothing_done")
    assert hub.state("light.kitchen") == "off" and hub.backend.calls == []


async def test_done_is_not_said_while_an_action_waits_for_a_yes(tmp_path) -> None:
    hub = hub_for(tmp_path, [[call("turn_off", entity_id="lock.front_door")], text("Done.")])
    result = await hub.ask("unlock the front door")
    assert "Done" not in result.reply and result.reply.endswith("?"), result.reply
    assert hub.state("lock.front_door") == "locked" and hub.backend.calls == []


async def test_what_was_done_is_told_from_the_results_not_the_models_words(tmp_path) -> None:
    hub = hub_for(tmp_path, [[*text("I've turned on the kitchen light and the bedroom light."),
                              call("turn_on", entity_id="light.kitchen")]])
    result = await hub.ask("Turn on the kitchen light")
    assert result.reply == phrase("en", "action.turned_on", name="Kitchen light"), result.reply
    assert hub.state("light.bedroom") == "off" and [c[0] for c in hub.backend.calls] == ["light.kitchen"]


async def test_a_failed_action_is_said_and_no_claim_of_the_model_stays(tmp_path) -> None:
    hub = hub_for(tmp_path, [[call("set_temperature", entity_id="climate.living_room", temperature=60)],
                             [call("set_temperature", entity_id="climate.living_room", temperature=60)],
                             text("Done, it is 60 degrees now.")])
    result = await hub.ask("Set the thermostat to 60 degrees")
    assert result.reply == phrase("en", "error.invalid_value", name="Living room thermostat"), result.reply
    assert hub.store.get("climate.living_room").attributes["temperature"] == 21.0
