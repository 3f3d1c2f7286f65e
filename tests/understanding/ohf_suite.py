"""OHF-Voice/intents' newest suite (`tests/<lang>/<Intent>/<slot combination>.yaml`, the copy in
`ohf_intents_tests/`), every file over its own home, through the hub and HA's matcher side by side.

Each file is its own small home (entities with name, domain, area, state, attributes; areas, one
of them maybe the speaker's, `context_area`; floors; running timers). Upstream's runner
(`tests/test_slot_combinations.py` there) checks only recognition and the rendered response, so
a file's home may lack the device its sentences act on ("turn on the lights in here" with no
light): such a home gets the device its slots describe (a device of that kind, in that area,
named "Zed <n>" so no sentence says it; an area with no device gets its voice satellite), timers its slots describe (and a second one they do not
mean, where they single one out), a to-do item to complete, a satellite to broadcast on. What HA's
intent handlers would do there is the expected outcome (`expect_file`): the service calls, the
timers left, an answer that acts on nothing. The hub gets every sentence through `Agent.ask`
(its fast path; the model is `SilentEngine`, which never acts) with the speaker's area as
`TurnRequest.area` for combinations said there; every intent is scored.

HA's matcher is hassil's `recognize_best` over the installed home-assistant-intents with the
file's slot lists and the speaker's area as context (as upstream's runner passes it), scored on
the intent and the slots the test lists (a domain it infers and the speaker's area aside).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from hassil import TextSlotList, recognize_best
from hassil.intents import SlotList

from hub.agent.types import TurnRequest, TurnResult
from hub.core.tools import ToolContext
from hub.home.entities import BackendError, Entity
from hub.home.normalize import fold
from hub.home.policy import CONFIRMATION_REQUIRED
from hub.locales import SUPPORTED_LANGUAGES, format_number, template
from hub.understanding.recognition import intents_language
from tests.understanding.ha_suite import ha_intents
from tests.understanding.harness import SOURCE, RecordingBackend, Rig, SampleHome, as_set, service_call
from tests.understanding.harness import _comparable as comparable

VENDORED = Path(__file__).with_name("ohf_intents_tests")
SPEAKER_AREA = "__context_area__"  # upstream's name for the speaker's area when a file marks none
_ADDED = "Zed"  # the name of a device a file's home gets ("Zed 1"): no sentence says it
_SECONDS = (("hours", 3600), ("minutes", 60), ("seconds", 1))
_TIMER_S = 300  # a timer the file does not describe runs this long
_MEDIA = {"HassMediaPause": "playing", "HassMediaUnpause": "paused", "HassMediaNext": "playing",
          "HassMediaPrevious": "playing", "HassMediaPlayerMute": "playing",
          "HassMediaPlayerUnmute": "playing", "HassSetVolume": "playing",
          "HassSetVolumeRelative": "playing", "HassMediaSearchAndPlay": "idle"}
# what a file's device of a kind has unless the file says otherwise: the suite's thermostats have
# no limits; a player's volume is known (HA's relative volume adds to it)
_DEFAULT_ATTRIBUTES = {"climate": {"min_temp": 0.0, "max_temp": 100.0}, "media_player": {"volume_level": 0.5}}
# the kind of device an intent acts on when no name or domain says it
_IMPLIED = {"HassLightSet": "light", "HassClimateSetTemperature": "climate",
            "HassClimateGetTemperature": "climate", "HassSetPosition": "cover", "HassFanSetSpeed": "fan",
            "HassVacuumStart": "vacuum", "HassVacuumReturnToBase": "vacuum", "HassVacuumCleanArea": "vacuum",
            "HassLawnMowerStartMowing": "lawn_mower", "HassLawnMowerDock": "lawn_mower",
            "HassGetWeather": "weather", "HassListAddItem": "todo", "HassListCompleteItem": "todo",
            "HassListRemoveItem": "todo", **{i: "media_player" for i in _MEDIA}}
_SERVICES = {"HassFanSetSpeed": "turn_on", "HassVacuumCleanArea": "clean_area",
             "HassLawnMowerStartMowing": "start_mowing", "HassLawnMowerDock": "dock",
             "HassMediaPlayerMute": "volume_mute", "HassMediaPlayerUnmute": "volume_mute",
             "HassMediaSearchAndPlay": "play_media", "HassListAddItem": "add_item",
             "HassShoppingListAddItem": "add_item", "HassListCompleteItem": "update_item",
             "HassShoppingListCompleteItem": "update_item", "HassListRemoveItem": "remove_item"}
_TIMERS = ("HassCancelTimer", "HassCancelAllTimers", "HassIncreaseTimer", "HassDecreaseTimer",
           "HassPauseTimer", "HassUnpauseTimer", "HassTimerStatus")
_ANSWERS = ("HassGetCurrentDate", "HassGetCurrentTime", "HassNevermind", "HassRespond")
_SHOPPING_LIST = "todo.shopping_list"
# an intent whose area slot is not where its device is: the room a vacuum cleans (HA's
# CleanAreaIntentHandler matches the vacuum by name alone, the area a preference)
_NOT_A_PLACE = frozenset({"HassVacuumCleanArea"})
_SATELLITE = "assist_satellite.zed_satellite"


# --- the suite's files ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteFile:
    language: str  # the hub's
    intent: str
    combo: str
    data: dict[str, Any]
    speaker: bool  # its combination is said in the speaker's area
    domain: str | None = None  # the kind of device its combination means where a test leaves it out

    @property
    def name(self) -> str:
        return f"{self.intent}/{self.combo}"


@lru_cache(maxsize=None)
def _schema(source: Path) -> dict[str, Any]:
    return yaml.safe_load((source / "intents.yaml").read_text(encoding="utf-8"))


def suite_code(language: str) -> str:
    code = intents_language(language)
    assert code is not None
    return code


def suite_files(language: str, source: Path = VENDORED) -> list[SuiteFile]:
    schema = _schema(source)
    files = []
    for path in sorted((source / suite_code(language)).glob("*/*.yaml")):
        intent, combo = path.parent.name, path.stem
        combos = (schema.get(intent) or {}).get("slot_combinations") or {}
        spec = combos.get(combo) or {}
        files.append(SuiteFile(language, intent, combo, yaml.safe_load(path.read_text(encoding="utf-8")),
                               bool(spec.get("context_area")), _inferred_domain(spec)))
    return files


def _inferred_domain(combination: dict[str, Any]) -> str | None:
    """The one domain a combination with a `domain` slot infers (`inferred_domains`: "close the
    shutters" is a cover's), for a test that does not list the slot (fr device_class_cover)."""
    inferred = combination.get("inferred_domains") or {}
    if "domain" not in (combination.get("slots") or ()):
        return None
    return next((kinds[0] for kinds in (inferred.get(k) for k in ("required", "complete", "optional"))
                 if kinds and len(kinds) == 1), None)


def languages(source: Path = VENDORED) -> list[str]:
    return [lang for lang in SUPPORTED_LANGUAGES if (source / suite_code(lang)).is_dir()]


# --- a file's home --------------------------------------------------------------------------------


@dataclass
class FileHome:
    home: SampleHome
    speaker_area: str | None  # the area said in (a name of `home.areas`), for combinations said there
    entities: list[Entity]
    timers: list[dict[str, Any]]  # as the file writes them (and those its slots describe)
    list_items: dict[str, list[str]] = field(default_factory=dict)  # to-do entity → its items
    added: int = 0

    def by_name(self, name: Any) -> list[Entity]:
        wanted = fold(str(name))
        return [e for e in self.entities if fold(e.name) == wanted]

    def add(self, domain: str, area: str | None, device_class: str | None = None, name: str | None = None,
            state: str = "off", attributes: dict[str, Any] | None = None) -> Entity:
        self.added += 1
        name = name or f"{_ADDED} {self.added}"
        attributes = {**_DEFAULT_ATTRIBUTES.get(domain, {}), **(attributes or {})}
        entity = Entity(_entity_id(domain, name, self.entities), name, state, attributes, area=area,
                        device_class=device_class, source=SOURCE)
        self.entities.append(entity)
        return entity


def _slug(name: str) -> str:
    return re.sub(r"\W+", "_", name.strip().casefold()).strip("_") or "x"


def _entity_id(domain: str, name: str, taken: list[Entity]) -> str:
    base = f"{domain}.{_slug(name)}"
    ids = {e.entity_id for e in taken}
    number, unique = 1, base
    while unique in ids:
        number += 1
        unique = f"{base}_{number}"
    return unique


def file_home(f: SuiteFile) -> FileHome:
    data = f.data
    floors = [str(x["name"]) for x in data.get("floors") or []]
    areas = [str(x["name"]) for x in data.get("areas") or []]
    area_floor = {str(a["name"]): str(a["floor"]) for a in data.get("areas") or [] if a.get("floor")}
    marked = [str(a["name"]) for a in data.get("areas") or [] if a.get("context_area")]
    speaker = (marked[0] if marked else SPEAKER_AREA) if f.speaker else None
    if speaker and speaker not in areas:
        areas.append(speaker)
    entities: list[Entity] = []
    for item in data.get("entities") or []:
        domain, name = str(item["domain"]), str(item["name"])
        attributes = dict(item.get("attributes") or {})
        attributes = {**_DEFAULT_ATTRIBUTES.get(domain, {}), **attributes}
        if "volume_level" in attributes:  # the suite writes a percentage ("50", 90); HA's level is 0–1
            level = float(attributes["volume_level"])
            attributes["volume_level"] = level / 100 if level > 1 else level
        state = item.get("state", item.get("state_with_unit", _default_state(f.intent, domain)))
        entities.append(Entity(_entity_id(domain, name, entities), name, str(state), attributes,
                               area=str(item["area"]) if item.get("area") else None,
                               device_class=attributes.get("device_class") or item.get("device_class"),
                               source=SOURCE))
    if f.intent not in _NOT_A_PLACE:
        entities = _placed(entities, data.get("tests") or [], areas, area_floor)
    home = FileHome(SampleHome(f.language, (), tuple(areas), tuple(floors), area_floor), speaker, entities,
                    [dict(t) for t in data.get("timers") or []])
    for area in areas:  # an area is known by its devices: a room with none has its voice satellite
        if not any(e.area == area for e in entities):
            home.add("assist_satellite", area, state="idle")
    return home


def _placed(entities: list[Entity], tests: list[dict[str, Any]], areas: list[str],
            area_floor: dict[str, str]) -> list[Entity]:
    """A named device with no area that the file's sentences say in an area (or on a floor) is
    there, and said in several places, the home has one of that name in each: a file's home holds only what recognition needs (upstream's runner checks no more),
    and HA's handler finds no device of that name in an area it is not in. `areas` and
    `area_floor` gain the places it takes (a floor with no area gets one)."""
    said: dict[str, set[tuple[str, str]]] = {}
    for test in tests:
        slots = test.get("slots") or {}
        if isinstance(slots.get("name"), str):
            places = {(key, str(slots[key])) for key in ("area", "floor") if isinstance(slots.get(key), str)}
            said.setdefault(fold(slots["name"]), set()).update(places)
    placed: list[Entity] = []
    for entity in entities:
        places = sorted(said.get(fold(entity.name), set()))
        if entity.area is not None or not places:
            placed.append(entity)
            continue
        for number, (key, place) in enumerate(places):  # said in several: one of that name in each
            area = place if key == "area" else _area_on(place, areas, area_floor)
            entity_id = entity.entity_id if number == 0 else _entity_id(entity.domain, entity.name,
                                                                         [*entities, *placed])
            placed.append(replace(entity, entity_id=entity_id, area=area))
            if area not in areas:
                areas.append(area)
    return placed


def _area_on(floor: str, areas: list[str], area_floor: dict[str, str]) -> str:
    area = next((a for a in areas if area_floor.get(a) == floor), None)
    if area is None:
        area = f"{_ADDED} {floor}"
        area_floor[area] = floor
    return area


def _default_state(intent: str, domain: str) -> str:
    if domain == "media_player":
        return _MEDIA.get(intent, "playing")
    return {"cover": "closed", "lock": "locked", "vacuum": "docked", "lawn_mower": "docked",
            "todo": "0", "person": "home", "weather": "sunny"}.get(domain, "off")


def sealed(home: FileHome) -> SampleHome:
    """The home as the rig loads it, with what `expect_file` added."""
    return replace(home.home, entities=tuple(home.entities))


# --- what HA would do -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TimerState:
    name: str | None
    area: str | None
    seconds: int  # left
    active: bool
    start: int  # the duration it was started with


@dataclass(frozen=True)
class Want:
    """What HA's handler does: service calls (entity id, service, data); a timer started for
    `timer_s`; the timers left (`timers`); an answer that acts on nothing (`answer`, holding
    `reply_contains`). `calls_any`: several outcomes HA allows (a relative volume as a step up
    or as a new level)."""

    calls: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = ()
    calls_any: tuple[tuple[tuple[str, str], ...], ...] = ()  # (entity id, service) sets, data aside
    timer_s: int | None = None
    timers: tuple[TimerState, ...] | None = None
    answer: bool = False
    reply_contains: str | None = None
    refusal: bool = False  # HA's handler fails (no such timer, several): a reply that changes nothing


@dataclass(frozen=True)
class SuiteCase:
    file: SuiteFile
    text: str
    slots: dict[str, Any]
    want: Want
    running: tuple[TimerState, ...] = ()  # the timers running when it is said

    @property
    def intent(self) -> str:
        return self.file.intent


def load_cases(f: SuiteFile, home: FileHome) -> list[SuiteCase]:
    cases = []
    for test in f.data.get("tests") or []:
        slots = dict(test.get("slots") or {})
        timers = test.get("timers", home.timers)
        sentences = test.get("sentences") or []
        for number, sentence in enumerate(sentences):
            heard = ha_slots(str(sentence), f.language, slot_lists(home), home.speaker_area)
            said = _said(slots, sentence, f.language, heard)
            kinds = slots.get("device_class")
            if isinstance(kinds, list) and len(kinds) == len(sentences) > 1:
                said["device_class"] = kinds[number]  # one kind per sentence, in their order (fr, sk)
            if f.domain and "domain" not in said:  # the test's own, else what HA hears ("ventilateurs")
                said["domain"] = test.get("inferred_domain") or (
                    heard["domain"] if isinstance(heard.get("domain"), str) else f.domain)
            running = _running(f.intent, said, timers)
            want = expect(f.intent, said, home, running)
            cases.append(SuiteCase(f, str(sentence), slots, want, running))
    return cases


def _said(slots: dict[str, Any], sentence: str, language: str, heard: dict[str, Any]) -> dict[str, Any]:
    """A slot listing several values (areas, names, a number said two ways, "up" and "down" for
    sentences of both) means the one the sentence says, else the one HA's matcher hears (`heard`),
    else the first; a list of kinds is the kind HA hears, else stays a list."""
    text = f" {fold(sentence, language)} "
    said = dict(slots)
    for key, value in slots.items():
        if not isinstance(value, list) or len(value) < 2:
            continue
        if key in ("domain", "device_class"):
            said[key] = heard[key] if heard.get(key) in value else value
        else:
            named = [v for v in value if f" {fold(str(v), language)} " in text]
            if not named and heard.get(key) in value:
                named = [heard[key]]
            said[key] = (named or value)[0]
    return said


def _seconds(slots: dict[str, Any], prefix: str = "") -> int:
    return round(sum(float(slots.get(prefix + unit) or 0) * factor for unit, factor in _SECONDS))


def _running(intent: str, slots: dict[str, Any], timers: list[dict[str, Any]]) -> tuple[TimerState, ...]:
    """The timers running: the file's, else the one the slots describe (paused for a resume),
    beside another they do not mean when they single one out."""
    if intent not in _TIMERS:
        return ()
    if timers:
        return tuple(TimerState(t.get("name") or None, t.get("area") or None,
                                int(t.get("total_seconds_left") or _seconds(t, "start_") or _TIMER_S),
                                bool(t.get("is_active", intent != "HassUnpauseTimer")),
                                _seconds(t, "start_") or int(t.get("total_seconds_left") or _TIMER_S)) for t in timers)
    name = str(slots["name"]).strip() or None if slots.get("name") else None  # sv "pizza ": a name's spaces say nothing
    area = str(slots["area"]) if slots.get("area") else None
    start = _seconds(slots, "start_") or _TIMER_S
    active = intent != "HassUnpauseTimer"
    meant = TimerState(name, area, start, active, start)
    singled = name or area or _seconds(slots, "start_")
    return (meant, TimerState(None, None, start + 17 * 60, active, start + 17 * 60)) if singled else (meant,)


def expect(intent: str, slots: dict[str, Any], home: FileHome, running: tuple[TimerState, ...]) -> Want:
    if intent == "HassStartTimer":
        return Want(timer_s=_seconds(slots))
    if intent in _TIMERS:
        return _timer_want(intent, slots, running)
    if intent in _ANSWERS:
        return Want(answer=True)
    if intent == "HassBroadcast":
        satellites = [e for e in home.entities if e.domain == "assist_satellite"] or \
            [home.add("assist_satellite", None, name="Zed Satellite")]
        message = str(slots.get("message", ""))
        return Want(calls=tuple(sorted((e.entity_id, "announce", (("message", message),)) for e in satellites)))
    if intent.startswith("HassShoppingList"):
        shopping = [e for e in home.entities if e.entity_id == _SHOPPING_LIST] or \
            [home.add("todo", None, name="Shopping List", state="0")]
        return _list_want(intent, slots, shopping[0], home)
    found = targets(intent, slots, home)
    if not found:  # HA's handler finds nothing and says so
        return Want(answer=True, refusal=True)
    if intent in ("HassGetState", "HassGetWeather", "HassClimateGetTemperature"):
        return _answer(intent, found, home.home.language)
    if intent.startswith("HassList"):
        return _list_want(intent, slots, found[0], home)
    if intent == "HassSetVolumeRelative":
        return Want(calls_any=(tuple((e.entity_id, "volume_set") for e in found),
                               tuple((e.entity_id, _step_service(slots)) for e in found)))
    calls = []
    for entity in found:
        service, data = _service(intent, slots, entity)
        calls.append((entity.entity_id, service, tuple(sorted(data.items()))))
        if intent == "HassMediaSearchAndPlay":  # HA's handler searches first, then plays the first result
            calls.append((entity.entity_id, "search_media", ()))
    return Want(calls=tuple(sorted(calls)))


def _step_service(slots: dict[str, Any]) -> str:
    step = slots.get("volume_step")
    return "volume_down" if step == "down" or (isinstance(step, (int, float)) and step < 0) else "volume_up"


def _service(intent: str, slots: dict[str, Any], entity: Entity) -> tuple[str, dict[str, Any]]:
    if intent == "HassLightSet" and "temperature" in slots:
        return "turn_on", {"color_temp_kelvin": int(slots["temperature"])}
    if intent == "HassFanSetSpeed":  # HA's handler: fan.turn_on with the percentage
        return "turn_on", {"percentage": int(slots["percentage"])}
    if intent in ("HassMediaPlayerMute", "HassMediaPlayerUnmute"):
        return "volume_mute", {"is_volume_muted": intent == "HassMediaPlayerMute"}
    if intent == "HassVacuumCleanArea":
        return "clean_area", {}
    if intent == "HassMediaSearchAndPlay":
        return "play_media", {}
    if intent in _SERVICES:
        return _SERVICES[intent], {}
    if intent == "HassSetVolume":
        slots = {**slots, "volume_level": slots.get("volume_level", slots.get("volume"))}
    service, data = service_call(intent, slots, entity)
    assert service is not None, f"{intent} {slots}: no service for {entity.entity_id}"
    return service, data


def _answer(intent: str, found: list[Entity], language: str) -> Want:
    if intent == "HassGetWeather" and found:
        temperature = found[0].attributes.get("temperature")
        return Want(answer=True, reply_contains=format_number(temperature, language)
                    if isinstance(temperature, (int, float)) else None)
    if intent == "HassClimateGetTemperature" and len(found) == 1:
        current = found[0].attributes.get("current_temperature")
        return Want(answer=True, reply_contains=format_number(current, language)
                    if isinstance(current, (int, float)) else None)
    return Want(answer=True)


def _list_want(intent: str, slots: dict[str, Any], todo: Entity, home: FileHome) -> Want:
    item = str(slots.get("item", "")).strip()
    if "Complete" in intent or "Remove" in intent:
        home.list_items.setdefault(todo.entity_id, []).append(item)
    data: dict[str, Any] = {"item": item}
    if "Complete" in intent:
        data["status"] = "completed"
    return Want(calls=((todo.entity_id, _SERVICES[intent], tuple(sorted(data.items()))),))


def targets(intent: str, slots: dict[str, Any], home: FileHome) -> list[Entity]:
    """The entities HA's handler matches (a device added when the file's home has none):
    name, area (the speaker's for a combination said there), floor, domain, device class; a
    media command with no name or area: the players in the state it needs, in the speaker's
    area first."""
    domains = as_set(slots.get("domain")) or ({_IMPLIED[intent]} if intent in _IMPLIED else set())
    if domains == {"cover"} and intent == "HassSetPosition":
        domains = {"cover", "valve"}  # HA's handler sets either (a device added is a cover)
    classes = as_set(slots.get("device_class"))
    if intent in _NOT_A_PLACE:  # the area is the room to clean, and the home has it
        _has_area(home, str(slots.get("area") or home.speaker_area))
        slots = {k: v for k, v in slots.items() if k != "area"}
        area: str | None = None
    else:
        area = str(slots["area"]) if slots.get("area") else home.speaker_area
    floor = str(slots["floor"]) if slots.get("floor") else None
    if slots.get("name"):
        found = [e for e in home.by_name(slots["name"]) if not domains or e.domain in domains or
                 intent in ("HassTurnOn", "HassTurnOff", "HassGetState")]
        if found and area and slots.get("area"):
            found = [e for e in found if e.area == area]
            if not found:
                return []  # HA's handler: "no device called … in the … area"
        if found and floor:
            found = [e for e in found if e.area and home.home.area_floor.get(e.area) == floor]
            if not found:
                return []
        if found:
            return found[:1] if intent in ("HassGetWeather",) else found
        domain = next(iter(sorted(domains)), "light")
        return [home.add(domain, area, next(iter(classes), None), name=str(slots["name"]),
                         state=_default_state(intent, domain))]
    pool = [e for e in home.entities if (not domains or e.domain in domains)
            and (not classes or e.device_class in classes)]
    if intent in ("HassTurnOn", "HassTurnOff") and not domains:
        pool = [e for e in pool if e.domain in ("light", "switch", "fan")]
    if intent in _MEDIA and intent != "HassMediaSearchAndPlay" and not slots.get("area"):
        pool = [e for e in pool if e.state == _MEDIA[intent]] or pool
        here = [e for e in pool if area and e.area == area]
        pool = here or pool
    elif area:
        pool = [e for e in pool if e.area == area]
    if floor:
        pool = [e for e in pool if e.area and home.home.area_floor.get(e.area) == floor]
    if intent in ("HassGetWeather", "HassClimateGetTemperature") and pool:
        return pool
    if pool:
        return pool
    domain = next(iter(sorted(domains)), "light")
    where = area or (next((a for a, f in home.home.area_floor.items() if f == floor), None) if floor else None)
    if floor and where is None:
        where = f"{_ADDED} {floor}"
        home.home = replace(home.home, areas=(*home.home.areas, where),
                            area_floor={**home.home.area_floor, where: floor})
    attributes = {"temperature": 20, "current_temperature": 20} \
        if domain == "climate" else {}
    return [home.add(domain, where, next(iter(sorted(classes)), None), state=_default_state(intent, domain),
                     attributes=attributes)]


def _has_area(home: FileHome, area: str) -> None:
    """The home has `area` (an area is known by its devices: its voice satellite)."""
    if area not in home.home.areas:
        home.home = replace(home.home, areas=(*home.home.areas, area))
    if not any(e.area == area for e in home.entities):
        home.add("assist_satellite", area, state="idle")


def _timer_want(intent: str, slots: dict[str, Any], running: tuple[TimerState, ...]) -> Want:
    """HA's `_find_timer(s)`: by name, area and starting duration (a pause or resume first by
    whether it runs); no timer or several: HA's handler fails and nothing changes (the hub's
    "which one?" or "couldn't find" is as right)."""
    if intent == "HassTimerStatus":  # none fits: HA answers with no timers, the hub that it found none
        return Want(answer=True, timers=running, refusal=not _find_timers(slots, running))
    if intent == "HassCancelAllTimers":
        meant = _find_timers(slots, running)
        return Want(timers=tuple(t for t in running if t not in meant))
    one = _find_timer(intent, slots, running)
    if one is None:
        return Want(answer=True, timers=running, refusal=True)
    delta = _seconds(slots) * (1 if intent == "HassIncreaseTimer" else -1)
    changed = {"HassCancelTimer": None,
               "HassIncreaseTimer": replace(one, seconds=one.seconds + delta),
               "HassDecreaseTimer": replace(one, seconds=one.seconds + delta) if one.seconds + delta > 0 else None,
               "HassPauseTimer": replace(one, active=False),
               "HassUnpauseTimer": replace(one, active=True)}[intent]
    return Want(timers=tuple(changed if t is one else t for t in running if t is not one or changed))


def _find_timer(intent: str, slots: dict[str, Any], running: tuple[TimerState, ...]) -> TimerState | None:
    found = list(running)
    if intent in ("HassPauseTimer", "HassUnpauseTimer"):
        found = [t for t in found if t.active == (intent == "HassPauseTimer")]
        if len(found) == 1:
            return found[0]
    for key, fits in (("name", lambda t, v: fold(t.name or "") == fold(str(v))),
                      ("area", lambda t, v: fold(t.area or "") == fold(str(v)))):
        if slots.get(key):
            found = [t for t in found if fits(t, slots[key])]
            if len(found) == 1:
                return found[0]
    start = _seconds(slots, "start_")
    if start:
        found = [t for t in found if t.start == start]
    return found[0] if len(found) == 1 else None  # several: the asking device's (the rig's asks from none)


def _find_timers(slots: dict[str, Any], running: tuple[TimerState, ...]) -> list[TimerState]:
    found = list(running)
    if slots.get("name"):
        found = [t for t in found if fold(t.name or "") == fold(str(slots["name"]))]
    if slots.get("area"):
        found = [t for t in found if fold(t.area or "") == fold(str(slots["area"]))]
    start = _seconds(slots, "start_")
    if start:
        found = [t for t in found if t.start == start]
    return found


# --- HA's matcher ---------------------------------------------------------------------------------


def slot_lists(home: FileHome) -> dict[str, SlotList]:
    return {
        "name": TextSlotList.from_tuples([(e.name, e.name, {"domain": e.domain}) for e in home.entities
                                          if not e.name.startswith(_ADDED)], allow_template=False),
        "area": TextSlotList.from_strings([a for a in home.home.areas if not a.startswith(_ADDED)]),
        "floor": TextSlotList.from_strings(list(home.home.floors)),
    }


def _ha_best(text: str, language: str, lists: dict[str, SlotList], speaker_area: str | None) -> Any:
    return recognize_best(text, ha_intents(language), slot_lists=lists,
                          intent_context={"area": speaker_area or SPEAKER_AREA}, best_slot_name="name")


def ha_slots(text: str, language: str, lists: dict[str, SlotList], speaker_area: str | None) -> dict[str, Any]:
    """The slots HA's matcher hears in `text` (none if it matches nothing)."""
    result = _ha_best(text, language, lists, speaker_area)
    return {name: slot.value for name, slot in result.entities.items()} if result is not None else {}


def ha_matches(case: SuiteCase, lists: dict[str, SlotList], speaker_area: str | None) -> bool:
    result = _ha_best(case.text, case.file.language, lists, speaker_area)
    if result is None or result.intent.name != case.intent:
        return False
    matched = {name: slot.value for name, slot in result.entities.items()}
    for name, expected in case.slots.items():
        value = matched.get(name)
        if isinstance(expected, list):
            if value not in expected and not (isinstance(value, list) and set(value) <= set(expected)):
                return False
        elif not (value == expected or (isinstance(value, list) and expected in value)
                  or str(value).casefold() == str(expected).casefold()):
            return False
    return True


# --- the hub --------------------------------------------------------------------------------------


class SuiteBackend(RecordingBackend):
    """As Home Assistant would: every service of every domain is taken and recorded (the demo
    home's devices change state as before); to-do lists hold `list_items` and answer
    `todo.get_items`; a media player's `search_media` finds what was asked (one result)."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.list_items: dict[str, list[str]] = {}

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        if hasattr(self, f"_{entity.domain}"):
            try:
                await super().call_service(entity, service, data)
                return
            except BackendError as error:  # a service HA has that the demo device lacks
                if f"{entity.domain}.{service} is not supported" not in str(error):
                    raise
        self.calls.append((entity.entity_id, service, dict(data)))
        items = self.list_items.setdefault(entity.entity_id, [])
        if service == "add_item":
            items.append(str(data.get("item")))
        elif service in ("remove_item", "update_item") and data.get("item") in items:
            items.remove(str(data["item"]))
        current = self._store.get(entity.entity_id)
        if current is not None:
            state = str(len(items)) if entity.domain == "todo" else current.state
            self._store.update_state(entity.entity_id, state, {**current.attributes,
                                                                "last_service": f"{service}#{len(self.calls)}"})

    async def service_response(self, entity: Entity, service: str, data: dict[str, Any]) -> dict[str, Any]:
        if entity.domain == "todo" and service == "get_items":
            items = self.list_items.get(entity.entity_id, [])
            return {entity.entity_id: {"items": [{"summary": i, "uid": str(n), "status": "needs_action"}
                                                 for n, i in enumerate(items)]}}
        if entity.domain == "weather" and service == "get_forecasts":
            return {entity.entity_id: {"forecast": []}}
        if entity.domain == "media_player" and service == "search_media":  # a player's sources find it
            self.calls.append((entity.entity_id, service, dict(data)))
            found = {"title": data.get("search_query"), "media_content_id": "media-source://zed/1",
                     "media_content_type": "music", "media_class": (data.get("media_filter_classes") or ["music"])[0]}
            return {entity.entity_id: {"version": 1, "result": [found]}}
        return {}


@dataclass
class Scored:
    case: SuiteCase
    hub: bool
    ha: bool
    why: str
    reply: str
    seconds: float


def inflected_forms(name: str) -> list[str]:
    """The names a file's area or floor written as a template stands for (sk: "spáln(i|a|e|u)" is
    spálni, spálna, spálne, spálnu; sr: "прв(и|ом) спрат[у]"; "spáln(i|e)|spálň(a|u)", choices
    at the top): hassil parses list values as templates, so HA's matcher hears each of them.
    Empty for a plain name."""
    top = _top_choices(name)
    if len(top) > 1:
        return [form for choice in top for form in (inflected_forms(choice) or [choice])]
    group = re.search(r"\(([^()]*)\)|\[([^\[\]]*)\]", name)
    if group is None:
        return []
    choices = group[1].split("|") if group[1] is not None else ["", group[2]]  # (a|b), or [optional]
    return [form for choice in choices
            for form in (inflected_forms(name[:group.start()] + choice + name[group.end():])
                         or [name[:group.start()] + choice + name[group.end():]])]


def _top_choices(template: str) -> list[str]:
    """`template` split at its "|" outside any group."""
    choices, depth, start = [], 0, 0
    for at, char in enumerate(template):
        depth += (char in "([") - (char in ")]")
        if char == "|" and depth == 0:
            choices.append(template[start:at])
            start = at + 1
    return [*choices, template[start:]]


async def run_file(f: SuiteFile) -> list[Scored]:
    """Every sentence of one file through a hub over the file's home, and through HA's matcher."""
    home = file_home(f)
    cases = load_cases(f, home)
    lists = slot_lists(home)
    scored = []
    async with Rig(sealed(home)) as rig:
        rig.backend = SuiteBackend(rig.store)
        rig.store.register_backend(SOURCE, rig.backend)
        for area in home.home.areas:  # "spáln(i|a|e|u)": HA's lists read a name as a template
            if forms := inflected_forms(area):
                rig.store.set_area_aliases(area, forms)
        for floor in home.home.floors:
            if forms := inflected_forms(floor):
                rig.store.set_floor(floor, [a for a, f in home.home.area_floor.items() if f == floor], forms)
        for case in cases:
            started = time.perf_counter()
            ok, why, result = await _run(rig, case, home)
            scored.append(Scored(case, ok, ha_matches(case, lists, home.speaker_area), why, result.reply,
                                 time.perf_counter() - started))
    return scored


async def _run(rig: Rig, case: SuiteCase, home: FileHome) -> tuple[bool, str, TurnResult]:
    rig.backend.calls.clear()
    timers = rig.later.timers
    for timer in list(timers.timers()):
        timers.cancel(timer.id)
    for state in case.running:
        started = timers.add(state.start, state.name,
                             ToolContext("running-before", case.file.language, area=state.area))
        if state.start != state.seconds:
            timers.add_time(started.id, state.seconds - state.start)
        if not state.active:
            timers.pause(started.id)
    backend = rig.backend
    assert isinstance(backend, SuiteBackend)
    backend.list_items = {entity_id: list(items) for entity_id, items in home.list_items.items()}
    language = case.file.language
    request = TurnRequest(case.text, language=language, source="rest", client=SOURCE, area=home.speaker_area)
    result = await rig.agent.ask(request)
    if any(c.data.get("error") == CONFIRMATION_REQUIRED for c in result.tool_calls):
        yes = template(result.language, "policy.yes_words").split("|")[0]
        await rig.agent.ask(replace(request, text=yes, conversation_id=result.conversation_id))
    left = tuple(TimerState(t.name, t.area, round(timers.remaining_s(t)), t.active, t.duration_s)
                 for t in timers.timers())
    ok, why = score(case, result, list(rig.backend.calls), left)
    for entity in rig.home.entities:
        if rig.store.get(entity.entity_id) != entity:
            rig.store.update_state(entity.entity_id, entity.state, dict(entity.attributes))
    rig.agent.clear_conversations()
    return ok, why, result


def score(case: SuiteCase, result: TurnResult, calls: list[tuple[str, str, dict[str, Any]]],
          timers: tuple[TimerState, ...]) -> tuple[bool, str]:
    want = case.want
    if result.path == "model":
        return False, "went to the model"
    done = sorted((entity_id, service, _plain(data)) for entity_id, service, data in calls)
    if want.timers is not None and not _same_timers(timers, want.timers):
        return False, f"timers left {timers} (expected {want.timers}); reply {result.reply!r}"
    if want.timer_s is not None:
        started = [c.data.get("duration_s") for c in result.tool_calls if c.call.name == "start_timer" and c.ok]
        return (started == [want.timer_s] and not done), f"timer {started} (expected {want.timer_s}), calls {done}"
    if want.answer or want.timers is not None:
        if done:
            return False, f"acted: {done}"
        if not result.reply.strip() or not (result.ok or want.refusal):
            return False, f"no answer ({result.error})"
        if want.reply_contains and want.reply_contains not in result.reply:
            return False, f"answer {result.reply!r} lacks {want.reply_contains!r}"
        return True, ""
    if want.calls_any:
        made = tuple(sorted((e, s) for e, s, _ in done))
        return made in {tuple(sorted(c)) for c in want.calls_any}, f"did {done}, expected one of {want.calls_any}"
    wanted = sorted((e, s, _plain(dict(d))) for e, s, d in want.calls)
    if want.calls and any(s in ("play_media", "clean_area") for _, s, _ in want.calls):
        done = [(e, s, ()) for e, s, _ in done]  # what to play or clean: the player's business
    return done == wanted, f"did {done}, expected {wanted}; reply {result.reply!r}"


def _plain(data: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return comparable(data)


def _same_timers(left: tuple[TimerState, ...], wanted: tuple[TimerState, ...]) -> bool:
    """The same timers, their time left within 5 seconds (the turn takes a moment)."""
    if len(left) != len(wanted):
        return False
    key = lambda t: (t.name or "", t.area or "", t.seconds)  # noqa: E731
    return all(a.name == b.name and a.area == b.area and a.active == b.active and abs(a.seconds - b.seconds) <= 5
               and a.start == b.start for a, b in zip(sorted(left, key=key), sorted(wanted, key=key)))


def _first(values: list[Any], count: int) -> Any:
    """The values of the first `count` sentences; one sentence's is its value, as a test states one."""
    return values[0] if count == 1 else values[:count]


def with_sentences(f: SuiteFile, count: int) -> SuiteFile:
    """The file with only its first `count` sentences (a bounded sample)."""
    kept, left = [], count
    for test in f.data.get("tests") or []:
        if left <= 0:
            break
        every = test.get("sentences") or []
        sentences = every[:left]
        left -= len(sentences)
        slots = {key: _first(value, len(sentences)) if isinstance(value, list) and len(value) == len(every) > 1
                 else value for key, value in (test.get("slots") or {}).items()}  # one value per sentence (fr, sk)
        kept.append({**test, "sentences": sentences, "slots": slots})
    return replace(f, data={**f.data, "tests": kept})
