"""The device intents through the real fast path (hassil, HA's templates) and home tools, as HA's
handlers carry them out: the service and data each makes, which unnamed media player a command
takes (the only one; those playing; else "which one?"), and what a tool refuses."""

from __future__ import annotations

from typing import Any

import pytest

from hub.core.tools import ToolContext, ToolRegistry
from hub.core.messages import ToolCall
from hub.home.catalogue import build_home_tools
from hub.home.entities import Entity, EntityStore
from hub.home.resolve import EntityResolver
from hub.understanding.fast_path import FastPath

pytestmark = pytest.mark.timeout(120)


class Recorder:
    """A backend that records the service calls and applies nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        self.calls.append((entity.entity_id, service, data))


def entity(entity_id: str, name: str, state: str, area: str, **attributes: Any) -> Entity:
    return Entity(entity_id, name, state, attributes, area=area, source="test")


HOME = [
    entity("fan.bedroom_fan", "Bedroom Fan", "off", "Bedroom", percentage=0),
    entity("media_player.kitchen_speaker", "Kitchen Speaker", "playing", "Kitchen", volume_level=0.3),
    entity("vacuum.robo", "Robo Vacuum", "docked", "Hallway"),
    entity("lawn_mower.mowy", "Mowy", "docked", "Garden"),
    entity("valve.irrigation", "Irrigation Valve", "closed", "Garden"),
    entity("light.kitchen_light", "Kitchen Light", "off", "Kitchen", supported_color_modes=["color_temp", "hs"]),
    entity("humidifier.dehumidifier", "Dehumidifier", "off", "Bedroom", available_modes=["normal", "eco"]),
    entity("water_heater.boiler", "Boiler", "eco", "Basement", operation_list=["eco", "performance"],
           min_temp=40, max_temp=65),
]


class Home:
    def __init__(self, extra: tuple[Entity, ...] = ()) -> None:
        self.store = EntityStore()
        for e in (*HOME, *extra):
            self.store.upsert(e)
        self.backend = Recorder()
        self.store.register_backend("test", self.backend)
        resolver = EntityResolver(self.store)
        self.registry = ToolRegistry()
        for tool in build_home_tools(self.store, resolver):
            self.registry.register(tool)
        self.fast_path = FastPath(self.store, self.registry, resolver)

    async def say(self, text: str, language: str = "en"):
        self.backend.calls.clear()
        return await self.fast_path.try_handle(text, language, ToolContext("t", language=language))


@pytest.mark.parametrize("text, language, calls", [
    ("set the bedroom fan to 50%", "en", [("fan.bedroom_fan", "turn_on", {"percentage": 50})]),
    ("Règle le ventilateur de la chambre sur 50 %", "fr", [("fan.bedroom_fan", "turn_on", {"percentage": 50})]),
    ("mute", "en", [("media_player.kitchen_speaker", "volume_mute", {"is_volume_muted": True})]),
    ("unmute the kitchen speaker", "en", [("media_player.kitchen_speaker", "volume_mute", {"is_volume_muted": False})]),
    ("coupe le son", "fr", [("media_player.kitchen_speaker", "volume_mute", {"is_volume_muted": True})]),
    ("turn the volume up", "en", [("media_player.kitchen_speaker", "volume_up", {})]),
    ("mach lauter", "de", [("media_player.kitchen_speaker", "volume_up", {})]),
    ("set the volume to 40%", "en", [("media_player.kitchen_speaker", "volume_set", {"volume_level": 0.4})]),
    ("Stelle die Lautstärke auf 40 Prozent", "de", [("media_player.kitchen_speaker", "volume_set",
                                                    {"volume_level": 0.4})]),
    ("start the robo vacuum", "en", [("vacuum.robo", "start", {})]),
    ("return the robo vacuum to base", "en", [("vacuum.robo", "return_to_base", {})]),
    ("clean the kitchen", "en", [("vacuum.robo", "clean_area", {"cleaning_area_id": "Kitchen"})]),
    ("start mowing", "en", [("lawn_mower.mowy", "start_mowing", {})]),
    ("dock mowy", "en", [("lawn_mower.mowy", "dock", {})]),
    ("open the valve in the garden", "en", [("valve.irrigation", "open_valve", {})]),
    ("set the kitchen light color temperature to 3000 kelvin", "en",
     [("light.kitchen_light", "turn_on", {"color_temp_kelvin": 3000})]),
    ("Setze Kitchen Light auf 3000 Kelvin", "de", [("light.kitchen_light", "turn_on", {"color_temp_kelvin": 3000})]),
])
async def test_device_intents_make_home_assistants_service_calls(text, language, calls) -> None:
    home = Home()
    outcome = await home.say(text, language)
    assert outcome is not None, text
    assert home.backend.calls == calls
    assert outcome.reply and not any(e.entity_id in outcome.reply for e in HOME)  # a sentence, no ids


async def test_an_unnamed_media_command_takes_the_one_playing_else_asks_which_one() -> None:
    tv = entity("media_player.tv", "Living Room TV", "paused", "Living Room", volume_level=0.5)
    home = Home((tv,))
    outcome = await home.say("set the volume to 20%")
    assert home.backend.calls == [("media_player.kitchen_speaker", "volume_set", {"volume_level": 0.2})]
    outcome = await home.say("resume")
    assert outcome is not None and home.backend.calls == [("media_player.tv", "media_play", {})]
    outcome = await home.say("mute")  # muting has no state to go by: which one?
    assert outcome is not None and outcome.intent == "ambiguous" and not home.backend.calls
    assert sorted(outcome.candidates) == ["media_player.kitchen_speaker", "media_player.tv"]


async def test_the_device_tools_follow_home_assistants_handlers() -> None:
    home = Home()
    ctx = ToolContext("t", language="en")

    async def call(name: str, **args: Any):
        home.backend.calls.clear()
        return await home.registry.call(ToolCall(name, args), ctx)

    result = await call("set_humidity", entity_id="humidifier.dehumidifier", humidity=45)
    assert result.ok and home.backend.calls == [  # off: turned on first, as HA's handler does
        ("humidifier.dehumidifier", "turn_on", {}), ("humidifier.dehumidifier", "set_humidity", {"humidity": 45})]
    result = await call("set_mode", entity_id="humidifier.dehumidifier", mode="ECO")
    assert result.ok and home.backend.calls[-1] == ("humidifier.dehumidifier", "set_mode", {"mode": "eco"})
    result = await call("set_mode", entity_id="water_heater.boiler", mode="performance")
    assert result.ok and home.backend.calls == [("water_heater.boiler", "set_operation_mode",
                                                 {"operation_mode": "performance"})]
    result = await call("set_temperature", entity_id="water_heater.boiler", temperature=55)
    assert result.ok and home.backend.calls == [("water_heater.boiler", "set_temperature", {"temperature": 55.0})]
    result = await call("change_volume", entity_id="media_player.kitchen_speaker", step=-10)
    assert result.ok and home.backend.calls == [("media_player.kitchen_speaker", "volume_set", {"volume_level": 0.2})]
    for name, args in (("set_mode", {"entity_id": "water_heater.boiler", "mode": "turbo"}),
                       ("set_temperature", {"entity_id": "water_heater.boiler", "temperature": 90}),
                       ("set_fan_speed", {"entity_id": "vacuum.robo", "percentage": 10}),
                       ("clean_area", {"entity_id": "vacuum.robo", "area": "Attic"})):
        result = await call(name, **args)
        assert not result.ok and not home.backend.calls, (name, result.data)
