"""OHF-Voice/intents' newest suite (the copy in ohf_intents_tests/), through the hub and HA's
matcher side by side: per language, the hub carries out every sentence HA's matcher gets, for
the intents of Assist beyond devices (timers, lists, broadcast, weather, date and time, never
mind), on a bounded sample (the first sentence of about a dozen files per language).
`bench/bench_ohf_intents.py` prints the whole table, every intent."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.understanding.ohf_suite import (
    SPEAKER_AREA,
    TimerState,
    file_home,
    languages,
    load_cases,
    run_file,
    suite_files,
    with_sentences,
)

pytestmark = pytest.mark.timeout(600)

COVERED = frozenset({
    "HassStartTimer", "HassCancelTimer", "HassCancelAllTimers", "HassIncreaseTimer", "HassDecreaseTimer",
    "HassPauseTimer", "HassUnpauseTimer", "HassTimerStatus", "HassListAddItem", "HassListCompleteItem",
    "HassListRemoveItem", "HassShoppingListAddItem", "HassShoppingListCompleteItem", "HassBroadcast",
    "HassGetWeather", "HassGetCurrentDate", "HassGetCurrentTime", "HassNevermind",
})
FILES_PER_LANGUAGE = 12


def _covering() -> list[str]:
    """The languages whose suite has files of these intents (id, ja, ms have none yet)."""
    return [lang for lang in languages() if any(f.intent in COVERED for f in suite_files(lang))]


@pytest.mark.parametrize("language", _covering())
async def test_the_hub_carries_out_what_has_matcher_gets(language: str) -> None:
    files = [f for f in suite_files(language) if f.intent in COVERED]
    files = files[::max(1, len(files) // FILES_PER_LANGUAGE)]
    scored = [s for f in files for s in await run_file(with_sentences(f, 1))]
    misses = [f"{s.case.file.name}: {s.case.text!r}: {s.why}" for s in scored if s.ha and not s.hub]
    print(f"{language}: {len(scored)} sentences, hub {sum(s.hub for s in scored)}, HA's matcher "
          f"{sum(s.ha for s in scored)}")
    assert scored
    assert not misses, "\n".join(misses)


def _file(language: str, name: str):  # type: ignore[no-untyped-def]
    return next(f for f in suite_files(language) if f.name == name)


def test_a_file_said_in_the_speakers_area_gets_the_device_its_sentences_act_on() -> None:
    """"turn on the lights in here" in a home with no light: a light in the speaker's area."""
    f = _file("en", "HassTurnOn/domain_only")
    home = file_home(f)
    cases = load_cases(f, home)
    assert f.speaker and home.speaker_area == SPEAKER_AREA
    lights = [e for e in home.entities if e.domain == "light"]
    assert [e.area for e in lights] == [SPEAKER_AREA]
    assert cases[0].want.calls == ((lights[0].entity_id, "turn_on", ()),)


def test_cancelling_the_timers_of_an_area_leaves_the_others() -> None:
    f = _file("en", "HassCancelAllTimers/area_only")
    cases = load_cases(f, file_home(f))
    assert cases[0].running == (TimerState(None, "Kitchen", 300, True, 300),)
    assert cases[0].want.timers == ()
    f = _file("en", "HassIncreaseTimer/name_minutes")
    case = load_cases(f, file_home(f))[0]
    assert case.running == (TimerState("pizza", None, 300, True, 300), TimerState(None, None, 1320, True, 1320))
    assert case.want.timers == (TimerState("pizza", None, 600, True, 300), TimerState(None, None, 1320, True, 1320))


def test_an_item_to_complete_is_on_the_list_first() -> None:
    f = _file("en", "HassListCompleteItem/name_item")
    home = file_home(f)
    case = load_cases(f, home)[0]
    assert home.list_items == {"todo.chores": ["take out the trash"] * len(load_cases(f, file_home(f)))}
    assert case.want.calls == (("todo.chores", "update_item", (("item", "take out the trash"), ("status", "completed"))),)


def test_the_copy_follows_the_installed_templates() -> None:
    """The suite's sentences follow HA's templates: a new home-assistant-intents pin means a new
    copy (`scripts/vendor_intent_tests.py`), or HA's matcher is scored on sentences of another
    release."""
    root = Path(__file__).resolve().parents[2]
    readme = (root / "tests" / "understanding" / "ohf_intents_tests" / "README.md").read_text(encoding="utf-8")
    copied = re.search(r"home-assistant-intents (\S+) \(", readme)
    pins = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pinned = next(p.split("==", 1)[1] for p in pins if p.startswith("home-assistant-intents=="))
    assert copied and copied.group(1) == pinned == version("home-assistant-intents")


def test_a_sample_of_one_sentence_keeps_that_sentences_own_slot_value() -> None:
    """A slot listing one value per sentence ("80" and "40" for two fr sentences): the first
    sentence alone gets its own value, not a one-item list (bench_ohf_intents --per-file 1)."""
    f = with_sentences(_file("fr", "HassSetPosition/floor_device_class"), 1)
    home = file_home(f)
    (case,) = load_cases(f, home)
    assert case.slots["position"] == 80
    assert case.want.calls and all(data == (("position", 80),) for _, _, data in case.want.calls)
