"""Commands that wait on one reading (issue #39 point 1): "if the guest room is above 23, set it to
22" reads the room now, compares, and carries the command out only when it holds — through the
fast path, within the policy — else says why nothing was done; what cannot be read is said so.
Real follow-up route (where "it" is read) and fast path over the answering home."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.core.tools import ToolContext
from hub.home.entities import Entity
from hub.locales import format_number, phrase
from hub.understanding.conditions import read_conditional
from hub.understanding.follow_ups import FollowUps
from tests.helpers.answering_home import AnsweringHome

pytestmark = pytest.mark.timeout(120)

GUEST = "climate.guest_room"


@pytest.fixture
async def home(tmp_path: Path):
    home = AnsweringHome(tmp_path)
    home.store.upsert(Entity(GUEST, "Guest Room Thermostat", "heat", {
        "temperature": 24.0, "current_temperature": 24.5, "min_temp": 7.0, "max_temp": 30.0},
        area="Guest Room", source="demo"))
    home.store.set_area_aliases("Guest Room", ("Gästezimmer", "chambre d'amis"))
    await home.start()
    yield home
    await home.stop()


async def said(home: AnsweringHome, text: str, language: str = "en"):
    follow_ups = FollowUps(home.store, home.resolver, home.fast_path)
    return await follow_ups.try_handle(text, language, ToolContext("c", language=language), None)


def room_at(home: AnsweringHome, degrees: float) -> None:
    home.store.update_state(GUEST, "heat", {**home.store.get(GUEST).attributes, "current_temperature": degrees})


@pytest.mark.parametrize("text, language, target", [
    ("if the guest room is above 23, set it to 22", "en", 22.0),
    ("set the guest room thermostat to 21 if the guest room is over 23 degrees", "en", 21.0),
    ("Wenn das Gästezimmer über 23 Grad ist, stell es auf 22", "de", 22.0),
    ("Si la chambre d'amis est au-dessus de 23 degrés, mets-la à 22", "fr", 22.0),
])
async def test_a_condition_that_holds_carries_the_command_out(home: AnsweringHome, text: str, language: str,
                                                               target: float) -> None:
    outcome = await said(home, text, language)
    assert outcome is not None and [c.name for c in outcome.calls] == ["set_temperature"], text
    assert home.store.get(GUEST).attributes["temperature"] == target
    assert outcome.reply.startswith(phrase(language, "condition.met", name="Guest Room Thermostat",
                                           value=phrase(language, "unit.degrees", value=format_number(24.5, language)),
                                           comparison=phrase(language, "condition.above", limit="23")))


@pytest.mark.parametrize("text, language", [
    ("if the guest room is above 23, set it to 22", "en"),
    ("Wenn das Gästezimmer über 23 Grad ist, stell es auf 22", "de"),
    ("Si la chambre d'amis est au-dessus de 23 degrés, mets-la à 22", "fr"),
])
async def test_a_condition_that_does_not_hold_changes_nothing_and_says_why(home: AnsweringHome, text: str,
                                                                          language: str) -> None:
    room_at(home, 21.0)
    outcome = await said(home, text, language)
    assert outcome is not None and not outcome.calls
    assert home.store.get(GUEST).attributes["temperature"] == 24.0 and not home.backend.calls
    assert outcome.reply == phrase(language, "condition.not_met", name="Guest Room Thermostat",
                                   value=phrase(language, "unit.degrees", value=format_number(21, language)),
                                   comparison=phrase(language, "condition.above", limit="23"))


async def test_below_compares_the_other_way(home: AnsweringHome) -> None:
    outcome = await said(home, "if the guest room is below 25, set it to 22")
    assert outcome is not None and [c.arguments for c in outcome.calls] == [{"entity_id": GUEST, "temperature": 22.0}]


async def test_what_cannot_be_read_is_said_and_nothing_is_done(home: AnsweringHome) -> None:
    outcome = await said(home, "if the attic is above 23, set it to 22")
    assert outcome is not None and outcome.reply == phrase("en", "condition.unreadable", name="the attic")
    assert not outcome.calls and not home.backend.calls


async def test_the_command_stays_within_the_policy(home: AnsweringHome) -> None:
    """With no policy a lock is refused whatever the condition says (the tools' own check)."""
    outcome = await said(home, "if the guest room is above 23, unlock the front door")
    assert outcome is not None and home.store.get("lock.front_door").state == "locked"
    assert phrase("en", "policy.not_allowed", name="Front door") in outcome.reply


@pytest.mark.parametrize("text", ["set the guest room to 22", "if you can, turn on the light",
                                  "what if the guest room is warm", "is the guest room above 23 degrees?"])
def test_only_a_condition_with_a_number_and_a_command_reads_as_one(text: str) -> None:
    assert read_conditional(text, "en") is None
