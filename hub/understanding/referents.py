"""What a conversation's follow-ups refer to: the targets and action of its last command.

A turn that acted on devices (the fast path's calls or the model's) leaves a `Recent`: the tool
and arguments it ran, the entities it acted on, the options of the "which one?" they were chosen
from, and when. "Turn it off", "make it 50%", "and the bedroom too", "the other one", "all of
them" refer to it for `FOLLOW_UP_WINDOW_S` after it; past that, or with nothing before, a
follow-up is answered honestly (`hub.understanding.follow_ups`), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

from hub.home.entities import Entity, EntityStore

FOLLOW_UP_WINDOW_S = 300.0  # "a few minutes after its last turn"


@dataclass(frozen=True)
class Recent:
    """The last command of a conversation: `tool` ("" when it only asked "which one?") with
    `args` (its entity id aside), the entity ids it acted on, and the options it chose from."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    targets: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    at: float = 0.0  # time.monotonic() of the turn
    language: str = ""  # the turn's: a follow-up is most likely said in it too ("apágala")

    def fresh(self, now: float) -> bool:
        return now - self.at <= FOLLOW_UP_WINDOW_S


Call = tuple[str, Mapping[str, Any], bool]  # a turn's call: tool, arguments, whether it worked


def recent_after(previous: Recent | None, calls: Sequence[Call], device_tools: Collection[str],
                 asked: Sequence[str], now: float, language: str = "") -> Recent | None:
    """The conversation's referents after a turn: what its device calls acted on (those that
    worked; the options kept when the targets were chosen among them); else, when it asked
    "which one?", those options; else what it had."""
    acted = [(tool, args) for tool, args, ok in calls
             if ok and tool in device_tools and isinstance(args.get("entity_id"), str)]
    if acted:
        tool, args = acted[-1]
        targets = tuple(dict.fromkeys(str(a["entity_id"]) for _, a in acted))
        kept = previous.options if previous is not None and set(targets) <= set(previous.options) else ()
        return Recent(tool, {k: v for k, v in args.items() if k != "entity_id"}, targets, kept, now, language)
    if asked:
        return Recent("", {}, (), tuple(asked), now, language)
    return previous


def entities(store: EntityStore, ids: Sequence[str]) -> list[Entity]:
    """The entities of `ids` the home still has, in order."""
    return [e for e in map(store.get, ids) if e is not None]


def same_kind(store: EntityStore, like: Sequence[Entity], areas: Collection[str | None] | None) -> list[Entity]:
    """The home's entities of the kinds (domains) of `like`, in `areas` (None: anywhere)."""
    domains = {e.domain for e in like}
    return [e for e in store.all() if e.domain in domains and (areas is None or e.area in areas)]


def others(store: EntityStore, recent: Recent) -> list[Entity]:
    """"The other one": the options of the "which one?" not chosen; else the devices of the
    targets' kind in their area(s) that were not the targets."""
    targets = entities(store, recent.targets)
    pool = entities(store, recent.options) if recent.options else same_kind(
        store, targets, {e.area for e in targets})
    return [e for e in pool if e.entity_id not in recent.targets]


def all_of_them(store: EntityStore, recent: Recent) -> list[Entity]:
    """"All of them": the options of the "which one?"; else every device of the targets' kind
    in their area(s) (none when a target has no area: "all" would be the whole home)."""
    if recent.options:
        return entities(store, recent.options)
    targets = entities(store, recent.targets)
    areas = {e.area for e in targets}
    return same_kind(store, targets, areas) if targets and None not in areas else []
