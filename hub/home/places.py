"""Where a request was spoken: the speaker's area, and its floor, from what the request carries.

A request may name its satellite (`satellite_id`), its device (`device_id`) or its area (`area`,
an area id or a name). The area said outright wins; a satellite or device id is looked up in the
`satellites` option (id → area), then in the places the home's sources report (Home Assistant's
device, entity and area registries, `EntityStore.set_places`: a satellite is seldom exposed),
then among the entities themselves (an entity with that id, or the entities of a device with that
id: an MQTT satellite's discovered components carry its `suggested_area`). An area is an area's
name, an alias or translation of one, or an area id. Its floor is the one whose areas hold it:
Home Assistant's floor registry, or for a home without one the `area_floors` option
(`ConfiguredFloors`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

from hub.home.entities import Entity, EntityStore
from hub.home.resolve import EntityResolver

_LOGGER = logging.getLogger(__name__)
MAX_PLACE_CHARS = 255  # an id or area name longer than this names no place (a client's mistake)


@dataclass(frozen=True)
class PlacesOptions:
    satellites: str | None  # "id=area" pairs (parse_satellites)
    area_floors: str | None  # "area=floor" pairs (parse_area_floors)


@dataclass(frozen=True)
class Place:
    """The speaker's area, as the home's entities name it, and the floor it is on."""

    area: str
    floor: str | None = None


def nearest(entities: Sequence[Entity], area: str, floor_areas: Collection[str]) -> list[Entity]:
    """Those of `entities` in `area`, else those on its floor (in `floor_areas`); [] when none is
    (Home Assistant's preference among devices that answer to one name)."""
    for areas in ({area}, floor_areas):
        chosen = [e for e in entities if e.area in areas]
        if chosen:
            return chosen
    return []


def parse_satellites(text: str | None) -> dict[str, str]:
    """The `satellites` option, "id=area" pairs separated by commas, semicolons or newlines.
    Raises ValueError naming a pair without an "=", an id or an area."""
    return dict(_pairs(text, "satellites", "id=area"))


def parse_area_floors(text: str | None) -> dict[str, tuple[list[str], list[str]]]:
    """The `area_floors` option (a home without Home Assistant's floor registry: MQTT homes),
    "area=floor" pairs as `parse_satellites` reads them; a floor may bring other names after
    "|" ("Bedroom=First floor|upstairs"). Each floor → (its areas, its other names). Raises
    ValueError naming a pair without an "=", an area or a floor, or an area on two floors."""
    floors: dict[str, tuple[list[str], list[str]]] = {}
    placed: dict[str, str] = {}
    for area, said in _pairs(text, "area_floors", "area=floor"):
        floor, *aliases = (name.strip() for name in said.split("|"))
        if not floor or placed.setdefault(area.casefold(), floor) != floor:
            raise ValueError(f"area_floors: {area!r} is not on one floor")
        areas, other_names = floors.setdefault(floor, ([], []))
        areas.append(area)
        other_names.extend(a for a in aliases if a and a not in other_names)
    return floors


def _pairs(text: str | None, option: str, form: str) -> list[tuple[str, str]]:
    """"key=value" pairs separated by commas, semicolons or newlines."""
    pairs: list[tuple[str, str]] = []
    for item in (text or "").replace(";", ",").replace("\n", ",").split(","):
        if not item.strip():
            continue
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key or not value:
            raise ValueError(f"{option}: {item.strip()!r} is not {form}")
        pairs.append((key, value))
    return pairs


class ConfiguredFloors:
    """The `area_floors` option in the store, each area spelled as the home's entities spell it
    ("kitchen=Ground floor" holds the devices' "Kitchen"), kept so as devices are discovered."""

    def __init__(self, store: EntityStore, floors: Mapping[str, tuple[list[str], list[str]]]) -> None:
        self._store = store
        self._floors = dict(floors)
        self._areas = {area.casefold() for areas, _ in self._floors.values() for area in areas}
        self._applied: dict[str, str] = {}  # an option's area, folded → as the store has it
        if self._floors:
            store.add_listener(self._on_entity)
            self.apply()

    def apply(self) -> None:
        spelled = {e.area.casefold(): e.area for e in self._store.all() if e.area}
        for floor, (areas, aliases) in self._floors.items():
            placed = [spelled.get(area.casefold(), area) for area in areas]
            self._applied.update((area.casefold(), area) for area in placed)
            self._store.set_floor(floor, placed, aliases)

    def _on_entity(self, old: Entity | None, new: Entity) -> None:
        area = new.area
        if area and (old is None or old.area != area) and area.casefold() in self._areas \
                and self._applied.get(area.casefold()) != area:
            self.apply()


class SpeakerPlaces:
    """Finds the speaker's `Place` (the agent's `SpeakerLocator`)."""

    def __init__(self, store: EntityStore, resolver: EntityResolver,
                 satellites: Mapping[str, str] | None = None) -> None:
        self._store = store
        self._resolver = resolver
        self._satellites = dict(satellites or {})
        self._device_areas: tuple[int, dict[str, str]] | None = None  # store version, device → area

    def locate(self, *, satellite_id: str | None = None, device_id: str | None = None,
               area: str | None = None, language: str = "en") -> Place | None:
        """The place the request names (its area first, then its satellite, then its device), or
        None when it names none the home knows."""
        area, satellite_id, device_id = (key if key and len(key) <= MAX_PLACE_CHARS else None
                                         for key in (area, satellite_id, device_id))
        found = self._area_named(area, language) if area else None
        for key in (satellite_id, device_id):
            if found is None and key:
                found = self._area_of_device(key, language)
        if found is None:
            if area or satellite_id or device_id:
                _LOGGER.info("no area known for the request's place (area %r, satellite %r, device %r)",
                             area, satellite_id, device_id)
            return None
        floor = next((name for name, floor in self._store.floors().items() if found in floor.areas), None)
        return Place(found, floor)

    def _area_of_device(self, key: str, language: str) -> str | None:
        configured = self._satellites.get(key)
        if configured is not None:
            return self._area_named(configured, language)
        reported = self._store.place_of(key)
        if reported is not None:
            return reported
        entity = self._store.get(key)
        if entity is not None and entity.area:
            return entity.area
        return self._devices().get(key)

    def _area_named(self, said: str, language: str) -> str | None:
        """The area an area's name, alias, translation or id means."""
        said = said.strip()
        if said in self._resolver.areas():
            return said
        return self._store.place_of(said) or self._resolver.area_of(said, language)

    def _devices(self) -> dict[str, str]:
        """Each device id the entities carry → the area of its entities (the first that has one)."""
        version = self._store.version
        if self._device_areas is None or self._device_areas[0] != version:
            areas: dict[str, str] = {}
            for entity in self._store.all():
                if entity.device_id and entity.area:
                    areas.setdefault(entity.device_id, entity.area)
            self._device_areas = version, areas
        return self._device_areas[1]
