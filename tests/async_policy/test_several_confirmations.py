"""Several sensitive actions in one request, one "yes": the real agent, fast path and policy over
the demo home with three door locks and two garage doors (issue #15).

One question names every held call (counts them, when there are many), one yes carries them all out (each outcome said, a failing
one too, the rest still run), one no cancels them all, another request drops them.
"""

from __future__ import annotations

from typing import Any

import pytest

from hub.home.entities import BackendError, Entity
from hub.home.policy import CONFIRMATION_REQUIRED
from hub.locales import join_list, phrase, plural_phrase

from async_policy.async_helpers import FakeClock, TestHub
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(60)

LOCKS = {"lock.front_door": ("Front door", ("Haustür", "porte d'entrée")),
         "lock.back_door": ("Back door", ("Hintertür", "porte de derrière")),
         "lock.cellar_door": ("Cellar door", ("Kellertür", "porte de la cave"))}
GARAGE_DOORS = {"cover.garage_left": "Left garage door", "cover.garage_right": "Right garage door"}
# what the user says in each language: all three locks, by name, with one shared verb
UNLOCK_ALL = {"en": "unlock the front door, the back door and the cellar door",
              "de": "entriegle die Haustür, die Hintertür und die Kellertür",
              "fr": "déverrouille la porte d'entrée, la porte de derrière et la porte de la cave"}
YES = {"en": "yes", "de": "ja", "fr": "oui"}
NO = {"en": "no", "de": "nein", "fr": "non"}


class BrokenLock:
    """A lock whose backend fails every call, as a lock out of radio range would."""

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        raise BackendError("the lock did not answer")


def home_hub(tmp_path, clock: FakeClock, *, broken: str | None = None, rounds: list | None = None) -> TestHub:
    hub = TestHub(tmp_path, ScriptedEngine(rounds or []), policy_clock=clock, fast_path=True)
    hub.store.register_backend("broken", BrokenLock())
    for entity_id, (name, aliases) in LOCKS.items():
        hub.store.upsert(Entity(entity_id, name, "locked", {}, aliases, "Hallway",
                                source="broken" if entity_id == broken else "demo"))
    for entity_id, name in GARAGE_DOORS.items():
        hub.store.upsert(Entity(entity_id, name, "closed", {"current_position": 0}, (), "Garage",
                                device_class="garage", source="demo"))
    return hub


def question(language: str, verb: str, names: list[str]) -> str:
    return phrase(language, "policy.confirm", action=phrase(language, f"policy.verb.{verb}"),
                  name=join_list(names, language))


def unlocked(language: str, name: str) -> str:
    return phrase(language, "action.reported", name=name, state=phrase(language, "state.unlocked"))


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_one_question_names_every_lock_and_one_yes_unlocks_them_all(tmp_path, language) -> None:
    hub = home_hub(tmp_path, FakeClock())
    names = [name for name, _ in LOCKS.values()]
    asked = await hub.ask(UNLOCK_ALL[language], language=language)
    assert asked.path == "fast_path" and asked.reply == question(language, "unlock", names)
    assert [f.data["error"] for f in asked.tool_calls] == [CONFIRMATION_REQUIRED] * 3
    assert all(hub.state(e) == "locked" for e in LOCKS) and hub.backend.calls == []
    done = await hub.ask(YES[language], language=language)
    assert done.path == "confirmation"
    assert done.reply == " ".join(unlocked(language, name) for name in names)
    assert all(hub.state(e) == "unlocked" for e in LOCKS)
    assert sorted(c[:2] for c in hub.backend.calls) == sorted((e, "unlock") for e in LOCKS)


@pytest.mark.parametrize("language, text", [
    ("en", "unlock the front door, the back door, the cellar door and the garden door"),
    ("de", "entriegle die Haustür, die Hintertür, die Kellertür und die Gartentür"),
    ("fr", "déverrouille la porte d'entrée, la porte de derrière, la porte de la cave et la porte du jardin"),
])
async def test_many_locks_are_counted_in_the_question(tmp_path, language, text) -> None:
    hub = home_hub(tmp_path, FakeClock())
    hub.store.upsert(Entity("lock.garden_door", "Garden door", "locked", {}, ("Gartentür", "porte du jardin"),
                            "Hallway", source="demo"))
    asked = await hub.ask(text, language=language)
    assert asked.reply == plural_phrase(language, "policy.confirm_many", 4,
                                        action=phrase(language, "policy.verb.unlock"))
    await hub.ask(YES[language], language=language)
    assert all(hub.state(e) == "unlocked" for e in [*LOCKS, "lock.garden_door"])


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_one_no_cancels_them_all(tmp_path, language) -> None:
    hub = home_hub(tmp_path, FakeClock())
    await hub.ask(UNLOCK_ALL[language], language=language)
    cancelled = await hub.ask(NO[language], language=language)
    assert cancelled.path == "confirmation" and cancelled.reply == phrase(language, "policy.cancelled")
    assert all(hub.state(e) == "locked" for e in LOCKS) and hub.backend.calls == []
    assert not hub.policy.has_pending("c1")


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_failing_lock_is_said_and_the_others_still_unlock(tmp_path, language) -> None:
    hub = home_hub(tmp_path, FakeClock(), broken="lock.back_door")
    await hub.ask(UNLOCK_ALL[language], language=language)
    done = await hub.ask(YES[language], language=language)
    [failed] = [f for f in done.tool_calls if not f.ok]
    assert failed.call.arguments["entity_id"] == "lock.back_door"
    assert hub.state("lock.front_door") == hub.state("lock.cellar_door") == "unlocked"
    assert hub.state("lock.back_door") == "locked"
    said = done.reply
    assert said == " ".join([unlocked(language, "Front door"), phrase(language, "tool.failed", name="Back door"),
                             unlocked(language, "Cellar door")])


async def test_a_whole_area_of_garage_doors_waits_for_one_yes(tmp_path) -> None:
    hub = home_hub(tmp_path, FakeClock())
    asked = await hub.ask("open the garage")
    assert asked.reply == question("en", "open", list(GARAGE_DOORS.values()))
    done = await hub.ask("yes")
    assert done.path == "confirmation" and all(hub.state(e) == "open" for e in GARAGE_DOORS)


async def test_a_mixed_sentence_does_the_safe_part_and_asks_for_the_rest(tmp_path) -> None:
    """The kitchen light is switched at once (as before); both sensitive parts wait for the yes."""
    hub = home_hub(tmp_path, FakeClock())
    asked = await hub.ask("turn on the kitchen light and unlock the front door and open the garage")
    assert hub.state("light.kitchen") == "on"
    assert asked.reply == " ".join([phrase("en", "action.turned_on", name="Kitchen light"),
                                    question("en", "unlock", ["Front door"]),
                                    question("en", "open", list(GARAGE_DOORS.values()))])
    await hub.ask("yes")
    assert hub.state("lock.front_door") == "unlocked" and all(hub.state(e) == "open" for e in GARAGE_DOORS)


async def test_another_request_drops_the_held_set_and_so_does_the_window(tmp_path) -> None:
    clock = FakeClock()
    hub = home_hub(tmp_path, clock, rounds=[text("Yes to what?")])
    await hub.ask(UNLOCK_ALL["en"])
    replaced = await hub.ask("open the garage")  # a new request: its own question, its own set
    assert replaced.reply == question("en", "open", list(GARAGE_DOORS.values()))
    await hub.ask("yes")
    assert all(hub.state(e) == "locked" for e in LOCKS) and all(hub.state(e) == "open" for e in GARAGE_DOORS)

    await hub.ask(UNLOCK_ALL["en"])
    clock.advance(31)
    late = await hub.ask("yes")  # past the window: the yes confirms nothing
    assert late.path == "model" and all(hub.state(e) == "locked" for e in LOCKS)


async def test_the_model_path_holds_all_its_sensitive_calls_for_one_yes(tmp_path) -> None:
    """The model calls three unlocks in one round: one question for the three, one yes runs them."""
    clock = FakeClock()
    engine = ScriptedEngine([[call("turn_off", entity_id=e) for e in LOCKS]])
    hub = TestHub(tmp_path, engine, policy_clock=clock)
    for entity_id, (name, aliases) in LOCKS.items():
        hub.store.upsert(Entity(entity_id, name, "locked", {}, aliases, "Hallway", source="demo"))
    names = [name for name, _ in LOCKS.values()]
    asked = await hub.ask(UNLOCK_ALL["en"])  # named: the model acts on no device the request does not name
    assert asked.path == "model" and asked.reply == question("en", "unlock", names)
    done = await hub.ask("yes")
    assert done.path == "confirmation" and all(hub.state(e) == "unlocked" for e in LOCKS)
    assert len(engine.requests) == 1
