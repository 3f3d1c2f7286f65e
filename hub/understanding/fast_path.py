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
from typing import Callable, Sequence

from hassil.recognize import RecognizeResult

from hub.understanding.action_words import known_words
from hub.understanding.answers import answer
from hub.understanding.assist_responses import ha_error
from hub.understanding.outcome_speech import FALL_BACK_CODES, asking, joined, reply_for
from hub.understanding.compound import split_parts
from hub.understanding.courtesy import without_courtesy
from hub.home.entities import Entity, EntityStore
from hub.home.list_finder import list_names
from hub.home.namesakes import option_names
from hub.home.siblings import of_kinds, primary
from hub.home.normalize import base_language, fold
from hub.understanding.home_questions import QuestionReader
from hub.understanding.planning import Planner
from hub.understanding.plans import Action, Ambiguous, Nevermind, NotFound, Plan, Question
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
    recognize_masked,
    recognize_unmatched,
    TemplateSets,
)
from hub.home.resolve import EntityResolver
from hub.understanding.number_words import prepare_number_words
from hub.understanding.preparation import index_slot_lists, keep_built, language_bytes, warm_up_commands
from hub.understanding.parts import PartReader
from hub.understanding.speaker_room import Room, plan_in_room, prefer_room
from hub.core.answer import DirectAnswer
from hub.core.tools import ToolContext, ToolRegistry
from hub.core.messages import ToolCall
from hub.locales import SUPPORTED_LANGUAGES, join_list, phrase
from hub.memory import object_bytes

_LOGGER = logging.getLogger(__name__)

_UNFINISHED_KEPT = 256  # conversations whose "which one?" may still be answered


class FastPath:
    def __init__(self, store: EntityStore, registry: ToolRegistry, resolver: EntityResolver,
                 clock: Callable[[], datetime] = datetime.now) -> None:
        self._store = store
        self._registry = registry
        self._resolver = resolver
        self._planner = Planner(store, resolver)
        self._questions = QuestionReader(store)
        self._clock = clock
        self._loaded: dict[str, LanguageIntents | None] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._homes: dict[str, HomeData] = {}
        self._names: tuple[int, Names] | None = None  # (store version, the home's names)
        self._name_forms: tuple[Names, frozenset[str], int] | None = None  # their folded forms, most words
        self._narrowed: dict[tuple[str, int], TemplateSets] = {}
        # conversation id → the command that asked "which one?", for `finish` (the newest kept)
        self._unfinished: OrderedDict[str, Action] = OrderedDict()
        self._heard: OrderedDict[str, None] = OrderedDict()  # languages understood in, the latest last

    # --- public API ------------------------------------------------------------------------

    intents_language = staticmethod(intents_language)

    async def prepare(self, language: str, full: bool = False) -> bool:
        """Ready a language's templates, number words and the home's slot lists for its first
        command (else that command pays for them). `full`: every template built and kept (a
        home's or a heard language: 0.5-1.5 MiB more); else compact, each template built when a
        text may match it (1-3 MiB; a command builds the hundred-odd it may match)."""
        code = intents_language(language)
        loaded = await self._intents(code)
        if code is None or loaded is None:
            return False
        await asyncio.to_thread(keep_built, loaded, full)
        await asyncio.to_thread(prepare_number_words, loaded, code)
        home = await self._home_data(base_language(language))
        await asyncio.to_thread(index_slot_lists, home)
        for example in warm_up_commands(language, self._store):  # hassil's patterns built
            await asyncio.to_thread(recognize, example, self._narrow(code, loaded, home), loaded, home, code)
        await asyncio.to_thread(self._resolver.match, "warm up", language)  # its index of the names
        return True

    def memory(self, counted: set[int]) -> dict[str, int]:
        """Bytes of each language's templates and number words (`preparation.language_bytes`),
        and of the home's slot lists for every language ("home"); `counted`: objects another
        part holds."""
        found = {code: language_bytes(loaded, counted, code, base_language(code))
                 for code, loaded in list(self._loaded.items()) if loaded}
        return {**found, "home": object_bytes([self._names, self._homes], counted)}

    def heard(self) -> list[str]:
        """The languages commands were understood in, the latest last."""
        return list(self._heard)

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
        narrowed = self._narrow(code, loaded, home)
        try:
            plans = await asyncio.to_thread(self._understand, text, narrowed, loaded, home, code, language,
                                            read_names, room)
            trimmed = text if _understood(plans) else without_courtesy(text, fold(self.unnamed(text)),
                                                                       base_language(language))
            if trimmed != text:  # "schalte das Küchenlicht jetzt ein"
                retried = await asyncio.to_thread(self._understand, trimmed, narrowed, loaded, home, code,
                                                  language, read_names, room)
                plans = retried or plans
        except Exception:  # a matcher bug must not end the turn: the model takes it
            _LOGGER.exception("fast path recognition failed for %r", text)
            return None
        if not plans:
            return None
        self._heard[base_language(language)] = None
        self._heard.move_to_end(base_language(language))
        plans = _merged(plans)
        if len(plans) == 1:
            outcome = await self._carry_out(plans[0], ctx, alone=True)
        else:
            outcomes = [await self._carry_out(plan, ctx, alone=False) for plan in plans]
            outcome = joined([o for o in outcomes if o is not None])
        return asking(outcome)

    async def carry_out(self, plan: Plan, ctx: ToolContext) -> DirectAnswer | None:
        """A plan made elsewhere (hub.understanding.follow_ups) carried out as the fast path's own."""
        return asking(await self._carry_out(plan, ctx, alone=True))

    def unnamed(self, text: str) -> str:
        """`text` without the home's names ("Hallway Light an" → "an"): the words that tell its
        language, when the names are another's (names built once the fast path read a request)."""
        if self._names is None:
            return text
        names = self._names[1]
        if self._name_forms is None or self._name_forms[0] is not names:
            forms = frozenset(fold(name) for name, _ in names.spoken) - {""}
            self._name_forms = names, forms, max((len(f.split()) for f in forms), default=0)
        _, forms, longest = self._name_forms
        words, kept, start = fold(text).split(), [], 0
        while start < len(words):  # the longest name at each word, else the word
            length = next((n for n in range(min(longest, len(words) - start), 0, -1)
                           if " ".join(words[start:start + n]) in forms), 0)
            if not length:
                kept.append(words[start])
            start += length or 1
        return " ".join(kept)

    def unfinished(self, conversation_id: str) -> tuple[Entity, ...]:
        """The options of the command that asked "which one?" in the conversation (none: none)."""
        action = self._unfinished.get(conversation_id)
        return tuple(action.targets) if action is not None else ()

    async def finish(self, entities: Sequence[Entity], ctx: ToolContext) -> DirectAnswer | None:
        """The command that asked "which one?" in `ctx`'s conversation, carried out on the
        entities the answer chose ("the first one", "both"); None when none waits."""
        action = self._unfinished.pop(ctx.conversation_id, None)
        if action is None:
            return None
        return asking(await self._execute(replace(action, targets=list(entities)), ctx, alone=False))

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
        fit = self._resolver.fit(text, language, verbs=known_words(language))
        if fit.missing and read_name:
            return NotFound(plan.intent, fit.missing)
        if fit.ambiguous and isinstance(plan, Action):
            # of the kinds the command acts on, a device before its battery or signal
            options = primary(of_kinds(fit.entities, {e.domain for e in plan.targets}))
            if len(options) > 1:
                return Ambiguous(plan.intent, options, replace(plan, targets=options))
            return replace(plan, targets=options) if options else plan
        return plan

    def _named_first(self, plan: Plan, text: str, language: str) -> Plan:
        """Of the devices a command read by its place and kind ("donc la Hallway Light": every
        light in the Hallway), the one whose whole name was said — as HA's matcher takes a name
        first; several of that name ask which one (the speaker's room may decide: `prefer_room`)."""
        if not isinstance(plan, Action) or len(plan.targets) < 2:
            return plan
        kinds = {e.domain for e in plan.targets}
        named = self._resolver.named_among(text, [e for e in self._store.all() if e.domain in kinds], language)
        if len(named) > 1:
            return Ambiguous(plan.intent, named, replace(plan, targets=named, named=True), plan.slots)
        return replace(plan, targets=named, named=True) if named else plan

    # --- understanding (in a thread) -------------------------------------------------------

    def _understand(self, text: str, intents: TemplateSets, loaded: LanguageIntents, home: HomeData,
                    code: str, language: str, read_names: bool, room: Room) -> list[Plan]:
        """The whole sentence as one command (in the speaker's `room`: `speaker_room`); else its
        parts, when every part is one; else the whole read with a name the resolver finds (when
        `read_names`); else a question naming a device; else, when the whole named a device of
        the home in a place it is not in, HA's "no device called … there"."""
        whole, plan = self._strict(text, intents, loaded, home, code, language, room)
        if plan is None:  # "how many lights are on right now": not the calendar's "now"
            trimmed = without_courtesy(text, fold(self.unnamed(text)), base_language(language))
            if trimmed != text:
                cut = self._strict(trimmed, intents, loaded, home, code, language, room)
                if cut[1] is not None and not _elsewhere(cut[1]):
                    text, (whole, plan) = trimmed, cut
        if plan is not None and not _elsewhere(plan):
            plan = self._questions.outside_first(plan)
            return [prefer_room(self._fitting(plan, text, language, read_name=False), room)]
        last = [plan] if plan is not None else []  # "… is not in the … area": when nothing else reads it
        parts = split_parts(text, language)
        if len(parts) > 1:
            plans = self._part_reader(intents, loaded, home, code, language, read_names, room).plans(parts)
            if plans:
                return plans
        if not read_names:
            return last
        question = self._questions.plan(text, home, language)  # a device's part, the weather, events, lists
        if question is not None:
            return [question]
        unmatched = recognize_unmatched(text, intents, home, code, room.context()) \
            or recognize_masked(text, self._resolver.said_names(text, language), intents, home, code)
        plan = self._planner.plan_unmatched(unmatched, home, language, text) \
            or self._questions.named_question(text, home, language, unmatched)
        plan = prefer_room(self._named_first(self._fitting(plan, text, language, read_name=True), text, language),
                           room) if plan is not None else None
        # understood, but nothing in the home fits: a device the words name ("la porte du garage" of
        # a garage door the template took for a door), else the model may know better
        return [plan] if plan is not None and (not whole or isinstance(plan, Action)) else last

    def _strict(self, text: str, intents: TemplateSets, loaded: LanguageIntents, home: HomeData, code: str,
                language: str, room: Room) -> tuple[list[RecognizeResult], Plan | None]:
        """The whole sentence matched strictly by the templates, in the speaker's room."""
        return plan_in_room(lambda context: recognize(text, intents, loaded, home, code, context),
                            lambda results: self._planner.plan(results, home, language, text), room)

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
                                           self._resolver.areas(language), self._resolver.floors(language))
            self._homes[language] = home
        return home

    def _all_names(self, entities: list[Entity]) -> Names:
        """The names for every language: a variant that is an area's name in any is left out;
        a to-do list's with what people call it ("my tasks", `hub.home.list_finder`)."""
        areas = {text for code in SUPPORTED_LANGUAGES
                 for area, aliases in self._resolver.areas(code).items() for text in (area, *aliases)}
        lists = [e for e in entities if e.domain == "todo"]
        named = [replace(e, aliases=(*e.aliases, *list_names(e, lists))) if e.domain == "todo" else e
                 for e in entities]
        return build_names(named, areas)

    # --- carrying out ----------------------------------------------------------------------

    async def _carry_out(self, plan: Plan, ctx: ToolContext, alone: bool) -> DirectAnswer | None:
        language = ctx.language
        if isinstance(plan, Question):
            return DirectAnswer(answer(plan, language, self._clock()), plan.intent, slots=[plan.slots])
        if isinstance(plan, Nevermind):
            return DirectAnswer(phrase(language, "policy.cancelled"), plan.intent)
        if isinstance(plan, NotFound):
            said = None
            if plan.place is not None:  # HA's "no device called … in the … area"
                kind, place = plan.place
                said = ha_error(language, f"no_entity_in_{kind}", entity=plan.name, **{kind: place})
            return DirectAnswer(said or phrase(language, "entity.not_found", name=plan.name), "not_found",
                                slots=[plan.slots])
        if isinstance(plan, Ambiguous):
            self._unfinished.pop(ctx.conversation_id, None)
            if plan.action is not None and alone and not ctx.dry_run:  # a plan holds nothing
                self._hold(ctx.conversation_id, plan.action)
            options = join_list(option_names(plan.candidates), language)
            return DirectAnswer(phrase(language, "entity.ambiguous", options=options), "ambiguous",
                                candidates=[e.entity_id for e in plan.candidates], slots=[plan.slots])
        return await self._execute(plan, ctx, alone)

    async def _execute(self, plan: Action, ctx: ToolContext, alone: bool) -> DirectAnswer | None:
        """The plan's calls; None when the only command did nothing the model could not do better
        (in a sentence of several, that part's failure is said instead)."""
        calls, results = [], []
        arguments = [{"entity_id": e.entity_id, **plan.args, **plan.each.get(e.entity_id, {})}
                     for e in plan.targets] or [dict(plan.args)]
        for number, args in enumerate(arguments):
            call = ToolCall(plan.tool, args, id=f"fast_path_{number}")
            calls.append(call)
            results.append(await self._registry.call(call, ctx))
        if alone and not any(r.ok for r in results) and all(
                r.data.get("error") in FALL_BACK_CODES for r in results):
            return None  # nothing done, nothing refused: let the model try
        return DirectAnswer(reply_for(plan, results, ctx.language), plan.intent, calls, results, slots=[plan.slots])


def _understood(plans: list[Plan]) -> bool:
    """Whether some plan is more than "no device called …"."""
    return any(not isinstance(plan, NotFound) for plan in plans)


def _elsewhere(plan: Plan) -> bool:
    """A device named in a place it is not in (the planner's NotFound with the place)."""
    return isinstance(plan, NotFound) and plan.place is not None


def _merged(plans: list[Plan]) -> list[Plan]:
    """Parts that do the same to different devices become one action, answered in one sentence."""
    merged: list[Plan] = []
    for plan in plans:
        last = merged[-1] if merged else None
        if isinstance(plan, Action) and isinstance(last, Action) and plan.targets and last.targets \
                and (plan.tool, plan.args) == (last.tool, last.args):
            extra = [e for e in plan.targets if e not in last.targets]
            slots = {k: " + ".join(dict.fromkeys(v for v in (last.slots.get(k), plan.slots.get(k)) if v))
                     for k in {**last.slots, **plan.slots}}
            merged[-1] = Action(last.intent, last.tool, last.args, [*last.targets, *extra], last.named,
                                each={**last.each, **plan.each}, slots=slots)
        else:
            merged.append(plan)
    return merged
