"""Where a request was spoken: the speaker's area, and its floor, from what the request carries.

A request may name its satellite (`satellite_id`), its device (`device_id`) or its area (`area`,
an area id or a name). The area said outright wins; a satellite or device id is looked up in the
`satellites` option (id → area), then in the places the home's sources report (Home Assistant's
device, entity and area registries, `EntityStore.set_places`: a satellite is seldom exposed),
then among the entities themselves (an entity with that id, or the entities of a device with that
id: an MQTT satellite's discovered components carry its `suggested_area`). An area is an area's
name, an alias or translation of one, or an area id. Its floor is the one whose areas hold it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping

from hub.home.entities import EntityStore
from hub.home.resolve import EntityResolver

_LOGGER = logging.getLogger(__name__)
MAX_PLACE_CHARS = 255  # an id or area name longer than this names no place (a client's mistake)


@dataclass(frozen=True)
class PlacesOptions:
    satellites: str | None  # "id=area" pairs (parse_satellites)


@dataclass(frozen=True)
class Place:
    """The speaker's area, as the home's entities name it, and the floor it is on."""

    area: str
    floor: str | None = None


def parse_satellites(text: str | None) -> dict[str, str]:
    """The `satellites` option, "id=area" pairs separated by commas, semicolons or newlines.
    Raises ValueError naming a pair without an "=", an id or an area."""
    pairs: dict[str, str] = {}
    for item in (text or "").replace(";", ",").replace("\n", ",").split(","):
        if not item.strip():
            continue
        key, sep, area = (part.strip() for part in item.partition("="))
        if not sep or not key or not area:
            raise ValueError(f"satellites: {item.strip()!r} is not id=area")
        pairs[key] = area
    return pairs


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
