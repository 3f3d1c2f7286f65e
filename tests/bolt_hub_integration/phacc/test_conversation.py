"""The conversation agent through HA's own `async_converse`: what each turn tells the hub, what
HA gets back (the reply, the conversation going on, the intent response, the chat log), timers on
a satellite, and a hub that is down."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.components import conversation
from homeassistant.components.conversation.chat_log import DATA_CHAT_LOGS
from homeassistant.components.intent import TimerEventType, async_register_timer_handler
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import (
    area_registry as ar, device_registry as dr, entity_registry as er, floor_registry as fr, intent,
)

from custom_components.bolt_hub.const import CONF_SATELLITE_TIMERS

from .conftest import agent_id, speech
from .fake_hub import FakeHub, result, turned_on


async def converse(hass: HomeAssistant, entry: MockConfigEntry, text: str, conversation_id: str | None = None,
                   **fields: Any) -> conversation.ConversationResult:
    return await conversation.async_converse(hass, text, conversation_id, Context(),
                                             agent_id=agent_id(hass, entry), **{"language": "en", **fields})


def kitchen_satellite(hass: HomeAssistant) -> dr.DeviceEntry:
    """A voice satellite in the Kitchen, on the Ground floor, with its assist_satellite entity."""
    owner = MockConfigEntry(domain="esphome_test")
    owner.add_to_hass(hass)
    floor = fr.async_get(hass).async_create("Ground floor")
    area = ar.async_get(hass).async_create("Kitchen", floor_id=floor.floor_id)
    devices = dr.async_get(hass)
    device = devices.async_get_or_create(config_entry_id=owner.entry_id, identifiers={("esphome_test", "sat")},
                                         name="Kitchen satellite")
    devices.async_update_device(device.id, area_id=area.id)
    er.async_get(hass).async_get_or_create("assist_satellite", "esphome_test", "sat", device_id=device.id,
                                           suggested_object_id="kitchen_satellite")
    return device


async def test_a_turn_tells_the_hub_who_speaks_where(hass: HomeAssistant, hub: FakeHub,
                                                     entry: MockConfigEntry) -> None:
    device = kitchen_satellite(hass)
    first = await converse(hass, entry, "turn on the lights", device_id=device.id, language="de-DE",
                           extra_system_prompt="The user just came home.")
    assert hub.asked[-1] == {
        "text": "turn on the lights", "conversation_id": first.conversation_id, "language": "de-DE",
        "device_id": device.id, "satellite_id": "assist_satellite.kitchen_satellite", "area": "Kitchen",
        "floor": "Ground floor", "extra_system_prompt": "The user just came home."}
    await converse(hass, entry, "and the hallway", first.conversation_id)
    assert hub.asked[-1]["conversation_id"] == first.conversation_id
    assert hub.asked[-1]["extra_system_prompt"] == "The user just came home.", "the conversation keeps it"
    assert "device_id" not in hub.asked[-1] and "area" not in hub.asked[-1]


async def test_a_reply_that_waits_for_an_answer_keeps_the_satellite_listening(hass: HomeAssistant, hub: FakeHub,
                                                                              entry: MockConfigEntry) -> None:
    hub.next = result("Do you really want me to unlock Front door?", awaiting="confirmation")
    asked = await converse(hass, entry, "unlock the front door")
    assert asked.continue_conversation and speech(asked) == "Do you really want me to unlock Front door?"
    hub.next = result("Front door is now unlocked.", path="confirmation", intent="confirmed")
    done = await converse(hass, entry, "yes", asked.conversation_id)
    assert not done.continue_conversation and done.conversation_id == asked.conversation_id
    assert [a["conversation_id"] for a in hub.asked] == [asked.conversation_id] * 2


@pytest.mark.parametrize("answer,response_type,error_code", [
    (result(intent="HassTurnOn", tool_calls=[turned_on("light.kitchen", "Kitchen light")]), "action_done", None),
    (result("Sorry, I couldn't find fridge.", intent="not_found"), "error", "no_valid_targets"),
    (result("I didn't understand that command.", intent="not_understood", path="resolution"), "error",
     "no_intent_match"),
    (result("Yes. Kitchen light is on.", intent="HassGetState"), "query_answer", None),
    (result("Motion sensor's battery is at 55 percent.", intent="HubDeviceReading"), "query_answer", None),
    (result("There is no weather service in this home.", intent="HubMissing"), "error", "no_valid_targets"),
    (result("Sorry, I couldn't reach the device.", ok=False, error="backend_unavailable", tool_calls=[
        {"id": "1", "name": "turn_on", "arguments": {"entity_id": "light.kitchen"}, "ok": False,
         "result": {"error": "backend_unavailable"}, "changed_entities": []}]), "error", "failed_to_handle"),
    (result("The model isn't available right now.", ok=False, error="model"), "error", "unknown"),
])
async def test_the_hubs_result_is_a_real_intent_response(hass: HomeAssistant, hub: FakeHub, entry: MockConfigEntry,
                                                          answer, response_type, error_code) -> None:
    hass.states.async_set("light.kitchen", "on", {"friendly_name": "Kitchen light"})
    hub.next = answer
    response = (await converse(hass, entry, "something")).response
    assert response.response_type.value == response_type
    assert (response.error_code.value if response.error_code else None) == error_code
    assert response.speech["plain"]["speech"] == answer["reply"]
    if response_type == "action_done":
        assert [(t.name, t.id, t.type) for t in response.success_results] == [
            ("Kitchen light", "light.kitchen", intent.IntentResponseTargetType.ENTITY)]
        assert response.intent_targets == response.success_results and response.failed_results == []


async def test_the_hubs_tool_calls_and_results_are_in_the_chat_log(hass: HomeAssistant, hub: FakeHub,
                                                                   entry: MockConfigEntry) -> None:
    hub.next = result(tool_calls=[turned_on("light.kitchen", "Kitchen light")])
    done = await converse(hass, entry, "turn on the kitchen light")
    content = hass.data[DATA_CHAT_LOGS][done.conversation_id].content
    assert [c.role for c in content] == ["system", "user", "assistant", "tool_result", "assistant"]
    call, outcome, reply = content[2:]
    [tool_input] = call.tool_calls
    assert (tool_input.tool_name, tool_input.tool_args, tool_input.id) == (
        "turn_on", {"entity_id": "light.kitchen"}, "fast_path_0")
    assert outcome.tool_call_id == "fast_path_0" and outcome.tool_result["state"] == "on"
    assert reply.content == "Turned on Kitchen light." and reply.agent_id == agent_id(hass, entry)


async def test_a_hub_that_is_down_is_a_spoken_error_and_the_next_turn_works_once_it_is_back(
        hass: HomeAssistant, hub: FakeHub, entry: MockConfigEntry) -> None:
    port = int(hub.url.rsplit(":", 1)[1])
    first = await converse(hass, entry, "turn on the kitchen light")
    await hub.stop()
    down = await converse(hass, entry, "schalte das Licht aus", first.conversation_id, language="de")
    assert down.response.response_type is intent.IntentResponseType.ERROR
    assert speech(down) == "Ich kann Bolt Hub gerade nicht erreichen. Bitte versuche es gleich noch einmal."
    english = await converse(hass, entry, "turn off the light", first.conversation_id, language="en-GB")
    assert speech(english) == "I can't reach Bolt Hub right now. Please try again in a moment."
    japanese = await converse(hass, entry, "電気を消して", first.conversation_id, language="ja")
    assert speech(japanese) == "今は Bolt Hub に接続できません。少し待ってからもう一度お試しください。"
    await hub.start(port)
    back = await converse(hass, entry, "turn off the light", first.conversation_id)
    assert back.response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(back) == "Turned on Kitchen light." and back.conversation_id == first.conversation_id


async def test_a_refused_token_is_said_and_asks_for_a_new_one(hass: HomeAssistant, hub: FakeHub,
                                                              entry: MockConfigEntry) -> None:
    hub.token = "rotated"
    refused = await converse(hass, entry, "turn on the kitchen light")
    assert speech(refused).startswith("Bolt Hub refused Home Assistant's token")
    await hass.async_block_till_done()
    assert [f["context"]["source"] for f in hass.config_entries.flow.async_progress_by_handler("bolt_hub")] == [
        "reauth"]


class TimerLog:
    """A satellite's timer handler (an ESPHome voice satellite registers one for its device)."""

    def __init__(self) -> None:
        self.events: list[tuple[TimerEventType, Any]] = []

    def __call__(self, event_type: TimerEventType, timer: Any) -> None:
        self.events.append((event_type, timer))


async def test_a_timer_said_to_a_satellite_that_shows_timers_is_has_own(hass: HomeAssistant, hub: FakeHub,
                                                                        entry: MockConfigEntry) -> None:
    device = kitchen_satellite(hass)
    timers = TimerLog()
    unregister = async_register_timer_handler(hass, device.id, timers)
    done = await converse(hass, entry, "set a timer for 5 minutes", device_id=device.id)
    assert [(kind, timer.device_id, timer.seconds) for kind, timer in timers.events] == [
        (TimerEventType.STARTED, device.id, 300)]
    assert hub.asked == [], "HA's own timer: the hub is not asked"
    assert done.response.response_type is intent.IntentResponseType.ACTION_DONE and speech(done)
    cancelled = await converse(hass, entry, "cancel the timer", device_id=device.id)
    assert timers.events[-1][0] is TimerEventType.CANCELLED and speech(cancelled)
    # anything else said to the satellite goes to the hub
    await converse(hass, entry, "turn on the lights", device_id=device.id)
    assert [a["text"] for a in hub.asked] == ["turn on the lights"]
    unregister()


async def test_timers_elsewhere_are_the_hubs(hass: HomeAssistant, hub: FakeHub, entry: MockConfigEntry) -> None:
    hub.next = result("Timer set for 5 minutes.", intent="HassStartTimer")
    await converse(hass, entry, "set a timer for 5 minutes")  # no device
    device = kitchen_satellite(hass)
    await converse(hass, entry, "set a timer for 5 minutes", device_id=device.id)  # no timer handler
    assert [a["text"] for a in hub.asked] == ["set a timer for 5 minutes"] * 2
    timers = TimerLog()
    async_register_timer_handler(hass, device.id, timers)
    hass.config_entries.async_update_entry(entry, options={CONF_SATELLITE_TIMERS: False})
    await hass.async_block_till_done()
    await converse(hass, entry, "set a timer for 5 minutes", device_id=device.id)
    assert len(hub.asked) == 3 and timers.events == [], "with the option off the hub keeps every timer"
