"""A device's other readings: the battery, power, energy, temperature, humidity, signal or door
contact of the device an entity belongs to ("battery level of the motion sensor" is the motion
sensor device's battery sensor, not its motion). Siblings are the entities of one device (HA's
device registry, MQTT discovery's device block: `Entity.device_id`), else those whose name is the
device's name and more ("Motion Sensor Battery"); a reading is found by its device class, a
number before a yes/no (a battery percentage before a binary low/normal).
"""

from __future__ import annotations

from typing import Iterable

from hub.home.entities import Entity
from hub.home.normalize import fold

# part → the (domain, device class) that read it, best first; None: any of the domain
PARTS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "battery": (("sensor", "battery"), ("binary_sensor", "battery")),
    "power": (("sensor", "power"), ("sensor", "current"), ("sensor", "energy")),
    "energy": (("sensor", "energy"), ("sensor", "power")),
    "temperature": (("sensor", "temperature"), ("climate", None), ("water_heater", None)),
    "humidity": (("sensor", "humidity"), ("humidifier", None)),
    "signal": (("sensor", "signal_strength"),),
    "contact": (("binary_sensor", "door"), ("binary_sensor", "opening"), ("binary_sensor", "window"),
                ("binary_sensor", "garage_door")),
}


def siblings(entity: Entity, entities: Iterable[Entity]) -> list[Entity]:
    """The entities of `entity`'s device, itself first."""
    if entity.device_id:
        return [entity, *(e for e in entities if e.device_id == entity.device_id and e != entity)]
    own = fold(entity.name)
    return [entity, *(e for e in entities if e != entity and fold(e.name).startswith(f"{own} "))]


def reading(entity: Entity, part: str, entities: Iterable[Entity]) -> Entity | None:
    """The entity of `entity`'s device that reads `part`, None when it has none."""
    found = siblings(entity, entities)
    for domain, device_class in PARTS[part]:
        for sibling in found:
            if sibling.domain == domain and (device_class is None or sibling.device_class == device_class):
                return sibling
    return None


def readings(entity: Entity, entities: Iterable[Entity]) -> dict[str, Entity]:
    """Every part its device reads but `entity` itself: part → the entity that reads it."""
    found = siblings(entity, entities)
    return {part: sibling for part in PARTS if (sibling := reading(entity, part, found)) is not None
            and sibling != entity}
