"""Names as people say them (issue #27 point 4), through the real agent and fast path: a name with
its area before or after it, a misheard name (two near fits ask, never one picked), a command's
words never taken for a name, filler words and "then", the one device of a kind, and a device's
other entities answering for it."""

from __future__ import annotations

import pytest

from hub.agent.types import TurnRequest
from hub.home.entities import Entity
from hub.locales import phrase
from tests.understanding.harness import SOURCE, Rig, SampleHome

pytestmark = pytest.mark.timeout(300)


def _entity(entity_id: str, name: str, area: str, state: str = "off", device_class: str | None = None,
            device_id: str | None = None, **attributes: object) -> Entity:
    return Entity(entity_id, name, state, dict(attributes), area=area, device_class=device_class,
                  source=SOURCE, device_id=device_id)


def _home(*extra: Entity) -> SampleHome:
    entities = (
        _entity("cover.smart_curtain", "Smart Curtain", "Living Room", "closed", "curtain", current_position=0),
        _entity("light.living_room_lamp", "Living Room Lamp", "Living Room"),
        _entity("light.kitchen_light", "Kitchen Light", "Kitchen"),
        _entity("switch.coffee_machine", "Coffee Machine", "Kitchen"),
        _entity("light.desk_lamp", "Desk Lamp", "Office"),
        _entity("fan.bedroom_fan", "Bedroom Fan", "Bedroom"),
        _entity("vacuum.robbie", "Robbie", "Hallway", "docked"),
        _entity("binary_sensor.hallway_motion", "Hallway Motion Sensor", "Hallway", "off", "motion", "motion1"),
        _entity("sensor.hallway_motion_battery", "Hallway Motion Sensor Battery", "Hallway", "42", "battery",
                "motion1", unit_of_measurement="%"),
        _entity("media_player.living_room_speaker", "Living Room Speaker", "Living Room", "playing", "speaker",
                "speaker1"),
        _entity("sensor.living_room_speaker_battery", "Living Room Speaker Battery", "Living Room", "80",
                "battery", "speaker1", unit_of_measurement="%"),
        *extra,
    )
    areas = tuple(dict.fromkeys(e.area for e in entities if e.area))
    return SampleHome("en", entities, areas, (), {})


async def _ask(rig: Rig, text: str, language: str = "en"):
    rig.backend.calls.clear()
    result = await rig.agent.ask(TurnRequest(text, language=language, source="rest", client=SOURCE))
    return result, [(entity_id, service) for entity_id, service, _ in rig.backend.calls]


@pytest.mark.parametrize("language, text", [
    ("en", "open the living room smart curtain"),
    ("en", "turn on the living room smart curtain"),
    ("en", "open the smart curtain in the living room"),
    ("de", "Öffne den Wohnzimmer Smart Curtain"),
    ("de", "Öffne Smart Curtain im Wohnzimmer"),
    ("fr", "ouvre le Smart Curtain du salon"),
    ("es", "abre el Smart Curtain del salón"),
    ("nl", "open de woonkamer Smart Curtain"),
    ("it", "apri lo Smart Curtain del soggiorno"),
    ("pl", "otwórz Smart Curtain w salonie"),
])
async def test_a_name_with_its_area_before_or_after_it(language: str, text: str) -> None:
    async with Rig(_home()) as rig:
        result, acted = await _ask(rig, text, language)
    assert acted == [("cover.smart_curtain", "open_cover")], (text, result.reply)


@pytest.mark.parametrize("text, entity_id, service", [
    ("open the smart curtian", "cover.smart_curtain", "open_cover"),
    ("turn on the kitchen ligth", "light.kitchen_light", "turn_on"),
    ("turn on the coffe machine", "switch.coffee_machine", "turn_on"),
    ("turn off the coffee machien", "switch.coffee_machine", "turn_off"),
])
async def test_a_misheard_name_within_a_letter_or_two_is_that_device(text, entity_id, service) -> None:
    """The living room's light shares the misheard word's "light", not its room's "kitchen"."""
    async with Rig(_home(_entity("light.living_room_light", "Living Room Light", "Living Room"))) as rig:
        result, acted = await _ask(rig, text)
    assert acted == [(entity_id, service)], (text, result.reply)


async def test_two_near_fits_ask_which_one_and_a_far_one_is_not_found() -> None:
    home = _home(_entity("light.sophie_lamp", "Sophie Lamp", "Bedroom"),
                 _entity("light.sophia_lamp", "Sophia Lamp", "Office"))
    async with Rig(home) as rig:
        asked, acted = await _ask(rig, "turn on the sophio lamp")
        assert acted == [] and "Sophie Lamp" in asked.reply and "Sophia Lamp" in asked.reply, asked.reply
        missing, acted = await _ask(rig, "turn on the night lamp")  # "night" is not "light"
        assert acted == [], missing.reply


async def test_a_command_s_words_are_no_part_of_a_name() -> None:
    """A wildcard that takes a name with the words after it never says the home lacks "Robbie
    cleaning the kitchen", and acts on nothing it was not asked to."""
    async with Rig(_home()) as rig:
        result, acted = await _ask(rig, "start Robbie cleaning the kitchen")
    assert acted == []
    assert not result.reply.startswith(phrase("en", "entity.not_found", name="\0").split("\0")[0]), result.reply


@pytest.mark.parametrize("language, text, expected", [
    ("en", "turn on both the desk lamp and the kitchen light",
     [("light.desk_lamp", "turn_on"), ("light.kitchen_light", "turn_on")]),
    ("en", "turn on the desk lamp, then turn off the kitchen light",
     [("light.desk_lamp", "turn_on"), ("light.kitchen_light", "turn_off")]),
    ("en", "turn on the desk lamp and then the kitchen light",
     [("light.desk_lamp", "turn_on"), ("light.kitchen_light", "turn_on")]),
    ("de", "Schalte die Schreibtischlampe ein und dann das Küchenlicht aus",
     [("light.desk_lamp", "turn_on"), ("light.kitchen_light", "turn_off")]),
    ("fr", "allume la lampe du bureau puis éteins la lumière de la cuisine",
     [("light.desk_lamp", "turn_on"), ("light.kitchen_light", "turn_off")]),
])
async def test_fillers_are_no_part_of_a_name_and_then_is_two_commands(language, text, expected) -> None:
    async with Rig(_home()) as rig:
        result, acted = await _ask(rig, text, language)
    assert sorted(acted) == sorted(expected), (text, result.reply)


@pytest.mark.parametrize("language, text", [("en", "turn on the fan"), ("de", "Schalte den Ventilator ein"),
                                            ("fr", "allume le ventilateur")])
async def test_the_one_device_of_a_kind_is_that_device(language: str, text: str) -> None:
    async with Rig(_home()) as rig:
        result, acted = await _ask(rig, text, language)
    assert acted == [("fan.bedroom_fan", "turn_on")], result.reply


async def test_a_kind_the_home_has_two_of_is_neither() -> None:
    async with Rig(_home(_entity("fan.office_fan", "Office Fan", "Office"))) as rig:
        result, acted = await _ask(rig, "turn on the fan")
    assert acted == [], result.reply  # two fans: not both, not one picked


@pytest.mark.parametrize("language, text, says", [
    ("en", "what is the battery level of the hallway motion sensor?", "42"),
    ("de", "Wie ist der Batteriestand vom Hallway Motion Sensor?", "42"),
    ("en", "is the living room speaker playing?", "playing"),
])
async def test_a_device_s_other_entities_answer_for_it(language: str, text: str, says: str) -> None:
    async with Rig(_home()) as rig:
        result, acted = await _ask(rig, text, language)
    assert acted == [] and says in result.reply and "80" not in result.reply, result.reply
