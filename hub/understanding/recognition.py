"""Recognition for the fast path: HA's sentence templates matched by hassil against the home.

Like Home Assistant's default agent, the home's entity names (with their domain and device class
as context), areas and floors are slot lists, and HA's templates do the matching: two template
sets per language, each an `Intents` of its own (their expansion rules and lists differ under the
same names), the best match of either taken (`_best_first`):
- the installed home-assistant-intents, with the hub's own templates for what they miss
  (`hub/locales/sentences/`);
- release 2025.6.23, shipped with the hub (`hub/locales/intents_2025_6/`): later releases
  dropped sentences people still say ("are any batteries low?", "turn on the first floor
  lights").
Names carry the spoken variants of `hub.home.spoken_names`; a name slot's value is the set of
entity ids it stands for. Only the intents the hub can carry out or answer are loaded (once per
language, cached for the process), narrowed to the domains the home has.

hassil tries every value of a slot list wherever a name may start (after a prefix such as
Arabic "لل", at every word): at 1,000 entities, 8,000 spoken forms, that was most of a turn. So
each utterance is matched against only the names whose letters it contains (`Names.said_in`),
and the names are built once per store version for every language.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from hassil.filter import filter_intents
from hassil.intents import Intents, SlotList, TextSlotList, TextSlotValue
from hassil.models import UnmatchedTextEntity
from hassil.recognize import RecognizeResult, recognize_all
from hassil.util import fold_case
from home_assistant_intents import get_intents, get_languages

from hub.home.entities import Entity, Floor
from hub.understanding import template_cache
from hub.understanding.assist_plans import ASSIST_INTENTS, TIMER_INTENTS
from hub.understanding.compact_templates import Shared, compact
from hub.understanding.device_intents import DEVICE_INTENTS, SAID_ANYWHERE
from hub.home.normalize import fold
from hub.home.spoken_names import name_variants, spellings

ACTION_INTENTS = frozenset({
    "HassTurnOn", "HassTurnOff", "HassLightSet", "HassClimateSetTemperature", "HassSetPosition",
    "HassMediaPause", "HassMediaUnpause", "HassMediaNext", "HassMediaPrevious", "HassSetVolume",
    "HassVacuumStart", "HassVacuumReturnToBase",
    *ASSIST_INTENTS, *DEVICE_INTENTS,
})
QUESTION_INTENTS = frozenset({"HassGetState", "HassClimateGetTemperature", "HassGetCurrentTime",
                              "HassGetCurrentDate", "HassGetWeather"})
HANDLED_INTENTS = ACTION_INTENTS | QUESTION_INTENTS | {"HassNevermind", "HassRespond"}
MAX_RESULTS = 24  # recognitions looked at per utterance (a handful in practice)
_ANY_AREA = {"area": {"value": "", "text": ""}}
_SAID_ANYWHERE_DOMAINS = frozenset({"media_player", "fan"})
# said with no place, these mean the home's one thermostat: tried in its area (`climate_context`)
_ONE_THERMOSTAT = frozenset({"HassClimateSetTemperature", "HassClimateSetFanMode"})
_KINDS = ("domain", "device_class")
_NO_NAMES = TextSlotList.from_tuples([], allow_template=False)
_STAND_IN = "qxq"  # a word no template says, for a name hassil's wildcard misses
_LOCALES = Path(__file__).resolve().parents[1] / "locales"
_OWN_SENTENCES = _LOCALES / "sentences"
OLDER_INTENTS = _LOCALES / "intents_2025_6"  # scripts/vendor_intents.py writes it


@dataclass(frozen=True)
class Names:
    """The home's spoken names as `name` slot values, each keyed by its letters (`_letters`)."""

    values: tuple[tuple[str, TextSlotValue], ...]
    spoken: tuple[tuple[str, frozenset[str]], ...]  # each spoken form, its entity ids; longest first

    def said_in(self, text: str) -> TextSlotList:
        """The slot list of the names whose letters `text` holds in a row: no other can match."""
        letters = _letters(text)
        return TextSlotList(name="name", values=[value for key, value in self.values if key in letters])


def _letters(text: str) -> str:
    """Letters and digits only, folded as hassil folds case before matching (so a name's key is
    in any text it can match, whatever the spaces, hyphens and punctuation)."""
    return "".join(ch for ch in fold_case(unicodedata.normalize("NFC", text)) if ch.isalnum())


@dataclass
class HomeData:
    """What recognition needs from the store, built once per store version (off the loop)."""

    version: int
    names: Names
    slot_lists: dict[str, SlotList]  # area, floor ("name": `names.said_in` each utterance)
    domains: frozenset[str]
    climate_context: dict[str, Any] | None  # the area of the only thermostat, if just one
    floors: dict[str, Floor]


TemplateSets = tuple[Intents, ...]  # the installed release's (with the hub's own), then 2025.6's


@dataclass
class LanguageIntents:
    intents: TemplateSets  # handled intents only
    climate_only: TemplateSets  # HassClimateSetTemperature alone, for the single-thermostat case
    timers: tuple[Intents | None, ...]  # per set: the timer intents alone, where one asks for the satellite's area
    anywhere: tuple[Intents | None, ...]  # per set: the media and fan intents alone, where one asks for it


def intents_language(language: str) -> str | None:
    """The intents package's code for `language` ("de-DE" → "de", "pt-BR" kept), if any."""
    available = get_languages()
    code = language.replace("_", "-")
    if code in available:
        return code
    base = code.split("-", 1)[0].lower()
    if base in available:
        return base
    return next((lang for lang in available if lang.split("-", 1)[0] == base), None)


def build_names(entities: list[Entity], area_names: Iterable[str]) -> Names:
    """Every entity's names and aliases with their spoken variants, for every language: one slot
    value per spoken form and kind of device, standing for every entity it may mean.

    `area_names`: the areas' names and aliases in any language; a variant that is only an area's
    name is left out (it would make the area mean one device).
    """
    area_keys = frozenset(fold(text) for text in area_names)
    ids: dict[tuple[str, str, str | None], set[str]] = defaultdict(set)
    spoken: dict[tuple[str, str, str | None], str] = {}
    for entity in entities:
        for written in (entity.name, *entity.aliases):
            for text in name_variants(written, area_keys):
                key = (text.casefold(), entity.domain, entity.device_class)
                ids[key].add(entity.entity_id)
                spoken.setdefault(key, text)
    values = []
    for key, entity_ids in ids.items():
        _, domain, device_class = key
        context: dict[str, Any] = {"domain": domain}
        if device_class:
            context["device_class"] = device_class
        value = TextSlotValue.from_tuple((spoken[key], frozenset(entity_ids), context), allow_template=False)
        values.append((_letters(spoken[key]), value))
    longest_first = sorted(((text, frozenset(ids[key])) for key, text in spoken.items()),
                           key=lambda item: -len(item[0]))
    return Names(tuple(values), tuple(longest_first))


def build_home_data(version: int, names: Names, entities: list[Entity],
                    areas: dict[str, tuple[str, ...]], floors: dict[str, Floor]) -> HomeData:
    """Slot lists as HA's default agent makes them: `name` (with domain context), `area`, `floor`."""
    area_names = [(text, area) for area, aliases in areas.items() for text in spellings((area, *aliases))]
    floor_names = [(text, floor) for floor, info in floors.items()
                   for text in spellings((floor, *info.aliases))]
    slot_lists: dict[str, SlotList] = {
        "area": TextSlotList.from_tuples(area_names, allow_template=False),
        "floor": TextSlotList.from_tuples(floor_names, allow_template=False),
    }
    thermostats = [e for e in entities if e.domain == "climate"]
    climate_context = None
    if len(thermostats) == 1 and thermostats[0].area:
        # with one thermostat, "set the temperature to 21" can only mean that one
        climate_context = {"area": {"value": thermostats[0].area, "text": thermostats[0].area}}
    return HomeData(version, names, slot_lists, frozenset(e.domain for e in entities), climate_context,
                    dict(floors))


def own_sentences(code: str) -> dict[str, Any]:
    """The hub's sentence templates for one language (`hub/locales/sentences/<code>.yaml`, and
    `sentences/devices/<code>.yaml`: the verbs people use for vacuums, mowers, valves, media and
    locks, before or after the name), hassil's format over the intents package's lists and
    rules: ways people say a command that the installed templates miss. {} if none."""
    merged: dict[str, Any] = {}
    for path in (_OWN_SENTENCES / f"{code.lower()}.yaml", _OWN_SENTENCES / "devices" / f"{code.lower()}.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
        for name, spec in ((data or {}).get("intents") or {}).items():
            merged.setdefault("intents", {}).setdefault(name, {"data": []})["data"].extend(spec["data"])
        merged.setdefault("lists", {}).update((data or {}).get("lists") or {})
    return merged


def add_own_sentences(data: dict[str, Any], code: str) -> dict[str, Any]:
    """The intents package's data for `code` (a fresh load: changed in place) with the hub's
    templates added to its intents, and their lists ("water", a valve's kind) to its lists."""
    own = own_sentences(code)
    for name, spec in (own.get("intents") or {}).items():
        data["intents"].setdefault(name, {"data": []})["data"].extend(spec["data"])
    data.setdefault("lists", {}).update(own.get("lists") or {})
    return data


def older_intents(code: str) -> dict[str, Any] | None:
    """Release 2025.6.23's handled intents for `code` (the installed package's code), if it had
    the language."""
    path = OLDER_INTENTS / f"{code}.json.gz"
    return json.loads(gzip.decompress(path.read_bytes())) if path.is_file() else None


def compiled_sets(code: str) -> TemplateSets | None:
    """Parse the handled intents of one language, each release's as its own set (the hub's own
    templates with the installed one's), every template compiled on use (seconds of CPU)."""
    data = get_intents(code)
    if not data:
        return None
    shared = Shared()  # a template both releases say is packed once
    releases = (add_own_sentences(data, code), older_intents(code))
    return tuple(compact(filter_intents(_kinds_as_slots(Intents.from_dict(d)), intent_names=HANDLED_INTENTS), shared)
                 for d in releases if d)


def compiled_inputs(code: str) -> tuple[Path, ...]:
    """The files `compiled_sets(code)` reads besides the installed packages, and its code."""
    return (_OWN_SENTENCES / f"{code.lower()}.yaml", OLDER_INTENTS / f"{code}.json.gz", Path(__file__))


@lru_cache(maxsize=None)
def load_intents(code: str) -> LanguageIntents | None:
    """One language's handled intents, compiled on use (`hub.understanding.compact_templates`):
    read from the compiled copy on disk when it is there and current, else parsed (and written).

    Cached for the process: the templates do not depend on the home.
    """
    intents = template_cache.compiled(code, compiled_sets, compiled_inputs(code))
    if intents is None:
        return None
    return LanguageIntents(intents,
                           tuple(filter_intents(i, intent_names=_ONE_THERMOSTAT) for i in intents),
                           tuple(_asking_area(i, TIMER_INTENTS) for i in intents),
                           tuple(_asking_area(i, SAID_ANYWHERE) for i in intents))


def _kinds_as_slots(intents: Intents) -> Intents:
    """Blocks that require a kind of device as context but say no name ("is anything vibrating",
    de "entriegle alle Türen im Flur") have it as slots: HA's context holds only a matched
    name's domain and device class, so such a requirement means the kind the words say."""
    for intent in intents.intents.values():
        for block in intent.data:
            kinds = {key: block.requires_context[key] for key in _KINDS if key in block.requires_context}
            rules = {**intents.expansion_rules, **block.expansion_rules}
            if not kinds or any("name" in s.list_names(rules) for s in block.sentences):
                continue
            single = {key: value[0] if isinstance(value, list) and len(value) == 1 else value
                      for key, value in kinds.items()}
            if all(isinstance(value, str) for value in single.values()):
                for key, value in single.items():
                    del block.requires_context[key]
                    block.slots.setdefault(key, value)
    return intents


def _asking_area(intents: Intents, names: frozenset[str]) -> Intents | None:
    """The intents `names` alone if a template of theirs asks for the satellite's area: timers
    (da, nb: the hub keeps timers itself and needs none), and media and fan commands that name
    no device ("mute", "turn the volume up": the planner takes the home's one device of the kind)."""
    chosen = filter_intents(intents, intent_names=names)
    asks = any("area" in block.requires_context for intent in chosen.intents.values() for block in intent.data)
    return chosen if asks else None


def narrow(loaded: LanguageIntents, home: HomeData) -> TemplateSets:
    """Only the sentence blocks for domains the home has (cheap, shares parsed templates); a
    home's door and window sensors keep the covers' questions ("which windows are open?": the
    planner answers them from the sensors too)."""
    domains = home.domains | ({"cover"} if "binary_sensor" in home.domains else set())
    return tuple(filter_intents(intents, domains=domains) for intents in loaded.intents)


def _matches(text: str, sets: TemplateSets, slot_lists: dict[str, SlotList], language: str,
             **options: Any) -> list[RecognizeResult]:
    """The first `MAX_RESULTS` matches of each template set."""
    return [result for intents in sets for result in islice(
        recognize_all(text, intents, slot_lists=slot_lists, language=language, **options), MAX_RESULTS)]


def recognize(text: str, intents: TemplateSets, loaded: LanguageIntents, home: HomeData,
              language: str, context: dict[str, Any] | None = None) -> list[RecognizeResult]:
    """All strict matches of every set, best first (the newest release's, then names said
    outright, then the most literal text); those with a wildcard only when none matched without
    one (as HA's matcher prefers: "Alle Lichter blau färben" is no question whether all are in
    the zone "Lichter blau färben"). With one thermostat, a set that matches nothing tries its
    temperature templates in that thermostat's area. `context`: hassil's intent context (the speaker's area)."""
    slot_lists = {**home.slot_lists, "name": home.names.said_in(text)}
    results: list[tuple[int, RecognizeResult]] = []  # (release: the newest 0, the match)
    for release, (narrowed, climate_only, timers, anywhere) in enumerate(
            zip(intents, loaded.climate_only, loaded.timers, loaded.anywhere)):
        found = _matches(text, (narrowed,), slot_lists, language, intent_context=context)
        if not found and home.climate_context is not None:
            found = _matches(text, (climate_only,), slot_lists, language, intent_context=home.climate_context)
        for asking in (timers, anywhere if home.domains & _SAID_ANYWHERE_DOMAINS else None):
            if not found and asking is not None:
                found = _matches(text, (asking,), slot_lists, language, intent_context=_ANY_AREA)
        results += [(release, result) for result in found]
    literal = [(release, r) for release, r in results if not _wildcard(r)]
    # the newest release's reading first, as HA's matcher has only that one (zh "把空调设置为18度":
    # the room's air conditioning there, a device named 空调 in 2025.6); the older where it has none
    ranked = sorted(literal or results, key=lambda found: (
        found[0] if literal else 0, _best_first(found[1], in_room=context is not None)))
    return [result for _, result in ranked]


def recognize_unmatched(text: str, intents: TemplateSets, home: HomeData,
                        language: str, context: dict[str, Any] | None = None) -> list[RecognizeResult]:
    """Matches whose name (or area) is no slot value: the words said there are in
    `unmatched_entities`, for the resolver to read."""
    # a name in the list would have matched strictly: without the list the wildcard is much faster
    slot_lists = {**home.slot_lists, "name": _NO_NAMES}
    return [result for result in _matches(text, intents, slot_lists, language, allow_unmatched_entities=True,
                                          intent_context=context) if result.unmatched_entities]


def recognize_masked(text: str, names: Sequence[str], intents: TemplateSets, home: HomeData,
                     language: str) -> list[RecognizeResult]:
    """`recognize_unmatched` with a name the resolver read (`names`, words of `text`) stood in for
    by a plain word, then put back: hassil misses a wildcard name that starts with letters its
    template may say after it (Swedish "{name}[e|me][t|n][s]": "tänd skrivbordslampan")."""
    slot_lists = {**home.slot_lists, "name": _NO_NAMES}
    for word in names[:2]:
        masked = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", _STAND_IN, text, count=1)
        found = []
        for result in _matches(masked, intents, slot_lists, language, allow_unmatched_entities=True):
            name = result.unmatched_entities.get("name")
            if isinstance(name, UnmatchedTextEntity) and str(name.text).strip() == _STAND_IN:
                found.append(replace(result, unmatched_entities={**result.unmatched_entities,
                                                                 "name": replace(name, text=word)}))
        if found:
            return found
    return []


def _wildcard(result: RecognizeResult) -> bool:
    return any(e.is_wildcard for e in result.entities.values())


def _best_first(result: RecognizeResult, in_room: bool) -> tuple[bool, bool, int, bool, int]:
    """The longest name from the list said; said in a room (`in_room`), a match with a place
    before one with none (the installed release's Polish "otwórz rolety" asks for the speaker's
    area, 2025.6's "[<area>] … rolety" meant every blind in the home: the newer reading is HA's);
    among wildcard names ("cancel the timer for closing the window"), the most literal template,
    as HA's matcher: "pour" is the template's word, not the timer's name."""
    name = result.entities.get("name")
    listed = -len(str(name.text)) if name is not None and not name.is_wildcard else 0
    nowhere = in_room and not {"area", "floor"} & result.entities.keys()
    return (_wildcard(result), name is None, listed, nowhere, -result.text_chunks_matched)


_OPTIONAL_OR_SLOT = re.compile(r"\[[^\[\]]*\]|\{[^{}]*\}")


def bare_template(result: RecognizeResult) -> bool:
    """Whether the sentence template matched says nothing but its slots ("[<the>] {name}")."""
    template = (result.intent_sentence.text or "") if result.intent_sentence is not None else ""
    previous = None
    while previous != template:
        previous, template = template, _OPTIONAL_OR_SLOT.sub("", template)
    return not template.strip(" ()|")
