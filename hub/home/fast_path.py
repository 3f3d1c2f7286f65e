"""Deterministic fast path: simple commands matched by hassil with HA's sentence data, no model.

Like Home Assistant's default agent, the home's entity names (with their domain as context),
areas and floors are slot lists and the intents package's templates do the matching. To keep
it fast, only the intents handled here are loaded (once per language, lazily, warmed up off the
event loop), narrowed to the domains the home has, and slot lists are rebuilt only when the
store's names change. Every action goes through the ToolRegistry, so validation and policy stay
in one place. Anything unmatched or ambiguous returns None: the model takes it from there.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from hassil.filter import filter_intents
from hassil.intents import Intents, SlotList, TextSlotList
from hassil.recognize import RecognizeResult, recognize_all
from home_assistant_intents import get_intents, get_languages

from hub.home.catalogue import TURN_OFF_SERVICES, TURN_ON_SERVICES
from hub.home.entities import Entity, EntityStore
from hub.home.normalize import fold
from hub.home.resolve import EntityResolver
from hub.home.tool_base import ToolContext, ToolRegistry, ToolResult
from hub.llm.types import ToolCall
from hub.locales import format_number, join_list, phrase

_LOGGER = logging.getLogger(__name__)

HANDLED_INTENTS = frozenset({
    "HassTurnOn", "HassTurnOff", "HassLightSet", "HassClimateSetTemperature", "HassSetPosition",
    "HassMediaPause", "HassMediaUnpause", "HassMediaNext", "HassMediaPrevious", "HassSetVolume",
})
_MEDIA_ACTIONS = {"HassMediaPause": "pause", "HassMediaUnpause": "resume",
                  "HassMediaNext": "next", "HassMediaPrevious": "previous"}
_AMBIGUOUS = object()  # a name that fits several entities: ask the model (it can ask back)
_MAX_RESULTS = 24  # recognitions looked at per utterance (a handful in practice)
# Failures after which the model may still do better: nothing was done, nothing was refused.
_FALL_BACK_CODES = frozenset({"unsupported", "unknown_entity", "invalid_arguments", "unknown_tool"})


@dataclass
class FastPathResult:
    reply: str
    intent: str
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


@dataclass
class _Plan:
    intent: str
    tool: str
    args: dict[str, Any]  # without entity_id
    targets: list[Entity]  # one named entity, or an area's devices of one kind


@dataclass
class _HomeData:
    """What recognition needs from the store, built once per store version (off the loop)."""

    version: int
    slot_lists: dict[str, SlotList]
    domains: frozenset[str]
    climate_context: dict[str, Any] | None  # the area of the only thermostat, if just one


@dataclass
class _LanguageIntents:
    intents: Intents  # handled intents only
    climate_only: Intents  # HassClimateSetTemperature alone, for the single-thermostat case


class FastPath:
    def __init__(self, store: EntityStore, registry: ToolRegistry, resolver: EntityResolver) -> None:
        self._store = store
        self._registry = registry
        self._resolver = resolver
        self._loaded: dict[str, _LanguageIntents | None] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._home: _HomeData | None = None
        self._narrowed: dict[tuple[str, int], Intents] = {}

    # --- public API ------------------------------------------------------------------------

    @staticmethod
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

    async def prepare(self, language: str) -> bool:
        """Load and warm up a language's intents and the home's slot lists (else first use does)."""
        loaded = await self._intents(language)
        if loaded is None:
            return False
        home = await self._home_data()
        code = self.intents_language(language) or language
        await asyncio.to_thread(_recognize, "warm up", self._narrow(code, loaded, home),
                                loaded.climate_only, home, code)
        return True

    async def try_handle(self, text: str, language: str, ctx: ToolContext) -> FastPathResult | None:
        if not text or not text.strip():
            return None
        loaded = await self._intents(language)
        if loaded is None:
            return None
        home = await self._home_data()
        code = self.intents_language(language) or language
        try:
            results = await asyncio.to_thread(
                _recognize, text, self._narrow(code, loaded, home), loaded.climate_only, home, code)
        except Exception:  # a matcher bug must not end the turn: the model takes it
            _LOGGER.exception("fast path recognition failed for %r", text)
            return None
        plan = self._plan(results, language)
        if plan is None:
            return await self._not_found(text, results, loaded, home, code, language)
        return await self._execute(plan, ctx)

    async def _not_found(self, text: str, results: list[RecognizeResult], loaded: _LanguageIntents,
                         home: _HomeData, code: str, language: str) -> FastPathResult | None:
        """"Turn on the garage door" with no such device: say so rather than let a model guess."""
        if results:
            return None
        name = await asyncio.to_thread(_unmatched_name, text, self._narrow(code, loaded, home), home, code)
        if name is None or self._resolver.resolve(name=name, language=language):
            return None
        return FastPathResult(reply=phrase(language, "entity.not_found", name=name), intent="not_found")

    # --- recognition data ------------------------------------------------------------------

    async def _intents(self, language: str) -> _LanguageIntents | None:
        code = self.intents_language(language)
        if code is None:
            return None
        if code not in self._loaded:
            lock = self._locks.setdefault(code, asyncio.Lock())
            async with lock:
                if code not in self._loaded:
                    self._loaded[code] = await asyncio.to_thread(_load_intents, code)
        return self._loaded[code]

    def _narrow(self, code: str, loaded: _LanguageIntents, home: _HomeData) -> Intents:
        """Only the sentence blocks for domains the home has (cheap, shares parsed templates)."""
        key = (code, home.version)
        if key not in self._narrowed:
            self._narrowed = {k: v for k, v in self._narrowed.items() if k[1] == home.version}
            self._narrowed[key] = filter_intents(loaded.intents, domains=home.domains)
        return self._narrowed[key]

    async def _home_data(self) -> _HomeData:
        version = self._store.version
        if self._home is None or self._home.version != version:
            entities, areas = self._store.all(), self._resolver.areas()
            self._home = await asyncio.to_thread(_build_home_data, version, entities, areas)
        return self._home

    # --- from recognition to tool calls -----------------------------------------------------

    def _plan(self, results: list[RecognizeResult], language: str) -> _Plan | None:
        """The first result that names exactly one entity, or an area + kind of device group."""
        for result in results:
            plan = self._plan_one(result, language)
            if plan is _AMBIGUOUS:
                return None
            if isinstance(plan, _Plan):
                return plan
        return None

    def _plan_one(self, result: RecognizeResult, language: str) -> _Plan | object | None:
        slots = {name: entity.value for name, entity in result.entities.items()}
        intent = result.intent.name
        tool, args = _tool_for(intent, slots)
        if tool is None:
            return None
        domain = slots.get("domain") if isinstance(slots.get("domain"), str) else _IMPLIED_DOMAIN.get(tool)
        area = slots.get("area")
        if "floor" in slots:
            return None  # the hub has no floors yet
        if "name" in slots:
            targets = self._resolver.resolve(name=str(slots["name"]), area=area, domain=domain,
                                             language=language, partial=False)
            if len(targets) > 1:
                return _AMBIGUOUS
        elif area and domain:
            targets = self._resolver.resolve(area=area, domain=domain, language=language)
            if slots.get("device_class"):
                targets = [e for e in targets if e.device_class == slots["device_class"]]
        else:
            return None
        targets = [e for e in targets if _tool_accepts(tool, e)]
        if not targets:
            return None
        return _Plan(intent, tool, args, targets)

    async def _execute(self, plan: _Plan, ctx: ToolContext) -> FastPathResult | None:
        calls, results = [], []
        for number, entity in enumerate(plan.targets):
            call = ToolCall(plan.tool, {"entity_id": entity.entity_id, **plan.args},
                            id=f"fast_path_{number}")
            calls.append(call)
            results.append(await self._registry.call(call, ctx))
        if not any(r.ok for r in results) and all(
                r.data.get("error") in _FALL_BACK_CODES for r in results):
            return None  # nothing done, nothing refused: let the model try
        reply = _reply(plan, results, ctx.language)
        return FastPathResult(reply=reply, intent=plan.intent, calls=calls, results=results)


def _build_home_data(version: int, entities: list[Entity],
                     areas: dict[str, tuple[str, ...]]) -> _HomeData:
    """Slot lists as HA's default agent makes them: `name` (with domain context), `area`, `floor`."""
    names: list[tuple[str, Any, dict[str, Any]]] = []
    for entity in entities:
        context = {"domain": entity.domain}
        if entity.device_class:
            context["device_class"] = entity.device_class
        for text in _spellings((entity.name, *entity.aliases)):
            names.append((text, text, context))
    area_names = [(text, area) for area, aliases in areas.items()
                  for text in _spellings((area, *aliases))]
    slot_lists: dict[str, SlotList] = {
        "name": TextSlotList.from_tuples(names, allow_template=False),
        "area": TextSlotList.from_tuples(area_names, allow_template=False),
        "floor": TextSlotList.from_tuples([], allow_template=False),
    }
    thermostats = [e for e in entities if e.domain == "climate"]
    climate_context = None
    if len(thermostats) == 1 and thermostats[0].area:
        # with one thermostat, "set the temperature to 21" can only mean that one
        climate_context = {"area": {"value": thermostats[0].area, "text": thermostats[0].area}}
    return _HomeData(version, slot_lists, frozenset(e.domain for e in entities), climate_context)


@lru_cache(maxsize=None)
def _load_intents(code: str) -> _LanguageIntents | None:
    """Parse the handled intents of one language and warm their templates up (in a thread).

    Cached for the process: the parsed templates do not depend on the home.
    """
    data = get_intents(code)
    if not data:
        return None
    intents = filter_intents(Intents.from_dict(data), intent_names=HANDLED_INTENTS)
    climate_only = filter_intents(intents, intent_names={"HassClimateSetTemperature"})
    warm_up = {"name": TextSlotList.from_tuples([]), "area": TextSlotList.from_tuples([]),
               "floor": TextSlotList.from_tuples([])}
    for _ in recognize_all("warm up", intents, slot_lists=warm_up, language=code):
        pass
    return _LanguageIntents(intents, climate_only)


def _recognize(text: str, intents: Intents, climate_only: Intents, home: _HomeData,
               language: str) -> list[RecognizeResult]:
    """All strict matches, entity names first (as HA's default agent prefers them)."""
    results = []
    for result in recognize_all(text, intents, slot_lists=home.slot_lists, language=language):
        results.append(result)
        if len(results) >= _MAX_RESULTS:
            break
    if not results and home.climate_context is not None:
        results = list(recognize_all(text, climate_only, slot_lists=home.slot_lists,
                                     intent_context=home.climate_context, language=language))
    return sorted(results, key=_name_first)


_MAX_NAME_WORDS = 4  # "Turn on the kitchen ceiling light strip" is as long as device names get


def _unmatched_name(text: str, intents: Intents, home: _HomeData, language: str) -> str | None:
    """The device name of an on/off command whose name matches nothing in the home, if any.

    Only a sentence that is a command apart from the name counts (a few command words left
    over), and only a name as short as device names are, so a wildcard template swallowing a
    whole remark ("it's too dark", "I want to read in bed, do something") does not.
    """
    said = fold(text, language).split()
    for number, result in enumerate(recognize_all(text, intents, slot_lists=home.slot_lists,
                                                  allow_unmatched_entities=True, language=language)):
        if number >= _MAX_RESULTS:
            break
        unmatched = result.unmatched_entities
        if result.intent.name not in ("HassTurnOn", "HassTurnOff") or "name" not in unmatched:
            continue
        if set(unmatched) - {"name", "domain"} or set(result.entities) - {"domain"}:
            continue
        name = str(unmatched["name"].text).strip(" .,!?")
        name_words = len(fold(name, language).split())
        leftover = len(said) - name_words
        if name and 0 < leftover <= 4 and name_words <= _MAX_NAME_WORDS:
            return name
    return None


def _name_first(result: RecognizeResult) -> tuple[bool, int]:
    name = result.entities.get("name")
    return name is None, -len(str(name.text)) if name is not None else 0


_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"})


def _spellings(texts: Iterable[str]) -> list[str]:
    """Each name as written plus accent-free forms ("Küche", "kuche", "Kueche") for plain STT."""
    found: dict[str, None] = {}
    for text in texts:
        text = " ".join(text.split())
        if not text:
            continue
        for spelling in (text, fold(text, "en"), text.translate(_UMLAUTS)):
            if spelling and spelling.casefold() not in {f.casefold() for f in found}:
                found[spelling] = None
    return list(found)


def _tool_for(intent: str, slots: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    if intent == "HassTurnOn":
        return "turn_on", {}
    if intent == "HassTurnOff":
        return "turn_off", {}
    if intent == "HassLightSet":
        args: dict[str, Any] = {}
        if isinstance(slots.get("brightness"), (int, float)):
            args["brightness"] = int(round(slots["brightness"]))
        if isinstance(slots.get("color"), str):
            args["color"] = slots["color"]
        return ("set_light", args) if args else (None, {})
    if intent == "HassClimateSetTemperature" and isinstance(slots.get("temperature"), (int, float)):
        return "set_temperature", {"temperature": float(slots["temperature"])}
    if intent == "HassSetPosition" and isinstance(slots.get("position"), (int, float)):
        return "set_position", {"position": int(round(slots["position"]))}
    if intent in _MEDIA_ACTIONS:
        return "media_control", {"action": _MEDIA_ACTIONS[intent]}
    volume = slots.get("volume_level", slots.get("volume"))
    if intent == "HassSetVolume" and isinstance(volume, (int, float)):
        return "set_volume", {"volume": int(round(volume))}
    return None, {}


_TOOL_DOMAINS = {
    "turn_on": set(TURN_ON_SERVICES) | {"lock"},  # the tool itself refuses locks, and says so
    "turn_off": set(TURN_OFF_SERVICES) | {"lock"},
    "set_light": {"light"},
    "set_temperature": {"climate"},
    "set_position": {"cover", "valve"},
    "media_control": {"media_player"},
    "set_volume": {"media_player"},
}


# The kind of device a group command means when the sentence does not say ("set the temperature").
_IMPLIED_DOMAIN = {"set_light": "light", "set_temperature": "climate",
                   "media_control": "media_player", "set_volume": "media_player"}


def _tool_accepts(tool: str, entity: Entity) -> bool:
    return entity.domain in _TOOL_DOMAINS.get(tool, ())


def _reply(plan: _Plan, results: list[ToolResult], language: str) -> str:
    """One short sentence for what was done, then what failed."""
    done = [e for e, r in zip(plan.targets, results) if r.ok]
    failures = [str(r.data.get("message", "")) for r in results if not r.ok]
    parts: list[str] = []
    if len(done) == 1 and len(results) == 1:
        parts.append(results[0].speech or phrase(language, "action.done"))
    elif done:
        parts.append(_group_sentence(plan, done, language))
    parts += list(dict.fromkeys(f for f in failures if f))
    return " ".join(parts) or phrase(language, "error.generic")


def _group_sentence(plan: _Plan, done: list[Entity], language: str) -> str:
    names = join_list([e.name for e in done], language)
    on_off = all(e.domain in ("light", "switch", "fan", "input_boolean", "media_player", "climate")
                 for e in done)
    if plan.tool == "turn_on" and on_off:
        return phrase(language, "action.turned_on", name=names)
    if plan.tool == "turn_off" and on_off:
        return phrase(language, "action.turned_off", name=names)
    if plan.tool == "set_light" and "brightness" in plan.args:
        value = phrase(language, "unit.percent", value=format_number(plan.args["brightness"], language))
        return phrase(language, "action.set_brightness", name=names, value=value)
    if plan.tool == "set_temperature":
        value = phrase(language, "unit.degrees",
                       value=format_number(plan.args["temperature"], language))
        return phrase(language, "action.set_temperature", name=names, value=value)
    if plan.tool == "set_position":
        value = phrase(language, "unit.percent", value=format_number(plan.args["position"], language))
        return phrase(language, "action.set_position", name=names, value=value)
    return phrase(language, "action.done")
