"""Entities the hub knows, whichever backend (demo, Home Assistant, MQTT) provides them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Iterable, Iterator, Mapping, Protocol

_LOGGER = logging.getLogger(__name__)

# Caps on what one entity brings into the prompt, whatever its source says (a discovery config or
# Home Assistant's registry may hold a 200,000-character name): no one entity may take the prompt.
MAX_NAME_CHARS = 100  # a name, an alias, an area
MAX_ALIASES = 8
MAX_TEXT_CHARS = 255  # the state, the device class, a text attribute


@dataclass(frozen=True)
class Entity:
    entity_id: str  # "light.kitchen"
    name: str  # friendly name
    state: str = "unknown"
    attributes: dict[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    area: str | None = None
    device_class: str | None = None
    source: str = "demo"  # demo | ha | mqtt
    device_id: str | None = None  # used to merge one device seen through HA and MQTT
    # HA's entity_category ("diagnostic", "config"): a device's battery, signal or setting, not
    # what the device does (HA's registry; MQTT discovery's `entity_category`)
    entity_category: str | None = None

    @property
    def domain(self) -> str:
        return self.entity_id.split(".", 1)[0]


@dataclass(frozen=True)
class Floor:
    aliases: tuple[str, ...]
    areas: tuple[str, ...]


StateListener = Callable[[Entity | None, Entity], Awaitable[None] | None]


class NameOverlay(Protocol):
    """Names the user added or removed, and the entities they untargeted (hub.home.name_book),
    laid over what the backends say: every reader of the store sees the result."""

    def entity(self, entity: Entity) -> Entity | None:
        """The entity with its names as the user wants them; None: untargeted (the hub leaves it be)."""
        ...

    def area_aliases(self, aliases: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]: ...

    def floors(self, floors: Mapping[str, Floor]) -> dict[str, Floor]: ...


def bounded(entity: Entity) -> Entity:
    """The entity with its texts cut to the caps above (itself when they fit)."""
    attributes = {k: v[:MAX_TEXT_CHARS] if isinstance(v, str) else v for k, v in entity.attributes.items()}
    capped = replace(
        entity,
        name=entity.name[:MAX_NAME_CHARS],
        state=entity.state[:MAX_TEXT_CHARS],
        aliases=tuple(a[:MAX_NAME_CHARS] for a in entity.aliases[:MAX_ALIASES]),
        area=entity.area[:MAX_NAME_CHARS] if entity.area else entity.area,
        device_class=entity.device_class[:MAX_TEXT_CHARS] if entity.device_class else entity.device_class,
        attributes=attributes if attributes != entity.attributes else entity.attributes,
    )
    return entity if capped == entity else capped


class EntityBackend(Protocol):
    """Carries out a service call on the real (or simulated) device."""

    async def call_service(
        self, entity: Entity, service: str, data: dict[str, Any]
    ) -> None: ...


class BackendError(RuntimeError):
    """The backend could not carry out the call (HA down, 500, broker gone, ...)."""


class ActionRejected(BackendError):
    """The backend refused the call: the device has no such action (HA's 400 for an action it
    does not know, an MQTT device without the command)."""

    code = "rejected"


class EntityStore:
    """The live set of exposed entities, with listeners for state changes.

    Backends push entities in with `upsert`; tools read them and route service calls to the
    backend registered for the entity's source. With a `NameOverlay`, what they read is the
    backends' entities with the user's names, less the untargeted ones (`known` still has them).
    """

    def __init__(self) -> None:
        self._entities: dict[str, Entity] = {}
        self._known: dict[str, Entity] = {}  # as the backends gave them, untargeted ones too
        self._overlay: NameOverlay | None = None
        self._backends: dict[str, EntityBackend] = {}
        self._listeners: list[StateListener] = []
        self._area_aliases: dict[str, tuple[str, ...]] = {}
        self._capped: set[str] = set()  # entity ids whose texts were cut (warned once)
        self._floors: dict[str, Floor] = {}
        self._places: dict[str, dict[str, str]] = {}  # source → device, entity or area id → area
        self.version = 0  # bumps when the set of entities, their names or area aliases change
        self._domains: tuple[int, frozenset[str]] = (-1, frozenset())

    def register_backend(self, source: str, backend: EntityBackend) -> None:
        self._backends[source] = backend

    def backend_for(self, entity: Entity) -> EntityBackend:
        try:
            return self._backends[entity.source]
        except KeyError as err:
            raise BackendError(f"no backend for {entity.source} entities") from err

    def add_listener(self, listener: StateListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @contextlib.contextmanager
    def next_change(self, entity_id: str) -> Iterator[asyncio.Event]:
        """An event set when `entity_id`'s state next changes; enter it before causing the change."""
        changed = asyncio.Event()

        def listener(old: Entity | None, new: Entity) -> None:
            if new.entity_id == entity_id:
                changed.set()

        remove = self.add_listener(listener)
        try:
            yield changed
        finally:
            remove()

    def get(self, entity_id: str) -> Entity | None:
        return self._entities.get(entity_id)

    def known(self, entity_id: str) -> Entity | None:
        """The entity as its backend gave it, untargeted or not."""
        return self._known.get(entity_id)

    def all_known(self) -> list[Entity]:
        """Every entity as its backend gave it, the untargeted ones too (the Names page)."""
        return sorted(self._known.values(), key=lambda e: e.entity_id)

    def set_overlay(self, overlay: NameOverlay | None) -> None:
        """Lay the user's names over the backends' (and again after each change: `refresh_names`)."""
        self._overlay = overlay
        self.refresh_names()

    def refresh_names(self) -> None:
        """The overlay changed: every entity placed again, and the version bumped (the fast path's
        slot lists, the resolver's index and the model's prompt are rebuilt from it)."""
        for entity in list(self._known.values()):
            self._place(entity)
        self.version += 1

    def all(self) -> list[Entity]:
        return sorted(self._entities.values(), key=lambda e: e.entity_id)

    def has_any(self, domains: frozenset[str]) -> bool:
        """Whether the home has an entity of one of `domains` (their set is kept until the set
        of entities changes: tools ask on every turn)."""
        if self._domains[0] != self.version:
            self._domains = (self.version, frozenset(e.domain for e in list(self._entities.values())))
        return not domains.isdisjoint(self._domains[1])

    def __len__(self) -> int:
        return len(self._entities)

    def __contains__(self, entity_id: str) -> bool:
        return entity_id in self._entities

    def set_area_aliases(self, area: str, aliases: Iterable[str]) -> None:
        """Other names of an area ("Küche", "cuisine" for "Kitchen"), as HA's area registry has."""
        cleaned = tuple(a.strip()[:MAX_NAME_CHARS] for a in aliases if a.strip())[:MAX_ALIASES]
        if self._area_aliases.get(area, ()) != cleaned:
            self._area_aliases[area] = cleaned
            self.version += 1

    def area_aliases(self) -> dict[str, tuple[str, ...]]:
        """Area → its aliases (the user's too), for areas that have any."""
        if self._overlay is None:
            return {area: aliases for area, aliases in self._area_aliases.items() if aliases}
        # a snapshot: the fast path's warm-up reads this in a thread while discovery adds entities
        known = set(self._area_aliases) | {e.area for e in list(self._entities.values()) if e.area}
        merged = self._overlay.area_aliases(self._area_aliases)
        return {area: aliases for area, aliases in merged.items() if aliases and area in known}

    def own_area_aliases(self) -> dict[str, tuple[str, ...]]:
        """Area → the aliases its backend gave it (the Names page tells them from the user's)."""
        return dict(self._area_aliases)

    def set_floor(self, floor: str, areas: Iterable[str], aliases: Iterable[str] = ()) -> None:
        """A floor ("First floor", aliases "upstairs") and the areas on it, as HA's floor registry has."""
        new = Floor(tuple(a.strip() for a in aliases if a.strip()), tuple(areas))
        if self._floors.get(floor) != new:
            self._floors[floor] = new
            self.version += 1

    def floors(self) -> dict[str, Floor]:
        return self._overlay.floors(self._floors) if self._overlay is not None else dict(self._floors)

    def own_floors(self) -> dict[str, Floor]:
        """The floors as their backend gave them."""
        return dict(self._floors)

    def set_places(self, source: str, places: dict[str, str]) -> None:
        """Where one source's devices are, exposed or not (a satellite seldom is): device ids,
        entity ids and area ids → the area's name, as HA's device, entity and area registries
        have them. Replaces what `source` said before."""
        self._places[source] = dict(places)

    def place_of(self, key: str) -> str | None:
        """The area a device, entity or area id is in, as a source said (`set_places`)."""
        return next((places[key] for places in self._places.values() if key in places), None)

    def upsert(self, entity: Entity) -> None:
        capped = bounded(entity)
        if capped is not entity:
            if entity.entity_id not in self._capped:
                _LOGGER.warning("%s (from %s) has texts longer than the hub takes (names %d characters, "
                                "states %d); they are cut", entity.entity_id, entity.source, MAX_NAME_CHARS,
                                MAX_TEXT_CHARS)
                self._capped.add(entity.entity_id)
            entity = capped
        self._known[entity.entity_id] = entity
        self._place(entity)

    def _place(self, known: Entity) -> None:
        """The entity as the hub sees it (the overlay's), or gone when it is untargeted."""
        entity = self._overlay.entity(known) if self._overlay is not None else known
        old = self._entities.get(known.entity_id)
        if entity is None:
            if self._entities.pop(known.entity_id, None) is not None:
                self.version += 1
            return
        self._entities[entity.entity_id] = entity
        if old is None or _identity(old) != _identity(entity):
            self.version += 1
        if old is None or old.state != entity.state or old.attributes != entity.attributes:
            self._notify(old, entity)

    def update_state(
        self, entity_id: str, state: str, attributes: dict[str, Any] | None = None
    ) -> Entity | None:
        old = self._known.get(entity_id)
        if old is None:
            return None
        new = replace(old, state=state, attributes=attributes if attributes is not None else old.attributes)
        self.upsert(new)
        return self._entities.get(entity_id)

    def remove(self, entity_id: str) -> None:
        self._known.pop(entity_id, None)
        if self._entities.pop(entity_id, None) is not None:
            self.version += 1

    def replace_all(self, entities: Iterable[Entity], source: str) -> None:
        """Make the entities of one source exactly `entities` (a full reload)."""
        wanted = {e.entity_id: e for e in entities}
        for entity_id in [i for i, e in self._known.items() if e.source == source and i not in wanted]:
            self.remove(entity_id)
        for entity in wanted.values():
            self.upsert(entity)

    def _notify(self, old: Entity | None, new: Entity) -> None:
        for listener in list(self._listeners):
            result = listener(old, new)
            if asyncio.iscoroutine(result):
                asyncio.ensure_future(result)


def _identity(entity: Entity) -> tuple[Any, ...]:
    """What the model's stable prompt depends on: everything but the live state."""
    return (entity.entity_id, entity.name, entity.aliases, entity.area, entity.device_class)
