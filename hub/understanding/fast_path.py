"""Deterministic fast path: what HA's intents cover, understood and carried out without the model.

One utterance goes: strict recognition (`hub.understanding.recognition`) → a plan (`hub.understanding.planning`)
→ tool calls through the ToolRegistry (so validation and policy stay in one place) or an answer
from state (`hub.understanding.answers`). A sentence of several commands is split (`hub.understanding.compound`)
when it does not match whole, each part read as alone in the speaker's room (`hub.understanding.parts`)
and run; a name that is no slot value is read by the
resolver. Anything not understood returns None: the model takes it from there. Recognition runs
in a thread; its slot lists are rebuilt only when the store's names change.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import replace
from datetime import datetime
from typing import Callable

from hub.understanding.answers import answer
from hub.understanding.compound import split_parts
from hub.home.entities import Entity, EntityStore
from hub.home.namesakes import option_names
from hub.home.normalize import base_language
from hub.understanding.planning import Action, Ambiguous, Nevermind, NotFound, Plan, Planner, Question
from hub.understanding.recognition import (
    HomeData,
    LanguageIntents,
    Names,
    build_home_data,
    build_names,
    intents_language,
    load_intents,
    narrow,
    recognize,
    recognize_unmatched,
    TemplateSets,
)
from hub.home.resolve import EntityResolver
from hub.understanding.parts import PartReader
from hub.understanding.speaker_room import Room, plan_in_room, prefer_room
from hub.core.answer import DirectAnswer
from hub.core.speech import CONFIRMATION_REQUIRED, speech_of
from hub.core.tools import ToolContext, ToolRegistry, ToolResult
from hub.core.messages import ToolCall
from hub.locales import SUPPORTED_LANGUAGES, format_number, join_list, phrase

_LOGGER = logging.getLogger(__name__)

# Failures after which the model may still do better: nothing was done, nothing was refused.
_FALL_BACK_CODES = frozenset({"unsupported", "unknown_entity", "invalid_arguments", "unknown_tool"})
_ON_OFF_DOMAINS = ("light", "switch", "fan", "input_boolean", "media_player", "climate")
_UNFINISHED_KEPT = 256  # conversations whose "which one?" may still be answered


class FastPath:
    def __init__(self, store: EntityStore, registry: ToolRegistry, resolver: EntityResolver,
                 clock: Callable[[], datetime] = datetime.now) -> None:
        self._store = store
        self._registry = registry
        self._resolver = resolver
        self._planner = Planner(store, resolver)
        self._clock = clock
        self._loaded: dict[str, LanguageIntents | None] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._homes: dict[str, HomeData] = {}
        self._names: tuple[int, Names] | None = None  # (store version, the home's names)
        self._narrowed: dict[tuple[str, int], TemplateSets] = {}
        # conversation id → the command that asked "which one?", for `finish` (the newest kept)
        self._unfinished: OrderedDict[str, Action] = OrderedDict()

    # --- public API ------------------------------------------------------------------------

    intents_language = staticmethod(intents_language)

    async def prepare(self, language: str) -> bool:
        """Load and warm up a language's intents and the home's slot lists (else first use does)."""
        code = intents_language(language)
        loaded = await self._intents(code)
        if code is None or loaded is None:
            return False
        home = await self._home_data(base_language(language))
        await asyncio.to_thread(recognize, "warm up", self._narrow(code, loaded, home), loaded, home, code)
        await asyncio.to_thread(self._resolver.match, "warm up", language)  # its index of the names
        return True

    async def try_handle(self, text: str, language: str, ctx: ToolContext,
                         read_names: bool = True) -> DirectAnswer | None:
        """`read_names=False`: strict matches only, no name the resolver reads (the wildcard pass,
        the slow one: worth it only once no candidate language matched strictly)."""
        if not text or not text.strip():
            return None
        code = intents_language(language)
        loaded = await self._intents(code)
        if code is None or loaded is None:
            return None
        home = await self._home_data(base_language(language))
        floor = home.floors.get(ctx.floor) if ctx.floor else None
        room = Room(ctx.area, ctx.floor, frozenset(floor.areas) if floor else frozenset())
        try:
            plans = await asyncio.to_thread(self._understand, text, self._narrow(code, loaded, home),
                                            loaded, home, code, language, read_names, room)
        except Exception:  # a matcher bug must not end the turn: the model takes it
            _LOGGER.exception("fast path recognition failed for %r", text)
            return None
        if not plans:
            return None
        plans = _merged(plans)
        if len(plans) == 1:
            outcome = await self._carry_out(plans[0], ctx, alone=True)
        else:
            outcomes = [await self._carry_out(plan, ctx, alone=False) for plan in plans]
            outcome = _joined([o for o in outcomes if o is not None])
        return _asking(outcome)

    def unfinished(self, conversation_id: str) -> tuple[Entity, ...]:
        """The options of the command that asked "which one?" in the conversation (none: none)."""
        action = self._unfinished.get(conversation_id)
        return tuple(action.targets) if action is not None else ()

    async def finish(self, entity: Entity, ctx: ToolContext) -> DirectAnswer | None:
        """The command that asked "which one?" in `ctx`'s conversation, carried out on the entity
        the answer chose; None when none waits."""
        action = self._unfinished.pop(ctx.conversation_id, None)
        if action is None:
            return None
        return _asking(await self._execute(replace(action, targets=[entity]), ctx, alone=False))

    def _hold(self, conversation_id: str, action: Action) -> None:
        self._unfinished[conversation_id] = action
        while len(self._unfinished) > _UNFINISHED_KEPT:
            self._unfinished.popitem(last=False)

    def _fitting(self, plan: Plan, text: str, language: str, *, read_name: bool) -> Plan:
        """A command acts only on devices its words fit (`EntityResolver.fit`), never on a
        neighbour that shares a word: several good fits of a partial name ("the desk": the desk
        fan, the desk lamp) are Ambiguous; a name the resolver read (`read_name`, not a slot value
        the templates matched) that fits none ("the kitchen radio" is not the kitchen light) is
        NotFound. A group the templates matched ("the windows in the kitchen") is what was said."""
        if not isinstance(plan, Ambiguous) and not (isinstance(plan, Action) and plan.targets
                                                         and (plan.named or read_name)):
            return plan
        fit = self._resolver.fit(text, language)
        if fit.missing and read_name:
            return NotFound(plan.intent, fit.missing)
        if fit.ambiguous and isinstance(plan, Action):
            return Ambiguous(plan.intent, fit.entities, replace(plan, targets=fit.entities))
        return plan

    # --- understanding (in a thread) -------------------------------------------------------

    def _understand(self, text: str, intents: TemplateSets, loaded: LanguageIntents, home: HomeData,
                    code: str, language: str, read_names: bool, room: Room) -> list[Plan]:
        """The whole sentence as one command (in the speaker's `room`: `speaker_room`); else its
        parts, when every part is one; else the whole read with a name the resolver finds (when
        `read_names`); else a question naming a device."""
        whole, plan = plan_in_room(lambda context: recognize(text, intents, loaded, home, code, context),
                                   lambda results: self._planner.plan(results, home, language, text), room)
        if plan is not None:
            return [prefer_room(self._fitting(plan, text, language, read_name=False), room)]
        parts = split_parts(text, language)
        if len(parts) > 1:
            plans = self._part_reader(intents, loaded, home, code, language, read_names, room).plans(parts)
            if plans:
                return plans
        if whole or not read_names:
            return []  # understood, but nothing in the home fits: the model may know better
        unmatched = recognize_unmatched(text, intents, home, code, room.context())
        plan = self._planner.plan_unmatched(unmatched, home, language, text) \
            or self._planner.plan_named_question(text, home, language, unmatched)
        return [prefer_room(self._fitting(plan, text, language, read_name=True), room)] if plan else []

    def _part_reader(self, intents: TemplateSets, loaded: LanguageIntents, home: HomeData, code: str,
                     language: str, read_names: bool, room: Room) -> PartReader:
        """How the parts of a sentence of several commands are read (hub.understanding.parts)."""
        return PartReader(
            recognize=lambda text, context: recognize(text, intents, loaded, home, code, context),
            recognize_unmatched=lambda text, context: recognize_unmatched(text, intents, home, code, context),
            plan_one=lambda result: self._planner.plan_one(result, home, language),
            plan_unmatched=lambda results, text: self._planner.plan_unmatched(results, home, language, text),
            read_names=read_names, room=room)

    # --- recognition data ------------------------------------------------------------------

    async def _intents(self, code: str | None) -> LanguageIntents | None:
        if code is None:
            return None
        if code not in self._loaded:
            lock = self._locks.setdefault(code, asyncio.Lock())
            async with lock:
                if code not in self._loaded:
                    self._loaded[code] = await asyncio.to_thread(load_intents, code)
        return self._loaded[code]

    def _narrow(self, code: str, loaded: LanguageIntents, home: HomeData) -> TemplateSets:
        key = (code, home.version)
        if key not in self._narrowed:
            self._narrowed = {k: v for k, v in self._narrowed.items() if k[1] == home.version}
            self._narrowed[key] = narrow(loaded, home)
        return self._narrowed[key]

    async def _home_data(self, language: str) -> HomeData:
        """The slot lists for one language (its words for the home's rooms), per store version;
        the names, the same in every language, once per version."""
        version = self._store.version
        home = self._homes.get(language)
        if home is None or home.version != version:
            self._homes = {k: v for k, v in self._homes.items() if v.version == version}
            entities = self._store.all()
            if self._names is None or self._names[0] != version:
                self._names = version, await asyncio.to_thread(self._all_names, entities)
            home = await asyncio.to_thread(build_home_data, version, self._names[1], entities,
                                           self._resolver.areas(language), self._store.floors())
            self._homes[language] = home
        return home

    def _all_names(self, entities: list[Entity]) -> Names:
        """The names for every language: a variant that is an area's name in any is left out."""
        areas = {text for code in SUPPORTED_LANGUAGES
                 for area, aliases in self._resolver.areas(code).items() for text in (area, *aliases)}
        return build_names(entities, areas)

    # --- carrying out ----------------------------------------------------------------------

    async def _carry_out(self, plan: Plan, ctx: ToolContext, alone: bool) -> DirectAnswer | None:
        language = ctx.language
        if isinstance(plan, Question):
            return DirectAnswer(answer(plan, language, self._clock()), plan.intent)
        if isinstance(plan, Nevermind):
            return DirectAnswer(phrase(language, "policy.cancelled"), plan.intent)
        if isinstance(plan, NotFound):
            return DirectAnswer(phrase(language, "entity.not_found", name=plan.name), "not_found")
        if isinstance(plan, Ambiguous):
            self._unfinished.pop(ctx.conversation_id, None)
            if plan.action is not None and alone:
                self._hold(ctx.conversation_id, plan.action)
            options = join_list(option_names(plan.candidates), language)
            return DirectAnswer(phrase(language, "entity.ambiguous", options=options), "ambiguous",
                                candidates=[e.entity_id for e in plan.candidates])
        return await self._execute(plan, ctx, alone)

    async def _execute(self, plan: Action, ctx: ToolContext, alone: bool) -> DirectAnswer | None:
        """The plan's calls; None when the only command did nothing the model could not do better
        (in a sentence of several, that part's failure is said instead)."""
        calls, results = [], []
        arguments = [{"entity_id": e.entity_id, **plan.args} for e in plan.targets] or [dict(plan.args)]
        for number, args in enumerate(arguments):
            call = ToolCall(plan.tool, args, id=f"fast_path_{number}")
            calls.append(call)
            results.append(await self._registry.call(call, ctx))
        if alone and not any(r.ok for r in results) and all(
                r.data.get("error") in _FALL_BACK_CODES for r in results):
            return None  # nothing done, nothing refused: let the model try
        return DirectAnswer(_reply(plan, results, ctx.language), plan.intent, calls, results)


def _merged(plans: list[Plan]) -> list[Plan]:
    """Parts that do the same to different devices become one action, answered in one sentence."""
    merged: list[Plan] = []
    for plan in plans:
        last = merged[-1] if merged else None
        if isinstance(plan, Action) and isinstance(last, Action) and plan.targets and last.targets \
                and (plan.tool, plan.args) == (last.tool, last.args):
            extra = [e for e in plan.targets if e not in last.targets]
            merged[-1] = Action(last.intent, last.tool, last.args, [*last.targets, *extra], last.named)
        else:
            merged.append(plan)
    return merged


def _asking(outcome: DirectAnswer | None) -> DirectAnswer | None:
    """What was done, then the question for what the policy holds: asked once, last, in the last
    held call's words (they name every call of the request held so far)."""
    if outcome is None:
        return None
    questions = [str(r.data.get("message")) for r in outcome.results if r.data.get("error") == CONFIRMATION_REQUIRED]
    if not questions:
        return outcome
    return replace(outcome, reply=" ".join(p for p in (outcome.reply, questions[-1]) if p))


def _joined(outcomes: list[DirectAnswer]) -> DirectAnswer:
    """Several commands, answered once: each part's sentence in order, every call and result."""
    return DirectAnswer(
        reply=" ".join(o.reply for o in outcomes if o.reply),
        intent="+".join(o.intent for o in outcomes),
        calls=[c for o in outcomes for c in o.calls],
        results=[r for o in outcomes for r in o.results],
        candidates=[c for o in outcomes for c in o.candidates])


def _reply(plan: Action, results: list[ToolResult], language: str) -> str:
    """One short sentence for what was done, then what failed; nothing for what the policy holds
    (`_asking` asks about it)."""
    done = [e for e, r in zip(plan.targets, results) if r.ok]
    held = [r.data.get("error") == CONFIRMATION_REQUIRED for r in results]
    # the tools' own sentences, or (for what they word for the model) that it did not work
    targets: list[Entity | None] = list(plan.targets) or [None]
    failures = [_failure(e, r, language) for e, r, h in zip(targets, results, held) if not r.ok and not h]
    parts: list[str] = []
    if len(results) == 1 and results[0].ok:
        parts.append(speech_of(results[0], language))
    elif done:
        parts.append(_group_sentence(plan, done, language))
    parts += list(dict.fromkeys(f for f in failures if f))
    return " ".join(parts) or ("" if any(held) else phrase(language, "error.generic"))


def _failure(entity: Entity | None, result: ToolResult, language: str) -> str:
    """The tool's own sentence, or (for errors it words for the model) that it did not work."""
    if result.data.get("error") not in _FALL_BACK_CODES:
        return str(result.data.get("message", ""))
    if entity is None:
        return phrase(language, "error.generic")
    return phrase(language, "tool.failed", name=entity.name)


def _group_sentence(plan: Action, done: list[Entity], language: str) -> str:
    names = join_list([e.name for e in done], language)
    on_off = all(e.domain in _ON_OFF_DOMAINS for e in done)
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
