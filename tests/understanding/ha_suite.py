"""Home Assistant's own intent test suite (github home-assistant/intents, `tests/<lang>/`), run
through the hub and through HA's matcher side by side.

Each language's `_fixtures.yaml` (entities, areas, floors) becomes a hub home; each test
(sentences, intent, slots, context) of an intent the hub covers becomes cases whose expected
outcome is computed from the intent and slots the way HA's intent handlers act on that home
(`harness.expect`'s rules: the service calls, or an answer that acts on nothing). The hub gets
each sentence through `Agent.ask` (a sensitive action's "are you sure?" answered with the
language's yes), matching the installed release's templates and the suite's own (2025.6.23,
shipped with the hub) both; HA's matcher is hassil's `recognize_best` over the installed
home-assistant-intents with the fixtures' slot lists and the test's context, scored as the
suite's own `test_language_sentences.py` scores it (intent name and every slot). Where the
installed release reads a sentence otherwise than the suite's, the outcome expected is what HA's
handler does with today's reading, as the hub (and today's HA) reads it (`as_ha_today`).

Sentences HA can only understand from the satellite's area (the test's context area, not said;
a temperature with no thermostat named in a home of several) are left out of both columns: the
hub is told no satellite area. The fixtures give thermostats no limits and ask for 1 to 50
degrees: their thermostats take the range of the intents' temperature list (0-100).

The suite is read from a checkout or a bare git clone of the intents repository, or from the
copy of the eight main languages in `ha_intents_tests/` (see its README).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml
from hassil import Intents, TextSlotList, Trie, is_template, parse_sentence, recognize_best
from hassil.intents import SlotList
from hassil.sample import sample_expression
from home_assistant_intents import get_intents

from hub.home.entities import Entity
from hub.understanding.fast_path import FastPath
from hub.home.normalize import fold
from hub.locales import SUPPORTED_LANGUAGES, format_number
from tests.understanding.harness import (
    Case,
    Expected,
    Outcome,
    Rig,
    SampleHome,
    as_set,
    domain_fits,
    preferred_other,
    service_call,
)

VENDORED = Path(__file__).with_name("ha_intents_tests")

# the intents the hub carries out or answers (issue #15's list), as the suite names its files
COVERED = (
    "HassTurnOn", "HassTurnOff", "HassLightSet", "HassClimateSetTemperature",
    "HassClimateGetTemperature", "HassSetPosition", "HassMediaPause", "HassMediaUnpause",
    "HassMediaNext", "HassMediaPrevious", "HassSetVolume", "HassVacuumStart",
    "HassVacuumReturnToBase", "HassGetState", "HassStartTimer", "HassCancelTimer", "HassTimerStatus",
    "HassGetCurrentDate", "HassGetCurrentTime", "HassNevermind",
)
# a timer the sentence does not single out by name or duration runs this long
_TIMER_S = 300
_TIMER_QUERIES = ("HassCancelTimer", "HassTimerStatus")
_ANSWERED = ("HassGetCurrentDate", "HassGetCurrentTime", "HassNevermind")
# a media command with no player named acts on the players in the state it needs, as HA's does
_MEDIA_STATES = {"HassMediaPause": "playing", "HassMediaUnpause": "paused",
                 "HassMediaNext": "playing", "HassMediaPrevious": "playing"}


# --- reading the suite ---------------------------------------------------------------------------


class Suite:
    """The suite's files: a directory holding `<lang>/…yaml` (a checkout's `tests/`, or the
    vendored copy), or a bare git clone of the repository (read at HEAD)."""

    def __init__(self, source: Path = VENDORED) -> None:
        self.source = source
        self._git = (source / "HEAD").is_file() and not (source / "tests").is_dir()
        if not self._git and (source / "tests").is_dir():
            self.source = source / "tests"

    def _names(self, code: str) -> list[str]:
        if self._git:
            listed = subprocess.run(["git", "--git-dir", str(self.source), "ls-tree", "--name-only",
                                     "HEAD", f"tests/{code}/"], capture_output=True, text=True, check=True)
            return [Path(line).name for line in listed.stdout.split()]
        folder = self.source / code
        return sorted(p.name for p in folder.glob("*.yaml")) if folder.is_dir() else []

    def read(self, code: str, name: str) -> dict[str, Any]:
        if self._git:
            text = subprocess.run(["git", "--git-dir", str(self.source), "show", f"HEAD:tests/{code}/{name}"],
                                  capture_output=True, text=True, check=True).stdout
        else:
            text = (self.source / code / name).read_text(encoding="utf-8")
        return yaml.safe_load(text)

    def languages(self) -> list[str]:
        """The hub's languages the suite has fixtures for."""
        return [lang for lang in SUPPORTED_LANGUAGES if "_fixtures.yaml" in self._names(suite_code(lang))]

    def test_files(self, language: str) -> list[str]:
        """`<domain>_<Intent>.yaml` files of the covered intents."""
        return [n for n in self._names(suite_code(language))
                if n.endswith(".yaml") and n.rsplit(".", 1)[0].rsplit("_", 1)[-1] in COVERED]


def suite_code(language: str) -> str:
    """The suite's folder for a hub language (the intents package's code, lower case)."""
    code = FastPath.intents_language(language)
    assert code is not None
    return code.lower()


def _spoken(text: str) -> list[str]:
    """A fixture name's spoken forms ("[the] lamp" is a template)."""
    if not is_template(text):
        return [text.strip()]
    return [t.strip() for t in sample_expression(parse_sentence(text).expression)]


# --- the fixture home --------------------------------------------------------------------------


@dataclass(frozen=True)
class FixtureHome:
    """The suite's fixtures as a hub home, and as HA's matcher's slot lists."""

    home: SampleHome
    area_aliases: dict[str, tuple[str, ...]]
    floor_aliases: dict[str, tuple[str, ...]]
    names: dict[str, tuple[str, ...]]  # entity id → its spoken names
    slot_lists: dict[str, SlotList]
    name_trie: Trie


def fixture_home(suite: Suite, language: str) -> FixtureHome:
    data = suite.read(suite_code(language), "_fixtures.yaml")
    floor_names = {f["id"]: _spoken(f["name"]) for f in data.get("floors", [])}
    area_names = {a["id"]: _spoken(a["name"]) for a in data.get("areas", [])}
    area_floor = {area_names[a["id"]][0]: floor_names[a["floor"]][0]
                  for a in data.get("areas", []) if a.get("floor") in floor_names}
    entities, names, tuples = [], {}, []
    for item in data["entities"]:
        item = {**item, "id": _unique(item["id"], names)}
        spoken = _spoken(item["name"])
        attributes = dict(item.get("attributes") or {})
        if item["id"].startswith("climate."):
            attributes = {"min_temp": 0.0, "max_temp": 100.0, **attributes}
        state = item.get("state", "off")
        state = state["out"] if isinstance(state, dict) else str(state)
        area = area_names[item["area"]][0] if item.get("area") in area_names else None
        entities.append(Entity(item["id"], spoken[0], state, attributes, aliases=tuple(spoken[1:]),
                               area=area, device_class=attributes.get("device_class"), source="understanding"))
        names[item["id"]] = tuple(spoken)
        context = {"domain": item["id"].split(".", 1)[0], **attributes}
        tuples += [(name, name, context) for name in spoken]
    home = SampleHome(language, tuple(entities), tuple(n[0] for n in area_names.values()),
                      tuple(n[0] for n in floor_names.values()), area_floor)
    slot_lists: dict[str, SlotList] = {
        "area": TextSlotList.from_strings([n for ns in area_names.values() for n in ns]),
        "floor": TextSlotList.from_strings([n for ns in floor_names.values() for n in ns]),
        "name": TextSlotList.from_tuples(tuples),
    }
    trie = Trie()
    for value in slot_lists["name"].values:  # type: ignore[attr-defined]
        trie.insert(value.text_in.text.strip().lower(), value)
    return FixtureHome(home, {n[0]: tuple(n[1:]) for n in area_names.values()},
                       {n[0]: tuple(n[1:]) for n in floor_names.values()}, names, slot_lists, trie)


def _unique(entity_id: str, taken: dict[str, Any]) -> str:
    """Some fixtures give two devices one id ("light.bedside_lamp" in the hall and the bedroom):
    the second becomes "light.bedside_lamp_2", as HA's registry would name it."""
    number, unique = 1, entity_id
    while unique in taken:
        number += 1
        unique = f"{entity_id}_{number}"
    return unique


# --- the cases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteCase:
    """One test sentence: the hub's case (with what HA would do) and the test's own expectation."""

    case: Case
    file: str
    slots: dict[str, Any]  # as the suite writes them (names, not entity ids)
    context: dict[str, Any]


@dataclass
class Loaded:
    cases: list[SuiteCase]
    left_out: dict[str, int]  # why sentences of covered intents are not scored → how many


def load_cases(suite: Suite, fixtures: FixtureHome, language: str) -> Loaded:
    cases: list[SuiteCase] = []
    left_out: dict[str, int] = {}
    for name in suite.test_files(language):
        for test in suite.read(suite_code(language), name).get("tests") or []:
            intent = test["intent"]["name"]
            slots = dict(test["intent"].get("slots") or {})
            context = dict(test["intent"].get("context") or {})
            numbers = [slots.get(n) for n in ("temperature", "brightness", "position", "volume_level")]
            several = any(isinstance(n, list) for n in numbers)  # ru: "one of 22 and 23"
            # the kind of device a template requires (HA's `requires_context`: "entriegle alle
            # Türen im Flur" means the locks there, not every device in the hallway)
            meant = {"domain": context["domain"]} if "domain" in context and "domain" not in slots else {}
            for sentence in test.get("sentences") or []:
                expected = None if several else expect_suite(
                    intent, {**said_slots(sentence, slots, language), **meant}, fixtures)
                why = "a number slot allows several values" if several else (
                    _left_out(sentence, intent, slots, context, fixtures, language)
                    or ("nothing in the fixture home fits" if expected is None else None))
                if why:
                    left_out[why] = left_out.get(why, 0) + 1
                    continue
                case = Case(language, intent, sentence, tuple(sorted(slots.items(), key=str)), expected)
                cases.append(SuiteCase(case, name, slots, context))
    return Loaded(cases, left_out)


def said_slots(sentence: str, slots: dict[str, Any], language: str) -> dict[str, Any]:
    """The slots of one sentence: a test listing several areas or floors (hr: "kuhinji",
    "kupaonici", one test for both rooms' sentences) means the one the sentence says, the one
    HA's handler acts on (the suite's own test accepts any of them)."""
    said = f" {fold(sentence, language)} "
    narrowed = dict(slots)
    for key in ("area", "floor"):
        if isinstance(slots.get(key), list):
            named = [v for v in slots[key] if f" {fold(str(v), language)} " in said]
            narrowed[key] = named or slots[key]
    return narrowed


def _left_out(sentence: str, intent: str, slots: dict[str, Any], context: dict[str, Any],
              fixtures: FixtureHome, language: str) -> str | None:
    if intent in ("HassClimateSetTemperature", "HassClimateGetTemperature") \
            and not {"name", "area", "floor"} & set(slots) \
            and sum(e.domain == "climate" for e in fixtures.home.entities) > 1:
        return "needs the satellite's area"
    if intent in _TIMER_QUERIES and slots.get("area"):
        return "a timer by its area (the hub's timers have none)"
    here = as_set(context.get("area"))  # the satellite's area (a list: its spoken forms)
    if here and intent != "HassStartTimer" and (not slots.get("area") or here & as_set(slots["area"])):
        said = f" {fold(sentence, language)} "
        spoken = {n for a in here for n in (a, *fixtures.area_aliases.get(a, ()))}
        if not any(f" {fold(a, language)} " in said for a in spoken):
            return "needs the satellite's area"
    return None


def _entity_ids(text: str, fixtures: FixtureHome) -> set[str]:
    wanted = fold(str(text))
    return {entity_id for entity_id, names in fixtures.names.items() if wanted in {fold(n) for n in names}}


def _named(spoken: str | None, canonical: dict[str, tuple[str, ...]]) -> str | None:
    """The area (or floor) a slot's text names, by any of its spoken forms."""
    if spoken is None:
        return None
    for name, aliases in canonical.items():
        if fold(str(spoken)) in {fold(n) for n in (name, *aliases)}:
            return name
    return str(spoken)


def suite_targets(intent: str, slots: dict[str, Any], fixtures: FixtureHome) -> list[Entity]:
    """The entities HA's handlers match: name, area, floor, domain, device class (and a media
    command with no player named: the players in the state it needs)."""
    home = fixtures.home
    pool = list(home.entities)
    if slots.get("name") is not None:
        ids = _entity_ids(slots["name"], fixtures)
        pool = [e for e in pool if e.entity_id in ids]
    elif intent in _MEDIA_STATES:
        pool = [e for e in pool if e.state == _MEDIA_STATES[intent]]
    areas = {_named(a, {n: fixtures.area_aliases.get(n, ()) for n in home.areas}) for a in as_set(slots.get("area"))}
    floors = {_named(f, {n: fixtures.floor_aliases.get(n, ()) for n in home.floors}) for f in as_set(slots.get("floor"))}
    if areas:
        pool = [e for e in pool if e.area in areas]
    if floors:
        pool = [e for e in pool if home.area_floor.get(e.area or "") in floors]
    return [e for e in pool if domain_fits(intent, slots, e)]


def expect_suite(intent: str, slots: dict[str, Any], fixtures: FixtureHome) -> Expected | None:
    """What HA would do for this intent and these slots in the fixture home (None: nothing fits)."""
    if intent == "HassStartTimer":
        total = sum(float(slots.get(unit) or 0) * factor
                    for unit, factor in (("hours", 3600), ("minutes", 60), ("seconds", 1)))
        return Expected(timer_s=round(total)) if total else None
    if intent in _TIMER_QUERIES:
        running = _running_timers(slots)
        return Expected(answer=True, running=running) if intent == "HassTimerStatus" \
            else Expected(running=running, cancelled=0)
    if intent in _ANSWERED:
        return Expected(answer=True)
    found = suite_targets(intent, slots, fixtures)
    if not found:
        return None
    if intent == "HassGetState":
        return Expected(answer=True)
    if intent == "HassClimateGetTemperature":
        current = found[0].attributes.get("current_temperature")
        return Expected(answer=True, reply_contains=format_number(current, fixtures.home.language)
                        if current is not None else None)
    calls = []
    for entity in found:
        service, data = service_call(intent, slots, entity)
        if service is None:
            return None
        calls.append((entity.entity_id, service, tuple(sorted(data.items()))))
    return Expected(calls=tuple(sorted(calls)))


def _running_timers(slots: dict[str, Any]) -> tuple[tuple[str | None, int], ...]:
    """The timers running when a timer is cancelled or asked about: the one the slots describe
    (its name, its starting duration), first; beside it, when the slots single it out, another
    (unnamed, longer) that HA's handler would leave alone."""
    names = sorted({str(n).strip() for n in as_set(slots.get("name"))})
    said = sum(float(slots.get(f"start_{unit}") or 0) * factor
               for unit, factor in (("hours", 3600), ("minutes", 60), ("seconds", 1)))
    target = (names[0] if names else None, round(said) or _TIMER_S)
    return (target, (None, target[1] + 17 * 60)) if names or said else (target,)


# --- HA's matcher ----------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def ha_intents(language: str, data: Path | None = None) -> Intents:
    """The installed home-assistant-intents, whole, as HA's default agent loads them; or the
    `<code>.json` files of another release (`data`: a wheel's `home_assistant_intents/data`)."""
    code = FastPath.intents_language(language)
    assert code is not None
    return Intents.from_dict(get_intents(code) if data is None else release_data(data, code))


def release_data(data: Path, code: str) -> dict[str, Any]:
    """One language's `<code>.json` of a release's data folder (its file names are lower case
    where the installed release's codes are not: "zh-cn" for "zh-CN")."""
    path = next(p for p in data.glob("*.json") if p.stem.lower() == code.lower())
    return json.loads(path.read_text(encoding="utf-8"))


def _ha_heard(case: SuiteCase, fixtures: FixtureHome, data: Path | None = None) -> dict[str, Any] | None:
    """The slots HA's matcher hears in the case's sentence when it hears the case's intent."""
    sentence = case.case.text
    slot_lists = {**fixtures.slot_lists,
                  "name": TextSlotList(name="name", values=[v[2] for v in fixtures.name_trie.find(sentence.lower())])}
    result = recognize_best(sentence, ha_intents(case.case.language, data), slot_lists=slot_lists,
                            intent_context=case.context or None, best_slot_name="name")
    if result is None or result.intent.name != case.case.intent:
        return None
    return {slot.name: slot.value for slot in result.entities.values()}


def ha_matches(case: SuiteCase, fixtures: FixtureHome, data: Path | None = None) -> bool:
    """HA's matcher on one sentence, scored as the suite's test_language_sentences.py scores it:
    the intent, every slot it matched (a list in the test: one of them) and no slot missing."""
    matched = _ha_heard(case, fixtures, data)
    return matched is not None and set(matched) == set(case.slots) \
        and all(_slot_fits(case.slots[name], value) for name, value in matched.items())


def as_ha_today(case: SuiteCase, fixtures: FixtureHome) -> SuiteCase:
    """The case expecting what HA's handler does today where the installed release reads the
    sentence otherwise than the suite's (2025.6.23): "mache die Rollläden im Wohnzimmer runter" is
    the shutters there now, every cover there then. The hub reads as today's HA does."""
    heard = _ha_heard(case, fixtures)
    if heard is None or ha_matches(case, fixtures):
        return case
    today = expect_suite(case.case.intent, heard, fixtures)
    return case if today is None else replace(case, case=replace(case.case, expected=today))


def _slot_fits(expected: Any, matched: Any) -> bool:
    if isinstance(expected, list):
        return set(expected) <= set(matched) if isinstance(matched, list) else matched in expected
    return expected in matched if isinstance(matched, list) else expected == matched


def chosen_languages(suite: Suite, wanted: Iterable[str] = ()) -> list[str]:
    available = suite.languages()
    return [lang for lang in wanted if lang in available] if wanted else available


# --- measuring -----------------------------------------------------------------------------------


@dataclass
class Scored:
    case: SuiteCase
    hub: bool | None  # None: not run that way
    hub_detected: bool | None
    ha: bool
    why: str  # the hub's miss (language given), else ""
    reply: str


async def measure_suite(suite: Suite, language: str, *, detected: bool = True, sample: int | None = None,
                        ha_data: Path | None = None) -> tuple[list[Scored], dict[str, int]]:
    """The scored sentences of one language (`sample`: about that many, spread evenly over the
    suite's files) through the hub (language given, and left out with the home preferring
    another language) and through HA's matcher."""
    fixtures = fixture_home(suite, language)
    loaded = load_cases(suite, fixtures, language)
    cases = loaded.cases[::-(-len(loaded.cases) // sample)] if sample else loaded.cases
    cases = [as_ha_today(case, fixtures) for case in cases]
    rig_options = {"area_aliases": fixtures.area_aliases, "floor_aliases": fixtures.floor_aliases}
    given: list[Outcome] = []
    async with Rig(fixtures.home, **rig_options) as rig:
        for case in cases:
            given.append(await rig.run(case.case))
    left: list[Outcome | None] = [None] * len(cases)
    if detected:
        async with Rig(fixtures.home, language_option=preferred_other(language), **rig_options) as rig:
            left = [await rig.run(case.case, give_language=False) for case in cases]
    scored = [Scored(case, g.ok, d.ok if d is not None else None, ha_matches(case, fixtures, ha_data),
                     g.why, g.result.reply) for case, g, d in zip(cases, given, left)]
    return scored, loaded.left_out
