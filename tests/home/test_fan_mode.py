"""HassClimateSetFanMode (issue #27): a thermostat's fan mode through the fast path and the real
agent, with HA's sentence data (home-assistant-intents 2026.12.1 has it in English and German,
not in French): named, by area, in the speaker's room, and with no place the home's one
thermostat. A mode the device does not list is refused in the user's language; the MQTT side is
tests/mqtt/test_fan_mode_on_mqtt.py."""

from __future__ import annotations

import pytest

from hub.agent.types import TurnRequest
from hub.core.messages import ToolCall
from hub.core.tools import ToolContext
from hub.home.entities import Entity
from hub.locales import phrase
from home.test_speaker_room import Home, acted_on, agent_for

pytestmark = pytest.mark.timeout(120)
THERMOSTAT = "climate.living_room"


@pytest.mark.parametrize("text, language, area, mode", [
    ("set the fan mode to low", "en", None, "low"),  # no place: the home's one thermostat
    ("set the living room fan mode to high", "en", None, "high"),
    ("set the fan mode in the living room to low", "en", None, "low"),
    ("set the fan mode to high", "en", "Living room", "high"),  # the speaker's room
    ("put the living room thermostat fan on low", "en", None, "low"),
    ("Setze den Lüftermodus im Wohnzimmer auf hoch", "de", None, "high"),
    ("Lüftermodus auf gering", "de", "Wohnzimmer", "low"),
])
async def test_the_fan_mode_is_set_through_the_agent(text, language, area, mode) -> None:
    home = Home()
    result = await agent_for(home).ask(TurnRequest(text, language=language, area=area))
    assert result.path == "fast_path", result
    assert [(c.call.name, c.call.arguments) for c in result.tool_calls] == [
        ("set_fan_mode", {"entity_id": THERMOSTAT, "fan_mode": mode})]
    assert home.store.get(THERMOSTAT).attributes["fan_mode"] == mode
    assert result.reply == phrase(language, "action.set_fan_mode", name="Living room thermostat", mode=mode)


async def test_a_mode_the_thermostat_does_not_list_is_refused() -> None:
    home = Home()
    # the fast path leaves a refused mode to the model (it may know the device's word for it)
    assert await home.say("set the fan mode to medium") is None  # it lists auto, low, high
    refused = await home.registry.call(ToolCall("set_fan_mode", {"entity_id": THERMOSTAT, "fan_mode": "medium"}),
                                       ToolContext("t", language="de"))
    assert not refused.ok and refused.data["error"] == "invalid_arguments"
    assert refused.data["message"] == phrase("de", "error.invalid_value", name="Living room thermostat")
    assert "auto, low, high" in refused.data["detail"]
    assert home.store.get(THERMOSTAT).attributes["fan_mode"] == "auto"


async def test_several_thermostats_and_no_place_are_the_models_the_room_decides() -> None:
    home = Home()
    home.store.upsert(Entity("climate.office", "Office heater", "heat", {"fan_modes": ["auto", "low"]},
                             area="Office", source="demo"))
    # as Home Assistant's template: no place and no room says which thermostat; the model may ask
    assert await home.say("set the fan mode to low") is None
    in_office = await home.say("set the fan mode to low", "Office")
    assert acted_on(in_office) == ["climate.office"]
    assert home.store.get(THERMOSTAT).attributes["fan_mode"] == "auto"
