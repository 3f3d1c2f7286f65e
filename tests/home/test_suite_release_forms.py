"""Template forms of the intents release HA's own test suite checks (2025.6), which the installed
release words otherwise: a device class slot that lists several kinds ("gardiner": blinds,
curtains and shutters), "set the temperature to 30" with no thermostat named and no
satellite area required, a timer template asking for the satellite's area (da, nb: HA's timers
belong to a satellite; the hub keeps its own). The hub carries them out as HA's handlers do. Real hassil matcher over
the installed templates plus those forms (as the hub gets them once it ships that release's
data), the real store, registry and demo backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hub.understanding import recognition
from hub.home.entities import Entity
from tests.home.test_fast_path import Home
from tests.home.test_fast_path_understanding import BigHome

pytestmark = pytest.mark.timeout(120)

_HERE = {"area": {"slot": False}}  # a satellite that has an area
_COVERS = {"domain": "cover", "device_class": ["blind", "curtain", "shutter"]}
# each language's form, as the 2025.6 release writes it (literal words, the lists it uses)
FORMS: dict[str, dict[str, list[dict[str, Any]]]] = {
    "sv": {"HassTurnOff": [{"sentences": ["stäng (gardiner|gardinerna|persiennerna) i {area}"], "slots": _COVERS}],
           "HassClimateSetTemperature": [{"sentences": ["sätt temperaturen till {temperature} grader"]}]},
    "sk": {"HassTurnOn": [{"sentences": ["vytiahni (žalúzie|závesy) v {area}"], "slots": _COVERS}]},
    "nb": {"HassStartTimer": [{"sentences": ["[start ]nedtelling på {timer_quarters:minutes} kvarter"],
                               "requires_context": _HERE}]},
    "el": {"HassClimateSetTemperature": [{"sentences": ["ρύθμισε τη θερμοκρασία στους {temperature} βαθμούς"]}]},
}
QUARTERS = {"timer_quarters": {"range": {"from": 1, "to": 4, "multiplier": 15}}}  # "3 kvarter": 45 minutes
ROOMS = {"sv": "Sovrum", "sk": "Spálňa", "el": "Σαλόνι"}
ROOM_ALIASES = {"sk": ["spálni"]}  # as said after "v"


@pytest.fixture
def with_forms(monkeypatch):
    installed = recognition.get_intents

    def get_intents(code: str) -> dict[str, Any]:
        data = installed(code)
        for intent, blocks in FORMS.get(code, {}).items():
            data["intents"].setdefault(intent, {"data": []})["data"].extend(blocks)
        data["lists"].update(QUARTERS)
        return data

    monkeypatch.setattr(recognition, "get_intents", get_intents)
    recognition.load_intents.cache_clear()
    yield
    recognition.load_intents.cache_clear()


def home_of(language: str, thermostats: int = 1) -> Home:
    """Two window coverings of the kinds listed and a garage door in one room; thermostats."""
    home = Home()
    for entity_id in [e.entity_id for e in home.store.all()]:
        home.store.remove(entity_id)
    room = ROOMS[language]
    home.store.set_area_aliases(room, ROOM_ALIASES.get(language, []))
    for entity_id, device_class, state in [("cover.curtain", "curtain", "open"), ("cover.blind", "blind", "open"),
                                           ("cover.garage", "garage", "open")]:
        home.store.upsert(Entity(entity_id, f"{room} {device_class}", state if language == "sv" else "closed",
                                 device_class=device_class, area=room, source="demo"))
    for number in range(1, thermostats + 1):
        home.store.upsert(Entity(f"climate.t{number}", f"Termo {number}", "heat",
                                 {"temperature": 20.0, "min_temp": 5.0, "max_temp": 35.0}, source="demo"))
    return home


@pytest.mark.parametrize("text, language, tool", [
    ("stäng gardinerna i sovrum", "sv", "turn_off"),
    ("stäng persiennerna i sovrum", "sv", "turn_off"),
    ("vytiahni žalúzie v spálni", "sk", "turn_on"),
])
async def test_a_device_class_slot_listing_several_kinds_acts_on_each_of_them(
        with_forms, text, language, tool) -> None:
    home = home_of(language)
    outcome = await home.say(text, language)
    assert outcome is not None, text
    assert sorted((c.name, c.arguments["entity_id"]) for c in outcome.calls) == [
        (tool, "cover.blind"), (tool, "cover.curtain")]  # the garage door is not one of the kinds
    assert home.store.get("cover.garage").state == ("open" if language == "sv" else "closed")


@pytest.mark.parametrize("text, language", [
    ("sätt temperaturen till 30 grader", "sv"),
    ("ρύθμισε τη θερμοκρασία στους 30 βαθμούς", "el"),
])
async def test_a_temperature_with_no_thermostat_named_sets_the_thermostat(with_forms, text, language) -> None:
    home = home_of(language)
    outcome = await home.say(text, language)
    assert outcome is not None, text
    assert [(c.name, c.arguments) for c in outcome.calls] == [
        ("set_temperature", {"entity_id": "climate.t1", "temperature": 30.0})]
    assert home.store.get("climate.t1").attributes["temperature"] == 30.0


async def test_with_several_thermostats_it_sets_each(with_forms) -> None:
    """As HA's handler (a service intent over every entity the slots match) does."""
    home = home_of("sv", thermostats=2)
    outcome = await home.say("sätt temperaturen till 30 grader", "sv")
    assert outcome is not None
    assert sorted(c.arguments["entity_id"] for c in outcome.calls) == ["climate.t1", "climate.t2"]
    assert all(home.store.get(e).attributes["temperature"] == 30.0 for e in ("climate.t1", "climate.t2"))


@pytest.mark.parametrize("text, language", [("start nedtelling på 3 kvarter", "nb")])
async def test_a_timer_needs_no_satellite_area(with_forms, tmp_path: Path, text, language) -> None:
    home = BigHome(tmp_path)  # the hub's timer tools
    await home.timers.start()
    try:
        outcome = await home.say(text, language)
    finally:
        await home.timers.stop()
    assert outcome is not None, text
    assert [(c.name, c.arguments) for c in outcome.calls] == [("start_timer", {"minutes": 45})]
    assert outcome.results[0].ok
