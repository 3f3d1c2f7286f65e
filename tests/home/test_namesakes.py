"""Devices that answer to the same words (issue #30 item 4): a command naming them asks which one,
whatever their kinds; a name said in part never stands in for a device named outright."""

from __future__ import annotations

import pytest

from hub.backends.demo.home import SOURCE
from hub.home.entities import Entity
from hub.home.namesakes import namesake_groups, namesakes, option_names
from hub.locales import phrase
from home.test_fast_path import Home

pytestmark = pytest.mark.timeout(120)

LOOK_ALIKE = Entity("switch.front_door", "Front door", "off", source=SOURCE)
GARAGE = Entity("cover.garage_door", "Garage door", "closed", area="Garage", device_class="garage", source=SOURCE)
# in the same area, so the area said does not tell them apart
OPENER = Entity("switch.garage_door_opener", "Garage door opener", "off", area="Garage", source=SOURCE)
CONTACT = Entity("binary_sensor.front_door", "Front door", "off", device_class="door", source=SOURCE)


def home_with(*extra: Entity) -> Home:
    home = Home()
    for entity in extra:
        home.store.upsert(entity)
    return home


@pytest.mark.parametrize("text", ["turn off the front door", "unlock the front door", "turn on the front door",
                                  "lock the front door"])
async def test_two_devices_with_one_name_are_asked_about_whatever_their_kinds(text: str) -> None:
    home = home_with(LOOK_ALIKE)
    before = home.snapshot()
    outcome = await home.say(text)
    assert outcome is not None and outcome.calls == [], text
    assert outcome.intent == "ambiguous" and outcome.candidates == ["lock.front_door", "switch.front_door"]
    assert outcome.reply == phrase("en", "entity.ambiguous", options="Front door (lock) and Front door (switch)")
    assert home.snapshot() == before and home.backend.calls == []


async def test_a_name_said_in_part_never_stands_in_for_a_device_named_outright() -> None:
    """"Turn on" takes no cover, so "the garage door" went to the switch whose name holds the words."""
    home = home_with(GARAGE, OPENER)
    outcome = await home.say("turn on the garage door")
    assert outcome is not None and outcome.calls == []
    assert outcome.candidates == ["cover.garage_door", "switch.garage_door_opener"]
    assert home.backend.calls == []
    named = await home.say("turn on the garage door opener")  # its whole name: that one
    assert [c.arguments["entity_id"] for c in named.calls] == ["switch.garage_door_opener"]


async def test_a_sensor_with_the_locks_name_is_no_look_alike() -> None:
    """A door's contact sensor beside its lock, as real homes have them: the lock, as before."""
    home = home_with(CONTACT)
    outcome = await home.say("unlock the front door")
    assert [c.arguments["entity_id"] for c in outcome.calls] == ["lock.front_door"]  # (the tools' policy refuses it)
    assert namesakes(CONTACT, home.store.all()) == [] and namesake_groups(home.store.all()) == []


def test_namesakes_are_found_as_the_resolver_compares_names() -> None:
    home = home_with(LOOK_ALIKE, CONTACT, Entity("light.porch", "FrontDoor", source=SOURCE))
    lock = home.store.get("lock.front_door")
    assert [e.entity_id for e in namesakes(lock, home.store.all())] == ["light.porch", "switch.front_door"]
    assert [[e.entity_id for e in g] for g in namesake_groups(home.store.all())] == [
        ["light.porch", "lock.front_door", "switch.front_door"]]


def test_the_options_of_which_one_tell_twins_apart() -> None:
    hall = Entity("lock.hall", "Door", area="Hallway")
    cellar = Entity("lock.cellar", "Door", area="Cellar")
    switch = Entity("switch.door", "Door")
    assert option_names([hall, cellar]) == ["Door (Hallway)", "Door (Cellar)"]
    assert option_names([hall, switch]) == ["Door (lock)", "Door (switch)"]
    assert option_names([hall, GARAGE]) == ["Door", "Garage door"]


@pytest.mark.parametrize("answer, chosen", [
    ("the lock", "lock.front_door"), ("the switch", "switch.front_door"), ("Front door", None),
    ("the first one", None),  # counted by the agent (hub.agent.choices), not named
])
def test_an_answer_names_one_twin_by_its_kind(answer: str, chosen: str | None) -> None:
    home = home_with(LOOK_ALIKE)
    among = [home.store.get("lock.front_door"), LOOK_ALIKE]
    picked = home.resolver.pick(answer, among)
    assert (picked.entity_id if picked else None) == chosen


def test_an_answer_with_a_whole_name_beats_one_that_holds_its_words() -> None:
    home = home_with(GARAGE, OPENER)
    assert home.resolver.pick("the garage door", [OPENER, GARAGE]) == GARAGE
    assert home.resolver.pick("the opener", [OPENER, GARAGE]) == OPENER
