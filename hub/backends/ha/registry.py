"""Home Assistant's entities in the hub's EntityStore, kept current, and service calls back to HA.

`HomeAssistantBackend(options, store)` is a component (`start()` / `stop()`): it connects to HA's
websocket, loads the area, device and entity registries and the states of the entities the
options allow (`expose`: what HA exposes to Assist, or all; `include_entities` /
`exclude_entities`: comma-separated ids or globs, exclude wins), puts them in the store as
source "ha", with where every device is (`places`, for the speaker's room), then follows
`state_changed` events and reloads when a registry or what HA exposes changes (`exposure`): a
rename, an alias, an area or an exposure takes effect without a restart. When HA goes away it reconnects with backoff; the store keeps the last known entities meanwhile. It never
raises out of its task: problems are logged and kept in `status` / `last_error`.

As the store's backend for source "ha", `call_service` runs `POST /api/services/<domain>/<service>`
for entities it loaded (and only those), and applies the states HA reports back at once;
`service_response` does the same for a service that answers with data (`?return_response`).
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

from hub.config import ConfigError
from hub.home.entities import BackendError, Entity, EntityStore
from hub.backends.ha.client import HAAuthError, HAClient, HAEndpoint, HAError, HaOptions, HARequestError, HAWebSocket
from hub.backends.ha.services import run_service
from hub.backends.ha.exposure import ASSISTANT, exposed_ids, watch_exposure
from hub.backends.ha.places import places_of

_LOGGER = logging.getLogger(__name__)

SOURCE = "ha"
RECONNECT_DELAYS_S = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
AUTH_RETRY_S = 60.0  # a refused token rarely fixes itself; do not hammer HA
RELOAD_DEBOUNCE_S = 1.0
STARTUP_POLL_S = 1.0
REGISTRY_EVENTS = ("entity_registry_updated", "device_registry_updated", "area_registry_updated",
                   "floor_registry_updated")


@dataclass(frozen=True)
class EntityFilter:
    """Which HA entities the hub may see and control."""

    expose: str = "assist"  # assist: what HA exposes to Assist; all: every entity with a state
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, options: HaOptions) -> "EntityFilter":
        return cls(options.expose, _patterns(options.include_entities), _patterns(options.exclude_entities))

    def allows(self, entity_id: str, exposed: bool, registry_entry: dict[str, Any] | None) -> bool:
        if any(fnmatch.fnmatchcase(entity_id, p) for p in self.exclude):
            return False
        if any(fnmatch.fnmatchcase(entity_id, p) for p in self.include):
            return True
        if registry_entry and registry_entry.get("disabled_by"):
            return False
        if self.expose == "all":
            return not (registry_entry and (registry_entry.get("hidden_by") or registry_entry.get("entity_category")))
        return exposed


def _patterns(value: str | None) -> tuple[str, ...]:
    return tuple(p.strip().lower() for p in (value or "").split(",") if p.strip())


@dataclass
class Snapshot:
    """What one load read from HA."""

    states: list[dict[str, Any]]
    entity_registry: list[dict[str, Any]]  # config/entity_registry/list (+ aliases merged in)
    devices: list[dict[str, Any]]
    areas: list[dict[str, Any]]
    exposed: dict[str, dict[str, bool]]  # homeassistant/expose_entity/list
    floors: list[dict[str, Any]] = field(default_factory=list)  # config/floor_registry/list


def build_entities(snapshot: Snapshot, entity_filter: EntityFilter) -> list[Entity]:
    """HA's states and registries → the hub's entities (those the filter allows)."""
    registry = {e["entity_id"]: e for e in snapshot.entity_registry}
    device_area = {d["id"]: d.get("area_id") for d in snapshot.devices}
    area_name = {a["area_id"]: a["name"] for a in snapshot.areas}
    entities = []
    for state in snapshot.states:
        entity_id = state.get("entity_id")
        if not isinstance(entity_id, str) or "." not in entity_id:
            continue
        entry = registry.get(entity_id)
        exposed = bool(snapshot.exposed.get(entity_id, {}).get(ASSISTANT))
        if not entity_filter.allows(entity_id, exposed, entry):
            continue
        entities.append(entity_from_state(state, entry, device_area, area_name))
    return entities


def entity_from_state(
    state: dict[str, Any],
    entry: dict[str, Any] | None,
    device_area: dict[str, str | None],
    area_name: dict[str, str],
) -> Entity:
    entity_id = state["entity_id"]
    attributes = dict(state.get("attributes") or {})
    entry = entry or {}
    device_id = entry.get("device_id")
    area_id = entry.get("area_id") or (device_area.get(device_id) if device_id else None)
    name = (
        attributes.get("friendly_name") or entry.get("name") or entry.get("original_name")
        or entity_id.split(".", 1)[1].replace("_", " ")
    )
    aliases = tuple(a for a in entry.get("aliases") or () if isinstance(a, str) and a.strip() and a != name)
    device_class = entry.get("device_class") or entry.get("original_device_class") or attributes.get("device_class")
    return Entity(
        entity_id=entity_id,
        name=str(name),
        state=str(state.get("state", "unknown")),
        attributes=attributes,
        aliases=tuple(sorted(aliases)),
        area=area_name.get(area_id) if area_id else None,
        device_class=device_class,
        source=SOURCE,
        device_id=device_id,
        entity_category=entry.get("entity_category") or None,
    )


class HomeAssistantBackend:
    """Keeps the store's "ha" entities in step with Home Assistant and carries out their calls."""

    def __init__(
        self,
        options: HaOptions,
        store: EntityStore,
        *,
        endpoint: HAEndpoint | None = None,
        environ: dict[str, str] | None = None,
        reconnect_delays: Sequence[float] = RECONNECT_DELAYS_S,
        auth_retry_s: float = AUTH_RETRY_S,
    ) -> None:
        self.store = store
        found = endpoint or HAEndpoint.from_options(options, dict(os.environ) if environ is None else environ)
        if found is None:
            raise ConfigError("no Home Assistant configured: set ha_url and ha_token, or run as the add-on")
        self.endpoint = found
        self.filter = EntityFilter.from_options(options)
        self.client = HAClient(self.endpoint)
        self.status = "stopped"  # stopped | connecting | connected | auth_failed | unavailable
        self.last_error: str | None = None
        self.loaded = asyncio.Event()  # set after each successful load; cleared while disconnected
        self.loads = 0
        self._reconnect_delays = tuple(reconnect_delays)
        self._auth_retry_s = auth_retry_s
        self._allowed: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        self._ws: HAWebSocket | None = None
        self._reload_task: asyncio.Task[None] | None = None
        self._reload_again = False  # a change came while a reload was reading: read once more
        self._exposed: frozenset[str] = frozenset()  # what the last load saw exposed to Assist
        self._buffered_events: list[dict[str, Any]] | None = None
        self._last_logged: tuple[str, str] | None = None

    @classmethod
    def configured(cls, options: HaOptions, environ: dict[str, str] | None = None) -> bool:
        """True when the options (or the add-on environment) point at a Home Assistant."""
        environ = dict(os.environ) if environ is None else environ
        return bool(options.ha_url or environ.get("SUPERVISOR_TOKEN"))

    # --- component ----------------------------------------------------------------------

    async def start(self, wait_s: float = 10.0) -> None:
        """Connect in the background; wait up to `wait_s` for the first load so early turns see
        the home (a hub whose HA is down still starts)."""
        self.store.register_backend(SOURCE, self)
        self._task = asyncio.create_task(self._run(), name="home assistant connection")
        try:
            await asyncio.wait_for(self.loaded.wait(), wait_s)
        except asyncio.TimeoutError:
            _LOGGER.warning("Home Assistant not loaded yet (%s); continuing to retry in the background",
                            self.last_error or self.status)

    async def stop(self) -> None:
        for task in (self._reload_task, self._task):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._task = self._reload_task = None
        if self._ws is not None:
            await self._ws.close()
            self._ws = None
        await self.client.close()
        self.status = "stopped"

    # --- EntityBackend ------------------------------------------------------------------

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        await self._service(entity, service, data, respond=False)

    async def service_response(self, entity: Entity, service: str, data: dict[str, Any]) -> dict[str, Any]:
        """A service that answers with data (hub.home.queries): HA's response, by entity id."""
        return await self._service(entity, service, data, respond=True)

    async def _service(self, entity: Entity, service: str, data: dict[str, Any], respond: bool) -> dict[str, Any]:
        if entity.entity_id not in self._allowed:
            raise BackendError(f"{entity.entity_id} is not an entity the hub may control in Home Assistant")
        changed, response = await run_service(self.client, entity, service, data, respond)
        for state in changed:  # HA returns the states the call changed; apply them before the event comes
            if isinstance(state, dict) and state.get("entity_id") in self._allowed:
                self.store.update_state(state["entity_id"], str(state.get("state")), dict(state.get("attributes") or {}))
        return response

    # --- connection loop ----------------------------------------------------------------

    async def _run(self) -> None:
        failures = 0
        while True:
            self.status = "connecting"
            try:
                await self._connect_and_follow()
                failures = 0
                self._set_problem("unavailable", f"lost the connection to Home Assistant at {self.endpoint.where}; reconnecting")
                delay = self._reconnect_delays[0]
            except HAAuthError as err:
                self._set_problem("auth_failed", str(err))
                delay = self._auth_retry_s
            except HAError as err:
                self._set_problem("unavailable", str(err))
                delay = self._reconnect_delays[min(failures, len(self._reconnect_delays) - 1)]
                failures += 1
            except asyncio.CancelledError:
                raise
            except Exception as err:  # a bug must not end the connection loop for good
                _LOGGER.exception("Home Assistant connection failed unexpectedly")
                self._set_problem("unavailable", f"unexpected error: {err}")
                delay = self._reconnect_delays[-1]
            finally:
                self.loaded.clear()
                if self._ws is not None:
                    await self._ws.close()
                    self._ws = None
            await asyncio.sleep(delay)

    def _set_problem(self, status: str, message: str) -> None:
        """Record a problem; log it when it differs from the last one (not on every retry)."""
        if (status, message) != self._last_logged:
            log = _LOGGER.error if status == "auth_failed" else _LOGGER.warning
            log("Home Assistant: %s", message)
            self._last_logged = (status, message)
        self.status, self.last_error = status, message

    async def _connect_and_follow(self) -> None:
        ws = self._ws = await self.client.connect_websocket()
        self._buffered_events = []  # events that arrive while loading are applied after the load
        await ws.subscribe_events("state_changed", self._on_state_changed)
        for event_type in REGISTRY_EVENTS:
            await ws.subscribe_events(event_type, self._on_registry_changed)
        await self._wait_until_running(ws)
        await self._load(ws)
        self.status, self.last_error, self._last_logged = "connected", None, None
        _LOGGER.info("Home Assistant %s at %s: %d entities", ws.ha_version, self.endpoint.where, len(self._allowed))
        watch = asyncio.create_task(watch_exposure(ws, lambda: self._exposed, self._schedule_reload))
        try:
            await ws.closed
        finally:
            watch.cancel()

    async def _wait_until_running(self, ws: HAWebSocket) -> None:
        """A starting HA answers before its integrations have loaded: wait for the whole home."""
        waited = False
        while (await ws.command("get_config")).get("state", "RUNNING") != "RUNNING":
            if not waited:
                _LOGGER.info("Home Assistant is starting; loading its entities once it runs")
                waited = True
            await asyncio.sleep(STARTUP_POLL_S)

    async def _load(self, ws: HAWebSocket) -> None:
        snapshot = await read_snapshot(ws, self.filter)
        entities = build_entities(snapshot, self.filter)
        self._allowed = {e.entity_id for e in entities}
        self._exposed = exposed_ids(snapshot.exposed)
        self.store.replace_all(entities, source=SOURCE)
        set_places = getattr(self.store, "set_places", None)
        if set_places is not None:
            set_places(SOURCE, places_of(snapshot.devices, snapshot.entity_registry, snapshot.areas))
        set_area_aliases = getattr(self.store, "set_area_aliases", None)
        if set_area_aliases is not None:
            for area in snapshot.areas:
                set_area_aliases(area["name"], [a for a in area.get("aliases") or () if isinstance(a, str)])
        set_floor = getattr(self.store, "set_floor", None)
        if set_floor is not None:
            for floor in snapshot.floors:
                areas = [a["name"] for a in snapshot.areas if a.get("floor_id") == floor.get("floor_id")]
                set_floor(floor["name"], areas, [a for a in floor.get("aliases") or () if isinstance(a, str)])
        buffered, self._buffered_events = self._buffered_events or [], None
        for event in buffered:
            self._apply_state_changed(event)
        self.loads += 1
        self.loaded.set()

    # --- events -------------------------------------------------------------------------

    def _on_state_changed(self, event: dict[str, Any]) -> None:
        if self._buffered_events is not None:
            self._buffered_events.append(event)
        else:
            self._apply_state_changed(event)

    def _apply_state_changed(self, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        entity_id, new_state = data.get("entity_id"), data.get("new_state")
        if entity_id not in self._allowed:
            if new_state and data.get("old_state") is None and self._buffered_events is None:
                self._schedule_reload()  # a new entity may be one the filter allows
            return
        if new_state is None:  # removed from HA
            self._schedule_reload()
            return
        self.store.update_state(entity_id, str(new_state.get("state")), dict(new_state.get("attributes") or {}))

    def _on_registry_changed(self, event: dict[str, Any]) -> None:
        self._schedule_reload()

    def _schedule_reload(self) -> None:
        if self._reload_task is None or self._reload_task.done():
            self._reload_task = asyncio.create_task(self._reload_soon(), name="home assistant reload")
        else:  # the running reload may have read the registries before this change
            self._reload_again = True

    async def _reload_soon(self) -> None:
        self._reload_again = True
        while self._reload_again:
            await asyncio.sleep(RELOAD_DEBOUNCE_S)  # registry changes come in bursts
            self._reload_again = False
            ws = self._ws
            if ws is None or ws.closed.done():
                return
            self._buffered_events = []
            try:
                await self._load(ws)
                _LOGGER.info("reloaded Home Assistant entities: %d", len(self._allowed))
            except HAError as err:
                self._buffered_events = None
                _LOGGER.warning("reloading Home Assistant entities failed: %s", err)


async def read_snapshot(ws: HAWebSocket, entity_filter: EntityFilter) -> Snapshot:
    """Registries, exposure settings and states, read over one websocket (aliases only for the
    entities the filter allows)."""
    areas = await ws.command("config/area_registry/list")
    try:
        floors = await ws.command("config/floor_registry/list")
    except HARequestError as err:  # an HA older than floors (2024.4)
        _LOGGER.info("Home Assistant has no floor registry (%s)", err)
        floors = []
    devices = await ws.command("config/device_registry/list")
    registry = await ws.command("config/entity_registry/list")
    try:
        exposed = (await ws.command("homeassistant/expose_entity/list")).get("exposed_entities", {})
    except HARequestError as err:  # not an admin token, or an HA without the command
        _LOGGER.warning("cannot read what Home Assistant exposes to Assist (%s); exposing nothing unless included", err)
        exposed = {}
    states = await ws.command("get_states")
    known = {e["entity_id"]: e for e in registry}
    wanted = [
        s["entity_id"] for s in states
        if isinstance(s, dict) and s.get("entity_id") in known
        and entity_filter.allows(s["entity_id"], bool(exposed.get(s["entity_id"], {}).get(ASSISTANT)), known[s["entity_id"]])
    ]
    await _merge_aliases(ws, known, wanted)
    return Snapshot(states=states, entity_registry=registry, devices=devices, areas=areas, exposed=exposed,
                    floors=floors)


async def _merge_aliases(ws: HAWebSocket, known: dict[str, dict[str, Any]], entity_ids: list[str]) -> None:
    """`entity_registry/list` lacks aliases and device classes; `get_entries` has them."""
    ids = entity_ids
    for start in range(0, len(ids), 500):
        details = await ws.command("config/entity_registry/get_entries", entity_ids=ids[start:start + 500])
        for entity_id, extended in (details or {}).items():
            if extended:
                known[entity_id].update(
                    {k: extended.get(k) for k in ("aliases", "device_class", "original_device_class")}
                )
