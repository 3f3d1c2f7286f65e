"""A generated home of any size, for scale tests and the micro benchmark."""

from __future__ import annotations

from hub.home.entities import Entity

AREAS = ["Kitchen", "Living room", "Bedroom", "Office", "Bathroom", "Hallway", "Garage",
         "Garden", "Attic", "Basement", "Dining room", "Guest room", "Kids room", "Laundry",
         "Porch", "Study", "Pantry", "Library", "Gym", "Workshop"]
KINDS = [("light", "light"), ("light", "lamp"), ("light", "spot"), ("switch", "plug"),
         ("switch", "socket"), ("cover", "blinds"), ("fan", "fan"), ("media_player", "speaker"),
         ("climate", "thermostat"), ("sensor", "sensor")]
QUALIFIERS = ["ceiling", "corner", "window", "wall", "desk", "reading", "left", "right",
              "upper", "lower", "north", "south", "east", "west", "small", "big", "old", "new",
              "blue", "red"]


def generated_entities(count: int) -> list[Entity]:
    """`count` entities spread over 20 areas, with unique names like "Attic north lamp"."""
    entities = []
    for n in range(count):
        area = AREAS[n % len(AREAS)]
        domain, kind = KINDS[(n // len(AREAS)) % len(KINDS)]
        qualifier = QUALIFIERS[(n // (len(AREAS) * len(KINDS))) % len(QUALIFIERS)]
        suffix = n // (len(AREAS) * len(KINDS) * len(QUALIFIERS))
        name = f"{area} {qualifier} {kind}" + (f" {suffix + 1}" if suffix else "")
        object_id = name.lower().replace(" ", "_")
        entities.append(Entity(f"{domain}.{object_id}", name, state="off", area=area,
                               aliases=(f"{qualifier} {kind} {n}",)))
    return entities
