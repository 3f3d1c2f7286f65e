"""Follow-ups and relative commands, understood without the model and carried out by the fast path.

"Turn it off", "make it 50%", "and the bedroom too", "the other one", "all of them" act on the
conversation's last targets with its last action (`hub.understanding.referents.Recent`);
"a bit brighter", "warmer", "louder", "open it a bit more" and "it's too dark / cold / loud (in
here)" change a level by a step from the device's current state (`hub.understanding.relative`);
a media player that reports no volume takes its own step (`volume_up` / `volume_down`, as HA's
HassSetVolumeRelative does).
The words are the hub's own templates in every language (`hub.understanding.follow_up_templates`).

Which devices a relative command means: the ones it names (a name, an area); for "too dark in
here", the speaker's area (`ToolContext.area`) before the conversation's last targets, for
"brighter" the other way round; else the home's only device of the kind. Several: "which one?"
(the fast path holds the command for the answer); too many to list, or none, or a follow-up with
nothing to refer to: an honest answer that names what is missing. Never a guess.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Callable, Sequence

from hassil.intents import TextSlotList

from hub.core.answer import DirectAnswer
from hub.core.tools import ToolContext
from hub.home.entities import Entity, EntityStore
from hub.home.normalize import base_language
from hub.home.resolve import EntityResolver
from hub.home.spoken_names import spellings
from hub.locales import format_number, join_list, phrase
from hub.understanding import referents
from hub.understanding.conditions import Conditional, met, read_conditional, read_value
from hub.understanding.fast_path import FastPath
from hub.understanding.follow_up_templates import Said, read
from hub.understanding.plans import Action, Ambiguous
from hub.understanding.recognition import Names, build_names
from hub.understanding.referents import Recent
from hub.understanding.relative import QUANTITIES, as_argument, current, quantity_of, stepped, switches_on

_MAX_OPTIONS = 4  # more candidates than this: ask for the room or the name, not a long list
_ON_OFF_TOOLS = {"on": "turn_on", "off": "turn_off"}
_SET_INTENTS = {"brightness": "HassLightSet", "temperature": "HassClimateSetTemperature",
                "volume": "HassSetVolume", "position": "HassSetPosition"}


class FollowUps:
    """Reads a request with the follow-up templates, plans it against the conversation's
    `Recent` and the speaker's area, and has the fast path carry it out."""

    def __init__(self, store: EntityStore, resolver: EntityResolver, fast_path: FastPath,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._resolver = resolver
        self._fast_path = fast_path
        self._clock = clock
        self._names: tuple[int, Names] | None = None
        self._areas: dict[tuple[str, int], TextSlotList] = {}

    async def try_handle(self, text: str, language: str, ctx: ToolContext,
                         recent: Recent | None) -> DirectAnswer | None:
        """The answer when the templates read `text` as a follow-up or relative command (an
        honest one when it refers to nothing), else None; a command that waits on a reading
        ("if the guest room is above 23, set it to 22") too."""
        conditional = read_conditional(text, language)
        if conditional is not None:
            return await self._conditional(conditional, language, ctx)
        said = await asyncio.to_thread(self.read, text, language)
        if said is None or self._names_another_kind(said):
            return None
        fresh = recent if recent is not None and recent.fresh(self._clock()) else None
        planned = self._plan(said, language, ctx, fresh)
        if isinstance(planned, DirectAnswer):
            return planned
        answer = await self._fast_path.carry_out(planned, ctx)
        if answer is None:
            return DirectAnswer(phrase(language, "error.not_understood"), "not_understood")
        return _worded(answer, planned, said, language) if said.what in ("relative", "indirect") else answer

    async def _conditional(self, conditional: Conditional, language: str, ctx: ToolContext) -> DirectAnswer:
        """The reading now, compared: the command carried out only when it holds ("it" is what
        was read, or the thermostats of the room read); else why nothing was done."""
        read, value, devices = read_value(conditional, self._store, self._resolver, language)
        name = read.name if read is not None else conditional.subject
        if read is None or value is None:
            return _honest(language, "condition.unreadable", name=name)
        comparison = phrase(language, "condition.above" if conditional.above else "condition.below",
                            limit=format_number(conditional.limit, language))
        quantity = "temperature" if conditional.part == "temperature" else "percent"
        values = {"name": name, "value": _spoken(quantity, value, language), "comparison": comparison}
        if not met(conditional, value):
            return _honest(language, "condition.not_met", **values)
        recent = Recent("", targets=tuple(e.entity_id for e in devices), at=self._clock(), language=language)
        answer = await self.try_handle(conditional.command, language, ctx, recent) \
            or await self._fast_path.try_handle(conditional.command, language, ctx)
        if answer is None:
            return DirectAnswer(phrase(language, "error.not_understood"), "not_understood")
        return replace(answer, reply=f"{phrase(language, 'condition.met', **values)} {answer.reply}")

    def read(self, text: str, language: str) -> Said | None:
        """What the templates read in `text` (its slots filled from the home), or None."""
        language = base_language(language)
        return read(text, language, self._area_list(language), self._home_names().said_in(text))

    def means_all(self, text: str, language: str) -> bool:
        """Whether `text` says "all of them" / "both" (an answer to "which one?")."""
        said = self.read(text, language)
        return said is not None and said.what == "all"

    def _names_another_kind(self, said: Said) -> bool:
        """A relative command that names only devices its quantity is not for: not this route's
        ("ztlum TV" is cs "dim" or "mute", and a TV says which: HA's mute template reads it)."""
        if said.what not in ("relative", "indirect") or not said.names or said.quantity is None:
            return False
        domains = QUANTITIES[said.quantity].domains
        return not any(e.domain in domains for e in referents.entities(self._store, sorted(said.names)))

    # --- planning ------------------------------------------------------------------------------

    def _plan(self, said: Said, language: str, ctx: ToolContext,
              recent: Recent | None) -> Action | Ambiguous | DirectAnswer:
        if said.what in ("relative", "indirect"):
            return self._relative(said, language, ctx, recent)
        targets = referents.entities(self._store, recent.targets) if recent is not None else []
        if recent is None or not targets:
            return _honest(language, "follow_up.unknown")  # nothing to refer to: never a guess
        intent = f"follow_up_{said.kind}"
        if said.what in _ON_OFF_TOOLS:
            return Action(intent, _ON_OFF_TOOLS[said.what], {}, targets, named=True)
        if said.what == "set":
            return self._set(said, targets, language)
        if said.what == "area":
            area = said.area or ""
            pool = [e for e in referents.same_kind(self._store, targets, {area}) if e.entity_id not in recent.targets]
            return Action(intent, recent.tool, dict(recent.args), pool) if pool \
                else _honest(language, "follow_up.none_in_area", area=area)
        pool = referents.others(self._store, recent) if said.what == "other" \
            else referents.all_of_them(self._store, recent)
        if not pool:
            return _honest(language, "follow_up.no_other" if said.what == "other" else "follow_up.unknown")
        action = Action(intent, recent.tool, dict(recent.args), pool)
        return _choose(action, pool, language) if said.what == "other" else action

    def _set(self, said: Said, targets: list[Entity], language: str) -> Action | DirectAnswer:
        """"Make it 50%": the level of the targets' kind (brightness, position, volume, degrees)."""
        quantity = next((q for q in map(quantity_of, targets) if q is not None), None)
        if quantity is None or said.value is None:
            return _honest(language, "error.unsupported", name=join_list([e.name for e in targets], language))
        spec = QUANTITIES[quantity]
        able = [e for e in targets if e.domain in spec.domains]
        return Action(_SET_INTENTS[quantity], spec.tool, {spec.arg: as_argument(quantity, said.value)}, able)

    def _relative(self, said: Said, language: str, ctx: ToolContext,
                  recent: Recent | None) -> Action | Ambiguous | DirectAnswer:
        """A step up or down on the devices meant; "already at …" when none would change."""
        last = referents.entities(self._store, recent.targets) if recent is not None else []
        quantity = said.quantity or next((q for q in map(quantity_of, last) if q is not None), None)
        if quantity is None:
            return _honest(language, "follow_up.unknown")
        meant = self._meant(said, quantity, ctx, last, language)
        if isinstance(meant, DirectAnswer):
            return meant
        found, unplaced = meant
        intent = f"relative_{said.kind}"
        if _own_step(found, quantity):  # players that report no level: their own step, as HA's
            action = Action(intent, "change_volume", {"step": "up" if said.direction > 0 else "down"}, found,
                            named=True)  # HassSetVolumeRelative (media_player.volume_up / _down)
            return _choose(action, found, language) if unplaced else action
        values = {e.entity_id: stepped(e, quantity, said.direction, said.amount) for e in found}
        changing = [e for e in found if values[e.entity_id] not in (None, current(e, quantity))]
        if quantity == "brightness" and said.direction > 0 and not unplaced:  # the lights on first
            changing = [e for e in changing if e.state == "on"] or changing
        dark = [e for e in found if switches_on(e, quantity, said.direction)]
        if not changing and dark:  # "too dark" by an on/off light: switch it on
            action = Action(intent, "turn_on", {}, dark, named=True)
            return _choose(action, dark, language) if unplaced else action
        if not changing:
            spoken = _spoken(quantity, values[found[0].entity_id] or 0.0, language)
            return _honest(language, "relative.at_limit", name=join_list([e.name for e in found], language),
                           value=spoken)
        spec = QUANTITIES[quantity]
        each = {e.entity_id: {spec.arg: as_argument(quantity, values[e.entity_id] or 0.0)} for e in changing}
        action = Action(intent, spec.tool, {}, changing, named=True, each=each)
        return _choose(action, changing, language) if unplaced else action

    def _meant(self, said: Said, quantity: str, ctx: ToolContext, last: list[Entity],
               language: str) -> tuple[list[Entity], bool] | DirectAnswer:
        """The devices a relative command means, in the order the module docstring gives, and
        whether nothing placed them (the home's devices of the kind: several are a question)."""
        def able(pool: Sequence[Entity]) -> list[Entity]:
            return [e for e in pool if current(e, quantity) is not None or switches_on(e, quantity, said.direction)
                    or _own_step([e], quantity)]

        def unable(pool: Sequence[Entity]) -> DirectAnswer:
            return _honest(language, "error.unsupported", name=join_list([e.name for e in pool], language))

        if said.names:
            named = referents.entities(self._store, sorted(said.names))
            return (able(named), False) if able(named) else unable(named)
        if said.area is not None:
            placed = able(self._in_area(said.area, quantity))
            return (placed, False) if placed else _honest(language, "follow_up.none_in_area", area=said.area)
        speaker = self._speaker_area(ctx)
        here = able(self._in_area(speaker, quantity)) if speaker else []
        of_kind = [e for e in last if e.domain in QUANTITIES[quantity].domains]
        for pool in ((here, able(of_kind)) if said.what == "indirect" else (able(of_kind), here)):
            if pool:
                return pool, False
        if of_kind:  # the conversation's device of the kind cannot do it: it is the one meant
            return unable(of_kind)
        everywhere = able(self._in_area(None, quantity))
        if not everywhere:
            return _honest(language, "relative.none")
        if len(everywhere) > _MAX_OPTIONS:
            return _honest(language, "follow_up.which")
        return everywhere, True

    def _in_area(self, area: str | None, quantity: str) -> list[Entity]:
        domains = QUANTITIES[quantity].domains
        return [e for e in self._store.all() if e.domain in domains and (area is None or e.area == area)]

    def _speaker_area(self, ctx: ToolContext) -> str | None:
        if not ctx.area:
            return None
        known = {e.area for e in self._store.all() if e.area}
        return ctx.area if ctx.area in known else self._resolver.area_of(ctx.area, ctx.language)

    # --- slot lists ----------------------------------------------------------------------------

    def _area_list(self, language: str) -> TextSlotList:
        key = (language, self._store.version)
        if key not in self._areas:
            self._areas = {k: v for k, v in self._areas.items() if k[1] == self._store.version}
            self._areas[key] = TextSlotList.from_tuples(
                [(text, area) for area, aliases in self._resolver.areas(language).items()
                 for text in spellings((area, *aliases))], allow_template=False)
        return self._areas[key]

    def _home_names(self) -> Names:
        version = self._store.version
        if self._names is None or self._names[0] != version:
            areas = [text for area, aliases in self._resolver.areas().items() for text in (area, *aliases)]
            self._names = version, build_names(self._store.all(), areas)
        return self._names[1]


def _own_step(found: list[Entity], quantity: str) -> bool:
    """Media players none of which reports its volume: "louder" is their own step up."""
    return quantity == "volume" and all(e.domain == "media_player" and current(e, quantity) is None for e in found)


def _choose(action: Action, options: list[Entity], language: str) -> Action | Ambiguous | DirectAnswer:
    """One option: the action; a few: "which one?" (held by the fast path); many: ask for more."""
    if len(options) == 1:
        return action
    if len(options) > _MAX_OPTIONS:
        return _honest(language, "follow_up.which")
    return Ambiguous(action.intent, options, replace(action, targets=options))


def _honest(language: str, key: str, **values: str) -> DirectAnswer:
    return DirectAnswer(phrase(language, key, **values), "follow_up_unresolved")


def _spoken(quantity: str, value: float, language: str) -> str:
    unit = "unit.degrees" if quantity == "temperature" else "unit.percent"
    return phrase(language, unit, value=format_number(value, language))


def _worded(answer: DirectAnswer, plan: Action | Ambiguous, said: Said, language: str) -> DirectAnswer:
    """A relative change said as what was done ("Turned Kitchen light up to 70 percent."), when
    every call worked; else (a held, failed or acknowledged call) the fast path's own words."""
    if not isinstance(plan, Action) or not answer.results or len(answer.results) != len(plan.targets) \
            or not all(r.ok and not r.pending for r in answer.results):
        return answer
    quantity = next((q for q, spec in QUANTITIES.items() if spec.tool == plan.tool), None)
    if quantity is None or quantity == "position":  # a cover's own sentence says where it goes
        return answer
    by_value: dict[float, list[str]] = {}
    for entity in plan.targets:
        by_value.setdefault(float(plan.each[entity.entity_id][QUANTITIES[quantity].arg]), []).append(entity.name)
    key = "relative.up" if said.direction > 0 else "relative.down"
    reply = " ".join(phrase(language, key, name=join_list(names, language), value=_spoken(quantity, value, language))
                     for value, names in by_value.items())
    return replace(answer, reply=reply)
