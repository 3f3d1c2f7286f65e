"""Understanding, measured: sentences sampled from the installed home-assistant-intents templates,
over a test home per language, carried out by the real agent, scored against what generated them.

Each case is one random walk through one template of one intent: every alternative and optional
is a random choice, each slot list offers only the value the case picked (a device of the test
home, an area, a floor, a number, one of the intent data's own lists), and the expected outcome
follows from the intent and those slots alone, computed here the way Home Assistant's intent
handlers would act on the test home — never from what the hub does. The hub gets the text
through `Agent.ask` (fast path, confirmations, tools, policy, the demo backend's service calls);
its model is `SilentEngine`, which never acts, so only what the hub itself carries out scores.

Used by `tests/understanding/test_understanding.py` (a bounded sample, floors asserted) and
`bench/bench_understanding.py` (the full table).
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterable

import yaml
from hassil.expression import (
    Alternative,
    Expression,
    ListReference,
    Permutation,
    RuleReference,
    Sentence,
    Sequence,
    TextChunk,
)
from hassil.intents import IntentData, Intents, RangeSlotList, SlotList, TextSlotList, WildcardSlotList
from hassil.sample import sample_expression
from hassil.util import normalize_whitespace
from home_assistant_intents import get_intents

from hub.agent.agent import Agent
from hub.home.later import Later
from hub.agent.pending import ConfirmationHook
from hub.agent.types import TurnRequest, TurnResult
from hub.config import validate
from hub.options import hub_options
from hub.home.assist_tools import build_assist_tools
from hub.home.catalogue import build_home_tools
from hub.home.colors import COLORS, color_key
from hub.backends.demo.home import DemoBackend
from hub.home.entities import BackendError, Entity, EntityStore
from hub.understanding import language as language_id
from hub.understanding.fast_path import FastPath
from hub.understanding.follow_ups import FollowUps
from hub.home.places import SpeakerPlaces
from hub.home.policy import CONFIRMATION_REQUIRED, ActionPolicy
from hub.home.resolve import EntityResolver
from hub.core.tools import ToolContext, ToolRegistry
from hub.home.view import StoreHomeView
from hub.llm.types import Delta, Done, GenerationRequest, ModelInfo, TextDelta, Usage
from hub.locales import SUPPORTED_LANGUAGES, format_number, template
from hub.settings import RuntimeSettings

HOMES_FILE = Path(__file__).with_name("homes.yaml")
SOURCE = "understanding"

ACTION_INTENTS = (
    "HassTurnOn", "HassTurnOff", "HassLightSet", "HassClimateSetTemperature", "HassSetPosition",
    "HassMediaPause", "HassMediaUnpause", "HassMediaNext", "HassMediaPrevious", "HassSetVolume",
    "HassVacuumStart", "HassVacuumReturnToBase", "HassStartTimer",
)
QUESTION_INTENTS = ("HassGetState", "HassClimateGetTemperature", "HassGetCurrentDate",
                    "HassGetCurrentTime", "HassNevermind")
INTENTS = ACTION_INTENTS + QUESTION_INTENTS
MAIN_LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "pl", "pt")

# Slots whose sentences the hub has no tool for (color temperature) or that need another system
# (people's zones): those templates are not sampled.
_SKIPPED_SLOTS = frozenset({"color_temperature", "zone", "fan_speed", "fan_mode"})
_SILENT_REPLY = "(the model path)"

# Roles of homes.yaml: entity id, device index, area index, domain extras.
_DEVICES: tuple[tuple[str, int, dict[str, Any]], ...] = (
    ("light.ceiling", 0, {"state": "off"}),
    ("light.reading", 1, {"state": "on", "attributes": {"brightness": 128}}),
    ("switch.coffee", 0, {"state": "off"}),
    ("fan.bedroom", 2, {"state": "off"}),
    ("climate.thermostat", 1, {"state": "heat", "attributes": {
        "temperature": 20.0, "current_temperature": 19.5, "min_temp": 5.0, "max_temp": 35.0,
        "hvac_modes": ["off", "heat"]}}),
    ("cover.blinds", 2, {"state": "closed", "device_class": "blind",
                         "attributes": {"current_position": 0}}),
    ("media_player.speaker", 1, {"state": "playing", "attributes": {"volume_level": 0.3}}),
    ("vacuum.robot", 1, {"state": "docked"}),
)
_AREA_FLOOR = (0, 0, 1)  # kitchen and living room downstairs, bedroom upstairs


# --- the test homes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleHome:
    language: str
    entities: tuple[Entity, ...]
    areas: tuple[str, ...]
    floors: tuple[str, ...]
    area_floor: dict[str, str]  # area → floor

    def get(self, entity_id: str) -> Entity:
        return next(e for e in self.entities if e.entity_id == entity_id)


@lru_cache(maxsize=None)
def _homes() -> dict[str, dict[str, list[str]]]:
    return yaml.safe_load(HOMES_FILE.read_text(encoding="utf-8"))


def home_for(language: str, names: Callable[[str, str], str] | None = None) -> SampleHome:
    """The language's test home; `names(name, language)` rewrites how devices are named."""
    spec = _homes()[language]
    areas, floors = tuple(spec["areas"]), tuple(spec["floors"])
    entities = []
    for (entity_id, area, extra), name in zip(_DEVICES, spec["devices"]):
        written = names(name, language) if names else name
        entities.append(Entity(entity_id, written, extra.get("state", "off"),
                               dict(extra.get("attributes", {})), area=areas[area],
                               device_class=extra.get("device_class"), source=SOURCE))
    return SampleHome(language, tuple(entities), areas, floors,
                    {area: floors[_AREA_FLOOR[n]] for n, area in enumerate(areas)})


# --- name variants (issue #15 point 3): how the home writes a name vs. how people say it -------


def _words(name: str) -> list[str]:
    return name.split()


def written_upper(name: str, language: str) -> str:
    """"CEILING LIGHT" in the home, "ceiling light" said."""
    return name.upper()


def written_camel_case(name: str, language: str) -> str:
    """"CeilingLight" in the home, "ceiling light" said (one-word names stay as they are).

    Only where the script has case: its capitals mark where the words were. Arabic, Hebrew,
    Devanagari or Hangul words run together lose their boundaries — a misspelling, not a way of
    writing a name — so those names stay as they are (and the variant is not measured there)."""
    words = _words(name)
    if len(words) < 2 or not all(_cased(w) for w in words):
        return name
    return "".join(w[:1].upper() + w[1:] for w in words)


def _cased(word: str) -> bool:
    """Whether the word's first letter has an upper and a lower case."""
    first = next((ch for ch in word if ch.isalpha()), "")
    return first.upper() != first.lower()


def written_with_device_word(name: str, language: str) -> str:
    """"Ceiling light device" style: the home's name carries a device word the speaker drops."""
    return f"{name} {_DEVICE_WORD.get(language, 'device')}"


# a word a home's name may carry that people leave out when they say it
_DEVICE_WORD = {"en": "device", "de": "Gerät", "fr": "appareil", "es": "dispositivo",
                "nl": "apparaat", "it": "dispositivo", "pl": "urządzenie", "pt": "dispositivo"}

VARIANTS: dict[str, Callable[[str, str], str]] = {
    "upper case": written_upper,
    "CamelCase": written_camel_case,
    "device word": written_with_device_word,
}


# --- sampling ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What Home Assistant would do: service calls (entity id, service, data), or an answer."""

    calls: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = ()
    timer_s: int | None = None  # start_timer with this total duration
    answer: bool = False  # a question: answered by the hub, nothing done
    reply_contains: str | None = None
    running: tuple[tuple[str | None, int], ...] = ()  # timers (name, seconds) running when it is said
    cancelled: int | None = None  # the one of `running` it cancels (the others run on)


@dataclass(frozen=True)
class Case:
    language: str
    intent: str
    text: str
    slots: tuple[tuple[str, Any], ...]
    expected: Expected

    @property
    def words(self) -> int:
        """Words said; languages written without spaces count as long enough (3)."""
        return len(self.text.split()) if self.language not in ("ja", "zh", "th") else 3


@lru_cache(maxsize=None)
def _intents(language: str) -> Intents:
    code = FastPath.intents_language(language)  # the same code mapping as the hub's
    assert code is not None, f"home-assistant-intents has no {language}"
    return Intents.from_dict(get_intents(code))


def sample_cases(language: str, per_intent: int, seed: int = 0,
                 home: SampleHome | None = None, intents: Iterable[str] = INTENTS) -> list[Case]:
    """Up to `per_intent` cases per intent (distinct texts), each from a random template."""
    home = home or home_for(language)
    data = _intents(language)
    rng = random.Random(f"{language}:{seed}")
    cases: list[Case] = []
    for intent_name in intents:
        intent = data.intents.get(intent_name)
        if intent is None:
            continue
        templates = [(d, s) for d in intent.data for s in d.sentences if _usable(d, s, data)]
        seen: set[str] = set()
        for _ in range(per_intent * 8):
            if len(seen) >= per_intent or not templates:
                break
            intent_data, sentence = rng.choice(templates)
            case = _sample_one(rng, language, intent_name, intent_data, sentence, data, home)
            if case is not None and case.text.casefold() not in seen:
                seen.add(case.text.casefold())
                cases.append(case)
    return cases


def _usable(intent_data: IntentData, sentence: Sentence, data: Intents) -> bool:
    if intent_data.requires_context.get("area") or intent_data.requires_context.get("floor"):
        return False  # needs the satellite's area: no satellite here
    rules = {**data.expansion_rules, **intent_data.expansion_rules}
    lists = {**data.slot_lists, **intent_data.slot_lists}
    refs = list(_references(sentence.expression, rules))
    for ref in refs:
        if ref.slot_name in _SKIPPED_SLOTS or ref.list_name in _SKIPPED_SLOTS:
            return False
        if ref.list_name in intent_data.wildcard_list_names or isinstance(lists.get(ref.list_name), WildcardSlotList):
            return False
    return True


def _references(expression: Expression, rules: dict[str, Sentence], depth: int = 0) -> Iterable[ListReference]:
    if depth > 30:
        return
    if isinstance(expression, ListReference):
        yield expression
    elif isinstance(expression, RuleReference):
        rule = rules.get(expression.rule_name)
        if rule is not None:
            yield from _references(rule.expression, rules, depth + 1)
    elif isinstance(expression, (Sequence, Alternative, Permutation)):
        for item in expression.items:
            yield from _references(item, rules, depth + 1)


@dataclass
class _Walk:
    """One random walk's choices: the home values on offer and the slots actually said."""

    rng: random.Random
    language: str
    rules: dict[str, Sentence]
    lists: dict[str, SlotList]
    offered: dict[str, tuple[str, Any, str]]  # list name → (text, value, slot) for home lists
    said: dict[str, Any] = field(default_factory=dict)

    def text(self, expression: Expression) -> str:
        if isinstance(expression, TextChunk):
            return expression.original_text
        if isinstance(expression, Alternative):
            return self.text(self.rng.choice(expression.items))
        if isinstance(expression, Permutation):
            items = list(expression.items)
            self.rng.shuffle(items)
            return normalize_whitespace(" ".join(self.text(i) for i in items)).strip()
        if isinstance(expression, Sequence):
            return normalize_whitespace("".join(self.text(i) for i in expression.items))
        if isinstance(expression, RuleReference):
            return self.text(self.rules[expression.rule_name].expression)
        if isinstance(expression, ListReference):
            return self._list_text(expression)
        raise ValueError(f"unexpected expression {expression!r}")

    def _list_text(self, ref: ListReference) -> str:
        if ref.list_name in self.offered:
            text, value, _ = self.offered[ref.list_name]
            self.said[ref.slot_name] = value
            return text
        if ref.is_inline_range:
            start, stop, step = ref.get_inline_range() or (0, 0, 1)
            number = self.rng.randrange(start, stop + 1, step)
            self.said[ref.slot_name] = number
            return str(number)
        slot_list = self.lists[ref.list_name]
        if isinstance(slot_list, RangeSlotList):
            number = _pick_number(self.rng, ref.slot_name, slot_list)
            value = number * slot_list.multiplier if slot_list.multiplier else number
            self.said[ref.slot_name] = value
            return str(number)
        if isinstance(slot_list, TextSlotList) and slot_list.values:
            value = self.rng.choice(slot_list.values)
            spellings = list(sample_expression(value.text_in, self.lists, self.rules, self.language))
            self.said[ref.slot_name] = value.value_out
            if value.context:
                self.said.setdefault("_context", {}).update(value.context)
            return self.rng.choice(spellings)
        raise LookupError(f"no values for {{{ref.list_name}}}")


# numbers a person would say for each kind of slot (inside the hub's and the test home's limits)
_NUMBERS = {"brightness": (10, 90, 10), "position": (10, 90, 10), "volume_level": (10, 90, 10),
            "temperature": (16, 26, 1), "hours": (1, 3, 1), "minutes": (2, 45, 1), "seconds": (5, 50, 5)}


def _pick_number(rng: random.Random, slot: str, slot_list: RangeSlotList) -> int:
    low, high, step = _NUMBERS.get(slot, (slot_list.start, slot_list.stop, slot_list.step))
    low, high = max(low, slot_list.start), min(high, slot_list.stop)
    if low > high:
        low, high = slot_list.start, slot_list.stop
    return rng.randrange(low, high + 1, max(step, slot_list.step))


def _sample_one(rng: random.Random, language: str, intent_name: str, intent_data: IntentData,
                sentence: Sentence, data: Intents, home: SampleHome) -> Case | None:
    rules = {**data.expansion_rules, **intent_data.expansion_rules}
    lists = {**data.slot_lists, **intent_data.slot_lists}
    for _ in range(6):
        entity = _pick_entity(rng, intent_data, home)
        area = entity.area if entity is not None and entity.area else rng.choice(home.areas)
        floor = home.area_floor.get(area, rng.choice(home.floors))
        said_name = entity.name if entity is not None else ""
        offered = {"name": (said_name, entity.entity_id if entity else None, "name"),
                   "area": (area, area, "area"), "floor": (floor, floor, "floor")}
        walk = _Walk(rng, language, rules, lists, offered)
        text = walk.text(sentence.expression).strip()
        if "name" in walk.said and entity is None:
            continue
        slots = {**intent_data.slots, **walk.said}
        expected = expect(intent_name, slots, home)
        if expected is not None:
            slots.pop("_context", None)
            return Case(language, intent_name, text, tuple(sorted(slots.items(), key=str)), expected)
    return None


def _pick_entity(rng: random.Random, intent_data: IntentData, home: SampleHome) -> Entity | None:
    wanted = intent_data.requires_context
    domains = as_set(wanted.get("domain"))
    classes = as_set(wanted.get("device_class"))
    excluded = as_set(intent_data.excludes_context.get("domain"))
    fitting = [e for e in home.entities
               if (not domains or e.domain in domains) and e.domain not in excluded
               and (not classes or e.device_class in classes)]
    return rng.choice(fitting) if fitting else None


def as_set(value: Any) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, (list, tuple, set)):
        return {str(v) for v in value}
    if isinstance(value, dict):
        return {str(v) for v in value.get("value", ())} if "value" in value else set()
    return {str(value)}


# --- what Home Assistant would do ---------------------------------------------------------------

_ON = {"cover": "open_cover", "valve": "open_valve", "lock": "lock", "vacuum": "start",
       "button": "press", "input_button": "press"}
_OFF = {"cover": "close_cover", "valve": "close_valve", "lock": "unlock", "vacuum": "return_to_base"}
_MEDIA = {"HassMediaPause": "media_pause", "HassMediaUnpause": "media_play",
          "HassMediaNext": "media_next_track", "HassMediaPrevious": "media_previous_track"}
_INTENT_DOMAINS = {"HassLightSet": {"light"}, "HassClimateSetTemperature": {"climate"},
                   "HassClimateGetTemperature": {"climate"}, "HassSetPosition": {"cover", "valve"},
                   "HassSetVolume": {"media_player"}, "HassVacuumStart": {"vacuum"},
                   "HassVacuumReturnToBase": {"vacuum"}, **{i: {"media_player"} for i in _MEDIA}}
_ON_OFF_DOMAINS = {"light", "switch", "fan", "cover", "valve", "media_player", "climate", "input_boolean"}


def targets(intent: str, slots: dict[str, Any], home: SampleHome) -> list[Entity]:
    """The entities an intent with these slots acts on in `home`, as HA's handlers pick them."""
    if slots.get("name"):
        entity = home.get(str(slots["name"]))
        return [entity] if domain_fits(intent, slots, entity) else []
    found = [e for e in home.entities if domain_fits(intent, slots, e)]
    if "area" in slots:
        found = [e for e in found if e.area == slots["area"]]
    if "floor" in slots:
        found = [e for e in found if home.area_floor.get(e.area or "") == slots["floor"]]
    return found


def domain_fits(intent: str, slots: dict[str, Any], entity: Entity) -> bool:
    domains = as_set(slots.get("domain")) or _INTENT_DOMAINS.get(intent) or set()
    if intent in ("HassTurnOn", "HassTurnOff") and not domains:
        domains = _ON_OFF_DOMAINS if not slots.get("name") else {entity.domain}
    if domains and entity.domain not in domains:
        return False
    classes = as_set(slots.get("device_class"))
    return not classes or entity.device_class in classes


def expect(intent: str, slots: dict[str, Any], home: SampleHome) -> Expected | None:
    """The expected outcome, or None when the home has nothing it could apply to."""
    if intent == "HassStartTimer":
        total = (int(slots.get("hours", 0)) * 3600 + int(slots.get("minutes", 0)) * 60
                 + int(slots.get("seconds", 0)))
        return Expected(timer_s=total) if total else None
    if intent in ("HassGetCurrentDate", "HassGetCurrentTime", "HassNevermind"):
        return Expected(answer=True)
    found = targets(intent, slots, home)
    if not found:
        return None
    if intent == "HassGetState":
        return Expected(answer=True)
    if intent == "HassClimateGetTemperature":
        if len(found) != 1:
            return None
        current = found[0].attributes.get("current_temperature")
        return Expected(answer=True, reply_contains=format_number(current, home.language))
    calls = []
    for entity in found:
        service, data = service_call(intent, slots, entity)
        if service is None:
            return None
        calls.append((entity.entity_id, service, tuple(sorted(data.items()))))
    return Expected(calls=tuple(sorted(calls)))


def service_call(intent: str, slots: dict[str, Any], entity: Entity) -> tuple[str | None, dict[str, Any]]:
    if intent == "HassTurnOn":
        return _ON.get(entity.domain, "turn_on"), {}
    if intent == "HassTurnOff":
        return _OFF.get(entity.domain, "turn_off"), {}
    if intent == "HassLightSet":
        data: dict[str, Any] = {}
        if "brightness" in slots:
            data["brightness_pct"] = int(slots["brightness"])
        if isinstance(slots.get("color"), str):
            if color_key(slots["color"]) not in COLORS:
                return None, {}
            data["rgb_color"] = COLORS[color_key(slots["color"])]
        return ("turn_on", data) if data else (None, {})
    if intent == "HassClimateSetTemperature":
        return "set_temperature", {"temperature": float(slots["temperature"])}
    if intent == "HassSetPosition":
        service = "set_cover_position" if entity.domain == "cover" else "set_valve_position"
        return service, {"position": int(slots["position"])}
    if intent in _MEDIA:
        return _MEDIA[intent], {}
    if intent == "HassSetVolume":
        return "volume_set", {"volume_level": round(float(slots["volume_level"]) / 100, 2)}
    if intent == "HassVacuumStart":
        return "start", {}
    if intent == "HassVacuumReturnToBase":
        return "return_to_base", {}
    return None, {}


# --- the hub under test ------------------------------------------------------------------------


class SilentEngine:
    """The model path: answers every request with the same words and never calls a tool."""

    info = ModelInfo("silent", "silent", "", 4096, 4096, 0)
    uses_constrained_tools = False

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        self.requests.append(request)
        yield TextDelta(_SILENT_REPLY)
        yield Done(Usage(prompt_tokens=1, evaluated_prompt_tokens=1, completion_tokens=1))

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    async def close(self) -> None:
        pass


class RecordingBackend(DemoBackend):
    """The demo home's backend, with vacuums and valves too; `calls` records every service call.

    Every call echoes a state change (`last_service`), as a device reporting back would, so a
    call that changes nothing is not timed as the tools' wait for an echo that never comes.
    """

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        await super().call_service(entity, service, data)
        current = self._store.get(entity.entity_id)
        if current is not None:
            self._store.update_state(entity.entity_id, current.state,
                                     {**current.attributes, "last_service": f"{service}#{len(self.calls)}"})

    def _vacuum(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        states = {"start": "cleaning", "return_to_base": "returning", "stop": "idle", "pause": "paused"}
        if service not in states:
            raise BackendError(f"vacuum.{service} is not supported by {entity.entity_id}")
        return states[service], attrs

    def _humidifier(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        if service == "set_humidity":
            attrs["humidity"] = data["humidity"]
            return entity.state, attrs
        return self._on_off(entity, service, attrs)

    def _water_heater(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        if service == "set_temperature":
            attrs["temperature"] = data["temperature"]
            return entity.state, attrs
        return self._on_off(entity, service, attrs)

    def _on_off(self, entity: Entity, service: str, attrs: dict) -> tuple[str, dict]:
        if service not in ("turn_on", "turn_off"):
            raise BackendError(f"{entity.domain}.{service} is not supported by {entity.entity_id}")
        return service.removeprefix("turn_"), attrs

    def _valve(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        positions = {"open_valve": 100, "close_valve": 0}
        if service not in positions and service != "set_valve_position":
            raise BackendError(f"valve.{service} is not supported by {entity.entity_id}")
        attrs["current_position"] = positions.get(service, data.get("position"))
        return ("open" if attrs["current_position"] else "closed"), attrs


@dataclass
class Outcome:
    case: Case
    ok: bool
    why: str
    result: TurnResult
    seconds: float


class Rig:
    """One hub (the composition root's parts, minus the network) over one test home."""

    def __init__(self, home: SampleHome, *, language_option: str | None = None, fast_path: bool = True,
                 extra_entities: Iterable[Entity] = (), engine: Any = None,
                 area_aliases: dict[str, tuple[str, ...]] | None = None,
                 floor_aliases: dict[str, tuple[str, ...]] | None = None) -> None:
        self.home = home
        self._state_dir = tempfile.TemporaryDirectory(prefix="understanding-")
        config = validate({"language": language_option or home.language, "rate_limit_per_minute": 0,
                           "data_dir": self._state_dir.name, "turn_timeout": 60, "fast_path": fast_path})
        self.store = EntityStore()
        self.backend = RecordingBackend(self.store)
        self.store.register_backend(SOURCE, self.backend)
        self.store.replace_all([*home.entities, *(replace(e, source=SOURCE) for e in extra_entities)],
                               source=SOURCE)
        for floor in home.floors:  # the floor and area registries, as HA's have them
            self.store.set_floor(floor, [a for a, f in home.area_floor.items() if f == floor],
                                 (floor_aliases or {}).get(floor, ()))
        for area, aliases in (area_aliases or {}).items():
            self.store.set_area_aliases(area, aliases)
        resolver = EntityResolver(self.store)
        self.registry = ToolRegistry()
        policy = ActionPolicy.from_options(hub_options(config).policy)
        self.later = Later(hub_options(config).later, self.store)
        for tool in [*build_home_tools(self.store, resolver, policy, self.later.tracker),
                     *build_assist_tools(self.store, resolver, policy, self.later.tracker), *self.later.tools()]:
            self.registry.register(tool)
        self.options = hub_options(config).agent
        self.engine = engine or SilentEngine()
        self.fast_path = FastPath(self.store, self.registry, resolver)
        self.agent = Agent(engine=self.engine, registry=self.registry, settings=RuntimeSettings(hub_options(config).settings),
                           options=hub_options(config).agent, home=StoreHomeView(self.store, resolver), fast_path=self.fast_path,
                           confirmations=ConfirmationHook(policy, self.registry),
                           follow_ups=FollowUps(self.store, resolver, self.fast_path),
                           places=SpeakerPlaces(self.store, resolver))
        self.later.timers.run_commands(self._delayed_command)  # as the hub does (hub.app)

    async def _delayed_command(self, text: str, ctx: ToolContext) -> str:
        return (await self.agent.ask(TurnRequest(text, language=ctx.language, source="rest", client=SOURCE))).reply

    async def __aenter__(self) -> "Rig":
        await self.later.start()
        await language_id.prepare()
        if self.options.fast_path:  # as the hub does at start (hub.app)
            await self.fast_path.prepare(self.options.language)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.later.stop()
        self._state_dir.cleanup()

    async def run(self, case: Case, *, give_language: bool = True) -> Outcome:
        """Send one case through the agent, score it, and put the home back as it was.

        A sensitive action the hub holds ("do you really want me to unlock …?") is answered
        with the language's yes, as the person who asked would; the turn that asked scores.
        """
        self.backend.calls.clear()
        timers = self.later.timers
        for name, seconds in case.expected.running:
            timers.add(seconds, name, ToolContext("running-before", case.language))
        started = time.perf_counter()
        language = case.language if give_language else None
        result = await self.agent.ask(TurnRequest(case.text, language=language, source="rest", client=SOURCE))
        seconds = time.perf_counter() - started
        if any(c.data.get("error") == CONFIRMATION_REQUIRED for c in result.tool_calls):
            yes = template(result.language, "policy.yes_words").split("|")[0]
            await self.agent.ask(TurnRequest(yes, result.conversation_id, language=language, source="rest",
                                             client=SOURCE))
        ok, why = score(case, result, self.backend.calls, [(t.name, t.duration_s) for t in timers.timers()])
        for timer in list(timers.timers(commands=True)):  # a delayed command must not run in a later case
            timers.cancel(timer.id)
        for entity in self.home.entities:
            if self.store.get(entity.entity_id) != entity:
                self.store.update_state(entity.entity_id, entity.state, dict(entity.attributes))
        self.agent.clear_conversations()
        return Outcome(case, ok, why, result, seconds)


def score(case: Case, result: TurnResult, calls: list[tuple[str, str, dict[str, Any]]],
          timers: list[tuple[str | None, int]] | None = None) -> tuple[bool, str]:
    """(carried out as expected, why not). `timers`: those running after it, of `expected.running`."""
    if result.path == "model":
        return False, "went to the model"
    expected = case.expected
    done = sorted((entity_id, service, _comparable(data)) for entity_id, service, data in calls)
    if expected.running:
        left = [t for n, t in enumerate(expected.running) if n != expected.cancelled]
        if sorted(timers or [], key=str) != sorted(left, key=str):
            return False, f"timers left {timers} (expected {left}); reply {result.reply!r}"
    if expected.timer_s is not None:
        timers = [c for c in result.tool_calls if c.call.name == "start_timer" and c.ok]
        seconds = [c.data.get("duration_s") for c in timers]
        if seconds != [expected.timer_s] or done:
            return False, f"timer {seconds} (expected {expected.timer_s}), calls {done}"
        return True, ""
    if expected.answer:
        if done:
            return False, f"a question acted: {done}"
        if not result.ok or not result.reply.strip():
            return False, f"no answer ({result.error})"
        if expected.reply_contains and expected.reply_contains not in result.reply:
            return False, f"answer {result.reply!r} lacks {expected.reply_contains!r}"
        return True, ""
    wanted = sorted((e, s, _comparable(dict(d))) for e, s, d in expected.calls)
    if done != wanted:
        return False, f"did {done}, expected {wanted}"
    return True, ""


def _comparable(data: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Service data as HA would see it: colors as RGB, fractions rounded."""
    cleaned: dict[str, Any] = {}
    for key, value in data.items():
        if key == "color_name":
            key, value = "rgb_color", COLORS.get(color_key(str(value)), value)
        if isinstance(value, list):
            value = tuple(value)
        if isinstance(value, float):
            value = round(value, 2)
        cleaned[key] = value
    return tuple(sorted(cleaned.items()))


# --- tables ------------------------------------------------------------------------------------


@dataclass
class Tally:
    right: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.right += ok
        self.total += 1

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{100 * self.share:5.1f}% ({self.right}/{self.total})" if self.total else "    -"


async def measure(language: str, per_intent: int, *, seed: int = 0, give_language: bool = True,
                  variant: str | None = None) -> list[Outcome]:
    """Every sampled case of one language through a fresh rig."""
    namer = VARIANTS[variant] if variant else None
    said_home = home_for(language)
    cases = sample_cases(language, per_intent, seed, home=said_home)
    written = home_for(language, namer)
    if namer:  # the sentence says the plain name; the home writes it its own way
        renamed = {e.entity_id for e, w in zip(said_home.entities, written.entities) if e.name != w.name}
        cases = [c for c in cases if dict(c.slots).get("name") in renamed]
    # left out, the home's preferred language is another one: the hub has to tell which it is
    preferred = language if give_language else preferred_other(language)
    async with Rig(written, language_option=preferred) as rig:
        return [await rig.run(case, give_language=give_language) for case in cases]


def preferred_other(language: str) -> str:
    """The home's configured language when a test leaves the request's language out."""
    return "de" if language == "en" else "en"


def languages() -> tuple[str, ...]:
    return tuple(lang for lang in SUPPORTED_LANGUAGES if lang in _homes())

