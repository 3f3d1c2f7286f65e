"""The speaker's room: where a request was said (hub.home.places) and what the fast path makes of
it (hub.understanding.speaker_room), with the real hassil matcher and HA's sentence data, through
the real agent."""

from __future__ import annotations

import logging

import pytest

from hub.agent.agent import Agent
from hub.agent.types import TurnRequest
from hub.backends.demo.home import load_demo_home
from hub.config import validate
from hub.core.tools import ToolContext, ToolRegistry
from hub.home.catalogue import build_home_tools
from hub.home.entities import Entity, EntityStore
from hub.home.places import Place, SpeakerPlaces, parse_satellites
from hub.home.resolve import EntityResolver
from hub.home.view import StoreHomeView
from hub.options import hub_options
from hub.settings import RuntimeSettings
from hub.understanding.fast_path import FastPath
from helpers.scripted_engine import ScriptedEngine

pytestmark = pytest.mark.timeout(120)

GROUND, FIRST = "Ground floor", "First floor"


class Home:
    """The demo home on two floors, with a name two rooms share and a second speaker upstairs."""

    def __init__(self, satellites: dict[str, str] | None = None) -> None:
        self.store = EntityStore()
        load_demo_home(self.store)
        for entity in (
            Entity("light.kitchen_ceiling", "Ceiling light", "off", area="Kitchen", source="demo"),
            Entity("light.bedroom_ceiling", "Ceiling light", "off", area="Bedroom", source="demo"),
            Entity("light.office_ceiling", "Ceiling light", "off", area="Office", source="demo"),
            Entity("media_player.office_speaker", "Office speaker", "playing", {"volume_level": 0.4},
                   area="Office", source="demo"),
            Entity("sensor.bedroom_satellite_signal", "Bedroom satellite signal", "-60", area="Bedroom",
                   source="demo", device_id="esp-bedroom-satellite"),
        ):
            self.store.upsert(entity)
        self.store.set_floor(GROUND, ["Kitchen", "Living room"], ["downstairs"])
        self.store.set_floor(FIRST, ["Bedroom", "Office"], ["upstairs"])
        self.resolver = EntityResolver(self.store)
        self.registry = ToolRegistry()
        for tool in build_home_tools(self.store, self.resolver):
            self.registry.register(tool)
        self.fast_path = FastPath(self.store, self.registry, self.resolver)
        self.places = SpeakerPlaces(self.store, self.resolver, satellites)

    async def say(self, text: str, area: str | None = None, language: str = "en"):
        place = self.places.locate(area=area, language=language) if area else None
        ctx = ToolContext("t", language=language, area=place.area if place else None,
                          floor=place.floor if place else None)
        return await self.fast_path.try_handle(text, language, ctx)

    def state(self, entity_id: str) -> str:
        return self.store.get(entity_id).state


def acted_on(outcome) -> list[str]:
    assert outcome is not None
    return [c.arguments.get("entity_id") for c in outcome.calls]


# --- where the speaker is ------------------------------------------------------------------------


def test_places_from_the_area_said_the_satellites_option_the_sources_and_the_devices() -> None:
    home = Home(satellites={"assist_satellite.hall": "Kitchen", "esp-office": "büro"})
    home.store.set_places("ha", {"9f3c": "Living room", "living_room": "Living room",
                                 "assist_satellite.den": "Bedroom"})
    locate = home.places.locate
    assert locate(area="Kitchen") == Place("Kitchen", GROUND)
    assert locate(area="Küche", language="de") == Place("Kitchen", GROUND)  # an alias
    assert locate(area="living_room") == Place("Living room", GROUND)  # HA's area id
    assert locate(satellite_id="assist_satellite.hall") == Place("Kitchen", GROUND)  # the option
    assert locate(device_id="esp-office", language="de") == Place("Office", FIRST)  # its area in German
    assert locate(device_id="9f3c") == Place("Living room", GROUND)  # HA's device registry
    assert locate(satellite_id="assist_satellite.den") == Place("Bedroom", FIRST)  # HA's entity registry
    assert locate(device_id="esp-bedroom-satellite") == Place("Bedroom", FIRST)  # an entity's device
    assert locate(satellite_id="light.kitchen") == Place("Kitchen", GROUND)  # an entity's own area
    # the area said wins; the satellite before the device
    assert locate(area="Office", device_id="9f3c") == Place("Office", FIRST)
    assert locate(satellite_id="assist_satellite.hall", device_id="9f3c") == Place("Kitchen", GROUND)
    # what names no place: no room (the turn goes on as without one)
    assert locate(device_id="unknown-device") is None
    assert locate(area="Attic") is None
    assert locate(area="x" * 300) is None
    assert locate() is None


def test_satellites_option_pairs_and_mistakes() -> None:
    assert parse_satellites("a=Kitchen, assist_satellite.b = Bedroom;c=Office\nd=Living room") == {
        "a": "Kitchen", "assist_satellite.b": "Bedroom", "c": "Office", "d": "Living room"}
    assert parse_satellites(None) == {} and parse_satellites(" ") == {}
    for bad in ("kitchen", "=Kitchen", "a="):
        with pytest.raises(ValueError, match="id=area"):
            parse_satellites(bad)


# --- what the room means -------------------------------------------------------------------------


@pytest.mark.parametrize("text, language, area, expected", [
    ("turn on the lights", "en", "Kitchen", ["light.kitchen", "light.kitchen_ceiling"]),
    ("turn on the light", "en", "Bedroom", ["light.bedroom", "light.bedroom_ceiling"]),
    ("turn on the lights in here", "en", "Office", ["light.desk_lamp", "light.office_ceiling"]),
    ("turn on the lights in this room", "en", "Bedroom", ["light.bedroom", "light.bedroom_ceiling"]),
    ("Mach das Licht an", "de", "Küche", ["light.kitchen", "light.kitchen_ceiling"]),
    ("Allume la lumière", "fr", "Kitchen", ["light.kitchen", "light.kitchen_ceiling"]),
])
async def test_a_command_without_a_place_acts_in_the_speakers_room(text, language, area, expected) -> None:
    home = Home()
    outcome = await home.say(text, area, language)
    assert sorted(acted_on(outcome)) == expected
    assert all(home.state(e) == "on" for e in expected)
    assert home.state("light.living_room") == "on" and home.state("light.floor_lamp") == "off"  # others untouched


async def test_close_the_blinds_in_here() -> None:
    home = Home()
    home.store.update_state("cover.bedroom_blinds", "open", {"current_position": 100})
    outcome = await home.say("close the blinds in here", "Bedroom")
    assert acted_on(outcome) == ["cover.bedroom_blinds"] and home.state("cover.bedroom_blinds") == "closed"


async def test_without_a_room_nothing_is_guessed() -> None:
    home = Home()
    assert await home.say("turn on the lights") is None  # the model's: no room, no place said
    assert all(e.state == "off" for e in home.store.all() if e.entity_id.endswith("_ceiling"))


async def test_a_place_said_outright_beats_the_room() -> None:
    home = Home()
    outcome = await home.say("turn on the kitchen light", "Bedroom")
    assert acted_on(outcome) == ["light.kitchen"]


async def test_a_shared_name_is_the_one_in_the_room_then_on_its_floor() -> None:
    home = Home()
    assert acted_on(await home.say("turn on the ceiling light", "Kitchen")) == ["light.kitchen_ceiling"]
    assert acted_on(await home.say("turn on the ceiling light", "Office")) == ["light.office_ceiling"]
    # the living room has none: the one on its floor (the kitchen's), not the two upstairs
    assert acted_on(await home.say("turn off the ceiling light", "Living room")) == ["light.kitchen_ceiling"]
    assert home.state("light.bedroom_ceiling") == "off"


async def test_a_shared_name_without_a_decisive_room_still_asks() -> None:
    home = Home()
    no_room = await home.say("turn on the ceiling light")
    assert no_room.intent == "ambiguous" and len(no_room.candidates) == 3 and not no_room.calls
    # on the landing upstairs: none in the room, two on its floor: still "which one?"
    home.store.upsert(Entity("light.landing", "Landing light", "off", area="Landing", source="demo"))
    home.store.set_floor(FIRST, ["Bedroom", "Office", "Landing"])
    asked = await home.say("turn on the ceiling light", "Landing")
    assert asked.intent == "ambiguous" and len(asked.candidates) == 3 and not asked.calls


async def test_a_nameless_media_command_goes_to_the_room_then_its_floor() -> None:
    home = Home()
    paused = await home.say("pause", "Office")
    assert acted_on(paused) == ["media_player.office_speaker"]
    assert home.state("media_player.office_speaker") == "paused"
    # the bedroom has no player: the one on its floor, never the living room's downstairs
    resumed = await home.say("resume", "Bedroom")
    assert acted_on(resumed) == ["media_player.office_speaker"]
    volume = await home.say("set the volume to 20", "Living room")
    assert acted_on(volume) == ["media_player.living_room_speaker"]
    assert home.store.get("media_player.living_room_speaker").attributes["volume_level"] == pytest.approx(0.2)


async def test_a_room_that_cannot_carry_it_out_reads_as_without_one() -> None:
    home = Home()
    # no thermostat in the kitchen: the home's one thermostat, as without a room
    outcome = await home.say("set the temperature to 20 degrees", "Kitchen")
    assert acted_on(outcome) == ["climate.living_room"]
    assert home.store.get("climate.living_room").attributes["temperature"] == 20


# --- through the agent ---------------------------------------------------------------------------


def agent_for(home: Home) -> Agent:
    options = hub_options(validate({}))
    return Agent(engine=ScriptedEngine([]), registry=home.registry, settings=RuntimeSettings(options.settings),
                 options=options.agent, home=StoreHomeView(home.store, home.resolver), fast_path=home.fast_path,
                 places=home.places)


async def test_the_agent_acts_in_the_room_of_the_satellite_device_or_area(caplog) -> None:
    home = Home(satellites={"assist_satellite.kitchen": "Kitchen"})
    agent = agent_for(home)
    by_satellite = await agent.ask(TurnRequest("turn on the lights", language="en", satellite_id="assist_satellite.kitchen"))
    assert by_satellite.path == "fast_path", by_satellite
    assert sorted(c.call.arguments["entity_id"] for c in by_satellite.tool_calls) == [
        "light.kitchen", "light.kitchen_ceiling"]
    by_device = await agent.ask(TurnRequest("close the blinds in here", language="en", device_id="esp-bedroom-satellite"))
    assert [c.call.arguments["entity_id"] for c in by_device.tool_calls] == ["cover.bedroom_blinds"]
    by_area = await agent.ask(TurnRequest("turn on the ceiling light", language="en", area="Office"))
    assert [c.call.arguments["entity_id"] for c in by_area.tool_calls] == ["light.office_ceiling"]
    with caplog.at_level(logging.INFO, logger="hub.home.places"):
        unknown = await agent.ask(TurnRequest("turn on the ceiling light", language="en", device_id="nowhere"))
    assert unknown.path == "fast_path" and not unknown.tool_calls  # "which one?" as without a room
    assert "no area known" in caplog.text
