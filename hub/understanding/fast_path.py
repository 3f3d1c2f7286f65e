"""Deterministic fast path: what HA's intents cover, understood and carried out without the model.

One utterance goes: strict recognition (`hub.understanding.recognition`) → a plan (`hub.understanding.planning`)
→ tool calls through the ToolRegistry (so validation and policy stay in one place) or an answer
from state (`hub.understanding.answers`). A sentence of several commands is split (`hub.understanding.compound`)
when it does not match whole, and each part is run; a name that is no slot value is read by the
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

from hassil.models import UnmatchedTextEntity
from hassil.recognize import RecognizeResult

from hub.understanding.answers import answer
from hub.understanding.compound import split_parts, with_shared_words
from hub.home.entities import Entity, EntityStore
from hub.home.namesakes import option_names
from hub.home.normalize import base_language
from hub.understanding.planning import Action, Ambiguous, Nevermind, NotFound, Plan, Planner, Question
from hub.understanding.recognition import (
    HomeData,
    bare_template,
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
        try:
            plans = await asyncio.to_thread(self._understand, text, self._narrow(code, loaded, home),
                                            loaded, home, code, language, read_names)
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
                    code: str, language: str, read_names: bool) -> list[Plan]:
        """The whole sentence as one command; else its parts, when every part is one; else the
        whole read with a name the resolver finds (when `read_names`); else a question naming a device."""
        whole = recognize(text, intents, loaded, home, code)
        plan = self._planner.plan(whole, home, language, text)
        if plan is not None:
            return [self._fitting(plan, text, language, read_name=False)]
        parts = split_parts(text, language)
        if len(parts) > 1:
            plans = self._parts(parts, intents, loaded, home, code, language, read_names)
            if plans:
                return plans
        if not read_names:
            return []
        unmatched = recognize_unmatched(text, intents, home, code) \
            or recognize_masked(text, self._resolver.said_names(text, language), intents, home, code)
        plan = self._planner.plan_unmatched(unmatched, home, language, text) \
            or self._planner.plan_named_question(text, home, language, unmatched)
        plan = self._fitting(plan, text, language, read_name=True) if plan is not None else None
        # understood, but nothing in the home fits: a device the words name ("la porte du garage" of
        # a garage door the template took for a door), else the model may know better
        return [plan] if plan is not None and (not whole or isinstance(plan, Action)) else []

    def _parts(self, parts: list[str], intents: TemplateSets, loaded: LanguageIntents, home: HomeData,
               code: str, language: str, read_names: bool) -> list[Plan]:
        """Each part's plan; a part borrows the words around another part's target (its verb,
        before or after) when it needs them; any part still no command: not a list of commands.

        Borrowed words come before reading an unknown name ("… and the kitchen lights" alone
        would read as a bare name).
        """
        found: list[tuple[Plan | None, RecognizeResult | None]] = [(None, None)] * len(parts)
        said = list(parts)  # each part as recognized, with the words it borrowed
        lenders: list[tuple[list[int], list[int]] | None] = [None] * len(parts)
        for _ in range(2):  # a part completed in the first round may lend its verb in the second
            for number, part in enumerate(parts):
                earlier = [i for i in range(number - 1, -1, -1) if found[i][1] is not None]
                later = [i for i in range(number + 1, len(parts)) if found[i][1] is not None]
                if found[number][0] is not None or lenders[number] == (earlier, later):
                    continue  # done, or nothing new to borrow from
                lenders[number] = (earlier, later)
                befores = [_around(said[i], found[i][1])[0] for i in earlier[:1]]
                befores += [" ".join(said[i].split()[:k]) for i in earlier[:1] for k in (2, 1)]
                afters = [_around(said[i], found[i][1])[1] for i in (later + earlier)[:1]]
                if not later and number < len(parts) - 1:  # German: "… und im Büro aus"
                    last = parts[-1].split()
                    afters += [" ".join(last[-k:]) for k in (1, 2) if len(last) > k]
                forms = with_shared_words(part, [b for b in befores if b], [a for a in afters if a])
                # the part alone, strictly; with borrowed words; alone with a name the resolver reads
                tries = [(part, True), *((f, True) for f in forms), *([(part, False)] if read_names else [])]
                for text, strict in tries:
                    # "… and the kitchen light": a bare name is a command alone, not after a verb
                    found[number] = self._one_part(text, intents, loaded, home, code, language, strict,
                                                   bare=not earlier or text is not part)
                    if found[number][0] is not None:
                        said[number] = text
                        break
        plans = [plan for plan, _ in found]
        return plans if all(p is not None for p in plans) else []  # type: ignore[return-value]

    def _one_part(self, text: str, intents: TemplateSets, loaded: LanguageIntents, home: HomeData,
                  code: str, language: str, strict: bool = False, bare: bool = True,
                  ) -> tuple[Plan | None, RecognizeResult | None]:
        for result in recognize(text, intents, loaded, home, code):
            if not bare and bare_template(result):
                continue
            plan = self._planner.plan_one(result, home, language)
            if plan is not None:
                return plan, result
        if strict:
            return None, None
        unmatched = recognize_unmatched(text, intents, home, code)
        plan = self._planner.plan_unmatched(unmatched, home, language, text)
        return plan, unmatched[0] if plan is not None and unmatched else None

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


def _around(text: str, result: RecognizeResult | None) -> tuple[str, str]:
    """The words of `text` before and after its target (name, area or floor), for a shared verb."""
    if result is None:
        return "", ""
    said = [str(result.entities[key].text) for key in ("name", "area", "floor") if key in result.entities]
    unmatched_name = result.unmatched_entities.get("name")
    if not said and isinstance(unmatched_name, UnmatchedTextEntity):
        said = [str(unmatched_name.text)]
    folded = text.casefold()
    spans = [(folded.find(t.strip().casefold()), len(t.strip())) for t in said if t.strip()]
    spans = [(start, length) for start, length in spans if start >= 0]
    if not spans:
        return "", ""
    start = min(s for s, _ in spans)
    end = max(s + n for s, n in spans)
    return text[:start].strip(), text[end:].strip(" .!?")


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
