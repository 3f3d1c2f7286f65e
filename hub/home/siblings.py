"""A device's own entity before its siblings: "Roborock" before "Roborock Battery".

Integrations give one device many entities: the one that does its work (named after the device)
and its battery, signal, power or meter readings and settings, named "<device> <feature>" (Home
Assistant's `has_entity_name`; HA's entity registry marks the diagnostics and settings with an
`entity_category`, as MQTT discovery's `entity_category` does). A name that fits the device and
its siblings means the device: "close the smart curtain" is never a question about "Smart
Curtain Battery". A sibling said by its own name ("the front door auto lock") is that sibling.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from hub.home.entities import Entity
from hub.home.normalize import fold


def primary(entities: Iterable[Entity]) -> list[Entity]:
    """`entities` less the siblings of another of them (same device): those with an entity
    category when one of the device's has none, then those whose name extends another's of the
    device ("<device> <feature>"). Order kept."""
    chosen = list(entities)
    by_device: dict[str, list[Entity]] = defaultdict(list)
    for entity in chosen:
        if entity.device_id:
            by_device[entity.device_id].append(entity)
    dropped: set[str] = set()
    for members in by_device.values():
        if len(members) < 2:
            continue
        working = [e for e in members if not e.entity_category] or members
        dropped.update(e.entity_id for e in members if e not in working)
        names = {e.entity_id: fold(e.name).split() for e in working}
        for entity in working:
            own = names[entity.entity_id]
            if any(other is not entity and len(names[other.entity_id]) < len(own)
                   and own[:len(names[other.entity_id])] == names[other.entity_id] for other in working):
                dropped.add(entity.entity_id)
    return [e for e in chosen if e.entity_id not in dropped]


def of_kinds(entities: Iterable[Entity], kinds: Iterable[str]) -> list[Entity]:
    """Those of `entities` whose domain is one of `kinds` (order kept)."""
    allowed = set(kinds)
    return [e for e in entities if e.domain in allowed]
