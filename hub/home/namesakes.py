"""Devices that answer to the same name: a command naming them asks which one, whatever their
kinds, and a discovered device that takes an existing device's name is logged and listed.

Names and aliases are compared as the resolver looks them up (`spoken_names.name_keys`), among
the devices the home tools act on: a door's contact sensor beside its lock is no look-alike.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Iterable, Sequence

from hub.home.catalogue import TURN_OFF_SERVICES, TURN_ON_SERVICES
from hub.home.device_text import spoken_form
from hub.home.entities import Entity
from hub.home.spoken_names import name_keys

CONTROLLABLE = frozenset(TURN_ON_SERVICES) | frozenset(TURN_OFF_SERVICES)


def namesakes(entity: Entity, others: Iterable[Entity]) -> list[Entity]:
    """The controllable entities of `others` (`entity` aside) that answer to one of its names."""
    if entity.domain not in CONTROLLABLE:
        return []
    keys = _keys((entity.name, *entity.aliases))
    return [other for other in others if other.entity_id != entity.entity_id and other.domain in CONTROLLABLE
            and not keys.isdisjoint(_keys((other.name, *other.aliases)))]


class NamesakeIndex:
    """Entities by the names they answer to, kept as they come and go: who may be a namesake of
    a new device, without comparing it with the whole home (a flood of thousands of discovered
    devices)."""

    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        self._by_key: dict[str, set[str]] = defaultdict(set)
        self._keys_of: dict[str, frozenset[str]] = {}
        for entity in entities:
            self.add(entity)

    def add(self, entity: Entity) -> None:
        self.discard(entity.entity_id)
        keys = self._keys_of[entity.entity_id] = _keys((entity.name, *entity.aliases))
        for key in keys:
            self._by_key[key].add(entity.entity_id)

    def discard(self, entity_id: str) -> None:
        for key in self._keys_of.pop(entity_id, ()):
            self._by_key[key].discard(entity_id)

    def candidates(self, entity: Entity) -> set[str]:
        """The entity ids that answer to one of `entity`'s names (itself included, when known)."""
        return {i for key in _keys((entity.name, *entity.aliases)) for i in self._by_key.get(key, ())}


def namesake_groups(entities: Iterable[Entity]) -> list[list[Entity]]:
    """Each name two or more controllable entities answer to, as those entities (by entity id)."""
    by_key: dict[str, dict[str, Entity]] = defaultdict(dict)
    for entity in entities:
        if entity.domain in CONTROLLABLE:
            for key in _keys((entity.name, *entity.aliases)):
                by_key[key][entity.entity_id] = entity
    groups = {tuple(sorted(found)): found for found in by_key.values() if len(found) > 1}
    return [[groups[ids][i] for i in ids] for ids in sorted(groups)]


@lru_cache(maxsize=8192)
def _keys(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(name_keys(names))


def option_names(options: Sequence[Entity]) -> list[str]:
    """The options of a "which one?" question as said: each name as the hub may say it
    (`device_text.spoken_form`: no instruction a device's name carries is read out), a name two of
    them share told apart by kind ("Front Door (lock)", "Front Door (switch)"), or by area when
    the kinds are the same."""
    names = {option.entity_id: spoken_form(option.name) or option.domain for option in options}
    shared: dict[str, list[Entity]] = defaultdict(list)
    for option in options:
        shared[names[option.entity_id].casefold()].append(option)
    said = []
    for option in options:
        name, twins = names[option.entity_id], shared[names[option.entity_id].casefold()]
        area = spoken_form(option.area) if option.area else ""
        if len(twins) > 1 and len({t.domain for t in twins}) > 1:
            said.append(f"{name} ({option.domain})")
        elif len(twins) > 1 and area and len({t.area for t in twins}) > 1:
            said.append(f"{name} ({area})")
        else:
            said.append(name)
    return said
