"""The safety policy through the real tools, agent and fast path on the demo home.

The model is a scripted engine here (it plays "the model asked to unlock"); what is under test is
the hub: nothing sensitive happens without a yes in the same conversation within the window.
"""

from __future__ import annotations

import dataclasses

import logging

import pytest

from hub.home.entities import Entity
from hub.home.policy import CONFIRMATION_REQUIRED, ActionPolicy, confirm_verb
from hub.core.tools import ToolContext
from hub.core.messages import ToolCall
from hub.llm.types import GenerationRequest
from hub.locales import phrase

from async_policy.async_helpers import FakeClock, TestHub, prompt_text
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(60)

UNLOCK = [call("turn_off", entity_id="lock.front_door")]  # HA's HassTurnOff on a lock unlocks it
ASK = phrase("en", "policy.confirm", action="unlock", name="Front door")
UNLOCKED = phrase("en", "action.reported", name="Front door", state=phrase("en", "state.unlocked"))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


async def test_unlock_without_confirmation_does_nothing_and_asks(tmp_path, clock) -> None:
    engine = ScriptedEngine([UNLOCK])
    hub = TestHub(tmp_path, engine, policy_clock=clock)
    result = await hub.ask("unlock the front door")
    assert result.ok and result.reply == ASK
    assert hub.state("lock.front_door") == "locked"
    assert hub.calls_to("lock.front_door") == []
    [finished] = result.tool_calls
    assert not finished.ok and finished.data["error"] == CONFIRMATION_REQUIRED
    assert len(engine.requests) == 1  # the model got no second round to do anything else
    assert hub.agent.conversations.get("c1").messages[-1].content == ASK


async def test_yes_in_the_same_conversation_within_the_window_unlocks_without_the_model(tmp_path, clock) -> None:
    engine = ScriptedEngine([UNLOCK])  # one model round only: "yes" must not reach the model
    hub = TestHub(tmp_path, engine, policy_clock=clock)
    await hub.ask("unlock the front door")
    clock.advance(29)
    result = await hub.ask("Yes!")
    assert result.ok and result.path == "confirmation"
    assert result.reply == UNLOCKED
    assert hub.state("lock.front_door") == "unlocked"
    assert hub.calls_to("lock.front_door") == [("lock.front_door", "unlock", {})]
    assert [(f.call.name, f.ok) for f in result.tool_calls] == [("turn_off", True)]
    # one confirmation, one action: a second yes does nothing more
    engine._rounds.append(text("Okay."))
    again = await hub.ask("yes")
    assert again.path == "model" and hub.calls_to("lock.front_door") == [("lock.front_door", "unlock", {})]


async def test_yes_after_the_window_does_not_unlock(tmp_path, clock) -> None:
    def model_sees_plain_yes(request: GenerationRequest):
        assert request.messages[-1].content.endswith("yes")
        return text("Sorry, could you say that again?")

    hub = TestHub(tmp_path, ScriptedEngine([UNLOCK, model_sees_plain_yes]), policy_clock=clock)
    await hub.ask("unlock the front door")
    clock.advance(31)
    result = await hub.ask("yes")
    assert result.path == "model"
    assert hub.state("lock.front_door") == "locked" and hub.calls_to("lock.front_door") == []


async def test_yes_in_another_conversation_does_not_unlock(tmp_path, clock) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([UNLOCK, text("Yes to what?")]), policy_clock=clock)
    await hub.ask("unlock the front door", conversation_id="kitchen")
    result = await hub.ask("yes", conversation_id="bedroom")
    assert result.path == "model"
    assert hub.state("lock.front_door") == "locked"
    # and the held action is still there for its own conversation
    confirmed = await hub.ask("yes", conversation_id="kitchen")
    assert confirmed.path == "confirmation" and hub.state("lock.front_door") == "unlocked"


async def test_held_actions_of_silent_conversations_are_forgotten(tmp_path, clock) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), policy_clock=clock)
    await hub.registry.call(ToolCall("turn_off", {"entity_id": "lock.front_door"}), ToolContext("gone"))
    clock.advance(31)
    await hub.registry.call(ToolCall("turn_off", {"entity_id": "lock.front_door"}), ToolContext("here"))
    assert not hub.policy.has_pending("gone") and hub.policy.has_pending("here")


async def test_a_clear_no_cancels_and_anything_else_drops_the_action(tmp_path, clock) -> None:
    def other_request(request: GenerationRequest):
        assert "what time is it" in prompt_text(request)
        return text("It is eight.")

    hub = TestHub(tmp_path, ScriptedEngine([UNLOCK, UNLOCK, other_request, text("Hm?")]), policy_clock=clock)
    await hub.ask("unlock the front door")
    cancelled = await hub.ask("No.")
    assert cancelled.reply == phrase("en", "policy.cancelled") and cancelled.path == "confirmation"

    await hub.ask("unlock the front door")
    moved_on = await hub.ask("what time is it")  # not a yes or no: the turn proceeds normally
    assert moved_on.reply == "It is eight."
    late_yes = await hub.ask("yes")  # the held action was dropped by the other reply
    assert late_yes.path == "model"
    assert hub.calls_to("lock.front_door") == [] and hub.state("lock.front_door") == "locked"


async def test_confirmation_in_german(tmp_path, clock) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([UNLOCK]), policy_clock=clock)
    hub.store.upsert(dataclasses.replace(hub.store.get("lock.front_door"), aliases=("Haustür",)))  # the name said
    asked = await hub.ask("schließ die Haustür auf", language="de")
    assert asked.reply == phrase("de", "policy.confirm", action="aufschließen", name="Front door")
    result = await hub.ask("Ja, bitte", language="de")
    assert result.path == "confirmation" and hub.state("lock.front_door") == "unlocked"
    assert result.reply == phrase("de", "action.reported", name="Front door", state=phrase("de", "state.unlocked"))


async def test_fast_path_unlock_asks_and_yes_unlocks(tmp_path, clock) -> None:
    """hassil matches "unlock the front door" itself: the fast path goes through the same policy."""
    hub = TestHub(tmp_path, ScriptedEngine([]), policy_clock=clock, fast_path=True)
    asked = await hub.ask("unlock the front door")
    assert asked.path == "fast_path" and asked.reply == ASK
    assert hub.calls_to("lock.front_door") == []
    result = await hub.ask("yes")
    assert result.path == "confirmation" and result.reply == UNLOCKED
    assert hub.state("lock.front_door") == "unlocked"
    # locking is the safe direction: no question asked
    locked = await hub.ask("lock the front door")
    assert locked.path == "fast_path" and hub.state("lock.front_door") == "locked"


async def test_disallowed_domain_is_refused_with_a_spoken_reason(tmp_path) -> None:
    def insists(request: GenerationRequest):  # the model sees the refusal and tries again
        assert '"error": "not_allowed"' in request.messages[-1].content
        return [call("turn_on", entity_id="switch.coffee_machine")]

    engine = ScriptedEngine([[call("turn_on", entity_id="switch.coffee_machine")], insists])
    hub = TestHub(tmp_path, engine, allowed_domains="light,cover")
    result = await hub.ask("start the coffee machine")
    assert result.reply == phrase("en", "policy.not_allowed", name="Coffee machine")
    assert [f.data["error"] for f in result.tool_calls] == ["not_allowed", "not_allowed"]
    assert hub.state("switch.coffee_machine") == "off" and hub.calls_to("switch.coffee_machine") == []


async def test_read_only_entities_and_allowed_services(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), read_only_entities="light.kitchen, switch.*",
                  allowed_services="light.turn_on,cover.*")
    ctx = ToolContext("c1")
    refused = await hub.registry.call(ToolCall("turn_on", {"entity_id": "light.kitchen"}), ctx)
    assert refused.data["error"] == "not_allowed"
    refused = await hub.registry.call(ToolCall("turn_on", {"entity_id": "switch.coffee_machine"}), ctx)
    assert refused.data["error"] == "not_allowed"
    refused = await hub.registry.call(ToolCall("turn_off", {"entity_id": "light.living_room"}), ctx)
    assert refused.data["error"] == "not_allowed"  # light.turn_off is not listed
    allowed = await hub.registry.call(ToolCall("turn_on", {"entity_id": "light.bedroom"}), ctx)
    assert allowed.ok and hub.state("light.bedroom") == "on"
    reading = await hub.registry.call(ToolCall("get_state", {"entity_id": "light.kitchen"}), ctx)
    assert reading.ok  # reading a read-only entity is fine
    assert [c[0] for c in hub.backend.calls] == ["light.bedroom"]


async def test_rate_limit_per_entity(tmp_path, clock) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), policy_clock=clock, rate_limit_per_minute=2)
    ctx = ToolContext("c1")
    for tool in ("turn_on", "turn_off"):
        assert (await hub.registry.call(ToolCall(tool, {"entity_id": "light.kitchen"}), ctx)).ok
    limited = await hub.registry.call(ToolCall("turn_on", {"entity_id": "light.kitchen"}), ctx)
    assert limited.data["error"] == "rate_limited"
    assert limited.data["message"] == phrase("en", "policy.rate_limited", name="Kitchen light")
    assert hub.state("light.kitchen") == "off" and len(hub.calls_to("light.kitchen")) == 2
    other = await hub.registry.call(ToolCall("turn_on", {"entity_id": "light.bedroom"}), ctx)
    assert other.ok  # per entity
    clock.advance(61)
    assert (await hub.registry.call(ToolCall("turn_on", {"entity_id": "light.kitchen"}), ctx)).ok


async def test_every_action_is_logged_with_conversation_source_and_outcome(tmp_path, clock, caplog) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), policy_clock=clock)
    ctx = ToolContext("conv-42", source="wyoming")
    caplog.set_level(logging.INFO, logger="hub.actions")
    await hub.registry.call(ToolCall("turn_on", {"entity_id": "light.kitchen"}), ctx)
    hub.backend.online = False
    await hub.registry.call(ToolCall("turn_off", {"entity_id": "light.kitchen"}), ctx)
    await hub.registry.call(ToolCall("turn_off", {"entity_id": "lock.front_door"}), ctx)
    lines = [r.getMessage() for r in caplog.records if r.name == "hub.actions"]
    assert len(lines) == 3, lines
    assert all("conversation=conv-42 source=wyoming" in line for line in lines)
    assert lines[0].startswith("action light.turn_on light.kitchen") and lines[0].endswith(": ok")
    assert "failed: the demo home is offline" in lines[1]
    assert lines[2].endswith("held: asked for confirmation")


def test_which_actions_are_sensitive() -> None:
    policy = ActionPolicy(confirm_entities="switch.heater_*")
    def entity(entity_id: str, device_class: str | None = None) -> Entity:
        return Entity(entity_id, entity_id, device_class=device_class)
    assert policy.needs_confirmation(entity("lock.door"), "unlock")
    assert policy.needs_confirmation(entity("lock.door"), "open")
    assert not policy.needs_confirmation(entity("lock.door"), "lock")
    assert policy.needs_confirmation(entity("alarm_control_panel.home"), "alarm_disarm")
    assert not policy.needs_confirmation(entity("alarm_control_panel.home"), "alarm_arm_away")
    for device_class in ("garage", "gate", "door"):
        assert policy.needs_confirmation(entity("cover.x", device_class), "open_cover")
        assert policy.needs_confirmation(entity("cover.x", device_class), "close_cover")
    assert not policy.needs_confirmation(entity("cover.blinds", "blind"), "open_cover")
    assert policy.needs_confirmation(entity("switch.heater_bath"), "turn_on")
    assert not policy.needs_confirmation(entity("switch.kettle"), "turn_on")
    # alarm panels are sensitive but not in the default allowed domains
    assert not policy.allows(entity("alarm_control_panel.home"), "alarm_disarm")
    assert confirm_verb("unlock", "fr") == "déverrouiller" and confirm_verb("open_cover", "xx") == "open"


async def test_garage_cover_needs_a_yes_blinds_do_not(tmp_path, clock) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), policy_clock=clock)
    hub.store.upsert(Entity("cover.garage", "Garage door", "closed", {"current_position": 0},
                            device_class="garage", source="demo"))
    ctx = ToolContext("c1")
    held = await hub.registry.call(ToolCall("turn_on", {"entity_id": "cover.garage"}), ctx)
    assert held.data["error"] == CONFIRMATION_REQUIRED
    assert held.data["message"] == phrase("en", "policy.confirm", action="open", name="Garage door")
    assert hub.state("cover.garage") == "closed"
    blinds = await hub.registry.call(ToolCall("turn_on", {"entity_id": "cover.bedroom_blinds"}), ctx)
    assert blinds.ok and hub.state("cover.bedroom_blinds") == "open"


async def test_without_a_policy_locks_stay_refused(tmp_path) -> None:
    """Tools built without a policy (older callers) keep the blanket refusal for locks."""
    from hub.home.catalogue import build_home_tools
    from hub.core.tools import ToolRegistry

    hub = TestHub(tmp_path, ScriptedEngine([]))
    registry = ToolRegistry()
    for tool in build_home_tools(hub.store, hub.resolver):
        registry.register(tool)
    refused = await registry.call(ToolCall("turn_off", {"entity_id": "lock.front_door"}), ToolContext("c1"))
    assert refused.data["error"] == "not_allowed" and hub.state("lock.front_door") == "locked"
