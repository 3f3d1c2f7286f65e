"""MQTT devices as hub entities: discovery → EntityStore, state topics → states, services → commands.

`MqttDevices(client, store, ...)` subscribes to `<prefix>/+/+/config` and `<prefix>/+/+/+/config`
(device-based `<prefix>/device/<id>/config` is covered by the first), keeps one entity per
discovered component, follows its state and availability topics, and registers an
`MqttBackend` for source "mqtt" that publishes the commands the discovery config defines.

One device, one entity: an MQTT entity is not added (and is withdrawn if already added) when the
store holds an entity of another source (Home Assistant, demo) that stands for the same thing:
the same entity id (HA derives MQTT entity ids from the same names), the same domain and name
(case-insensitive; covers an entity id renamed in HA), or a `device_id` equal to one of the MQTT
device's identifiers. Home Assistant then wins, because it also applies the user's exposure
settings; the MQTT twin stays tracked but invisible and cannot be called.

A command topic belongs to a sensitive entity (lock, garage/gate/door cover: their actions need a
spoken yes) alone: a non-sensitive config that would publish on it (a "light" whose ON payload is
UNLOCK) is refused, and one already tracked is withdrawn when the sensitive one arrives.

A discovered entity that answers to the name of another device the hub controls (`namesakes`)
is logged once, naming both: commands naming it ask which one, and the page lists such names.

Entities are also filtered by the `include_entities` / `exclude_entities` globs.
Malformed configs are rejected with a warning and leave everything else as it was; an empty
(retained) config removes the entity.
"""

from __future__ import annotations

import fnmatch
import logging
from typing import Any, Awaitable, Callable, Iterable

from hub.backends.mqtt.commands import MqttBackend
from hub.backends.mqtt.discovery import (
    SUPPORTED_COMPONENTS,
    ComponentConfig,
    DiscoveryMessage,
    friendly_name,
    object_slug,
    parse_component_message,
    parse_device_message,
    parse_topic,
)
from hub.backends.mqtt.schemas import DiscoveryError, command_topics
from hub.backends.mqtt.states import StateHandler, availability_handler, state_handlers
from hub.backends.mqtt.templates import MqttTemplateError
from hub.backends.mqtt.tracked import SOURCE, TrackedEntity, availability_entries
from hub.home.entities import Entity, EntityStore
from hub.home.namesakes import NamesakeIndex, namesakes
from hub.home.policy import SENSITIVE_COVER_CLASSES, SENSITIVE_DOMAINS
from hub.transport.mqtt_client import MqttClient
from hub.transport.mqtt_subscriptions import MqttMessage

_LOGGER = logging.getLogger(__name__)
MAX_STATE_BYTES = 64 * 1024
MAX_PENDING_CONFIGS = 20_000  # discovery topics waiting to be taken in (a flood is taken whole)


def _is_sensitive(tracked: TrackedEntity) -> bool:
    """An entity whose actions need a confirmation by its kind (see hub.home.policy)."""
    if tracked.component in SENSITIVE_DOMAINS:
        return True
    return tracked.component == "cover" and (tracked.config.get("device_class") or "") in SENSITIVE_COVER_CLASSES


def _entity_filter(include: str | None, exclude: str | None) -> Callable[[str], bool]:
    includes = [p.strip() for p in (include or "").split(",") if p.strip()]
    excludes = [p.strip() for p in (exclude or "").split(",") if p.strip()]

    def allowed(entity_id: str) -> bool:
        if includes and not any(fnmatch.fnmatchcase(entity_id, p) for p in includes):
            return False
        return not any(fnmatch.fnmatchcase(entity_id, p) for p in excludes)

    return allowed


class MqttDevices:
    """Tracks MQTT-discovered devices in the shared EntityStore (start/stop component)."""

    def __init__(
        self,
        client: MqttClient,
        store: EntityStore,
        *,
        discovery_prefix: str = "homeassistant",
        ignore_node_ids: Iterable[str] = (),
        include_entities: str | None = None,
        exclude_entities: str | None = None,
    ) -> None:
        self.client = client
        self.store = store
        self.prefix = discovery_prefix.strip("/")
        self._ignore = set(ignore_node_ids)
        self._allowed = _entity_filter(include_entities, exclude_entities)
        self._tracked: dict[tuple[str, str], TrackedEntity] = {}
        self._by_entity_id: dict[str, TrackedEntity] = {}
        self._on_command_topic: dict[str, set[tuple[str, str]]] = {}  # topic → the keys publishing there
        self._others: _OtherEntities | None = None  # the other sources' entities, by what makes them the same
        self._names: NamesakeIndex | None = None  # every entity by its names, for namesakes
        self._device_keys: dict[str, set[tuple[str, str]]] = {}  # device topic → component keys
        self._unsubscribes: list[Callable[[], None]] = []
        self._remove_listener: Callable[[], None] | None = None
        self.backend = MqttBackend(self)

    async def start(self) -> None:
        self.store.register_backend(SOURCE, self.backend)
        self._remove_listener = self.store.add_listener(self._on_store_change)
        for topic_filter in (f"{self.prefix}/+/+/config", f"{self.prefix}/+/+/+/config"):
            # QoS 0: configs are retained, so none is lost to a dropped link (the broker sends them
            # again at the next subscribe), and a broker's limit on unacknowledged QoS 1 messages
            # (mosquitto queues 1,000, then drops) cannot lose a flood of them
            self._unsubscribes.append(await self.client.subscribe(
                topic_filter, self._on_discovery, qos=0, latest_only=True, queue_limit=MAX_PENDING_CONFIGS))

    async def stop(self) -> None:
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        self._unsubscribes.clear()
        for key in list(self._tracked):
            self._drop(key)
        if self._remove_listener:
            self._remove_listener()
            self._remove_listener = None

    def tracked(self, entity_id: str) -> TrackedEntity | None:
        return self._by_entity_id.get(entity_id)

    # --- discovery ---------------------------------------------------------------------------

    async def _on_discovery(self, message: MqttMessage) -> None:
        parsed = parse_topic(self.prefix, message.topic)
        if parsed is None:
            return
        component, node_id, object_id = parsed
        if component == "device":
            if object_id in self._ignore:
                return
            previous = self._device_keys.get(message.topic, set())
            try:
                result = parse_device_message(node_id, object_id, message.payload, previous)
            except DiscoveryError as err:
                _LOGGER.warning("rejected MQTT device discovery on %s: %s", message.topic, err)
                return
            keys = {c.key for c in result.components} | {k for k, _ in result.rejected if k in previous}
            self._device_keys[message.topic] = keys
            if not keys:
                self._device_keys.pop(message.topic, None)
        else:
            if component not in SUPPORTED_COMPONENTS or (node_id or object_id) in self._ignore:
                return
            try:
                result = parse_component_message(component, node_id, object_id, message.payload)
            except DiscoveryError as err:
                _LOGGER.warning("rejected MQTT discovery on %s: %s", message.topic, err)
                return
        await self._apply(result, message.topic)

    async def _apply(self, result: DiscoveryMessage, topic: str) -> None:
        for key, why in result.rejected:
            _LOGGER.warning("rejected MQTT discovery for %s %s on %s: %s", key[0], key[1], topic, why)
        for key in result.removed:
            self._drop(key)
        for spec in result.components:
            await self._set(spec)

    async def _set(self, spec: ComponentConfig) -> None:
        old = self._tracked.get(spec.key)
        if old is not None and old.spec.config == spec.config:
            return  # the same retained config again (e.g. after a reconnect)
        if old is not None:
            self._drop(spec.key)
        entity_id = self._free_entity_id(f"{spec.component}.{object_slug(spec.component, spec.config)}")
        tracked = TrackedEntity(spec=spec, entity_id=entity_id, name=friendly_name(spec.component, spec.config))
        if not spec.config.get("enabled_by_default", True) or not self._allowed(entity_id):
            _LOGGER.debug("MQTT entity %s is not exposed", entity_id)
            return
        if not self._guard_sensitive_topics(tracked):
            return
        self._track(tracked)
        tracked.shadowed_by = self._shadowing_entity(tracked)
        await self._subscribe_state(tracked)
        self._push(tracked)
        if tracked.shadowed_by is None and (old is None or old.name != tracked.name):
            self._warn_of_namesakes(tracked.to_entity())

    def _warn_of_namesakes(self, entity: Entity) -> None:
        if self._names is None:  # built once per change of the other sources, then kept
            self._names = NamesakeIndex(self.store.all())
        found = (self.store.get(i) for i in self._names.candidates(entity))
        others = sorted(namesakes(entity, (e for e in found if e is not None)), key=lambda e: e.entity_id)
        self._names.add(entity)
        if others:
            _LOGGER.warning("MQTT discovered %s (%s), which answers to the name of %s: a command naming it "
                            "asks which one; rename one of them", entity.entity_id, entity.name[:80],
                            ", ".join(f"{o.entity_id} ({o.name[:80]})" for o in others))

    def _guard_sensitive_topics(self, new: TrackedEntity) -> bool:
        """Whether `new` may be tracked: not when it would publish on a sensitive entity's command
        topic; a sensitive `new` withdraws the non-sensitive entities already on its topics."""
        topics = command_topics(new.component, new.config)
        sharing = {key for topic in topics for key in self._on_command_topic.get(topic, ())}
        for key in sorted(sharing):
            other = self._tracked[key]
            shared = topics & command_topics(other.component, other.config)
            if key == new.spec.key or _is_sensitive(new) == _is_sensitive(other):
                continue
            refused, owner = (other, new) if _is_sensitive(new) else (new, other)
            _LOGGER.warning("refused MQTT entity %s (%s): it would publish on %s, the command topic of %s, "
                            "whose actions need a confirmation", refused.entity_id, refused.name[:80],
                            ", ".join(sorted(shared)), owner.entity_id)
            if refused is new:
                return False
            self._drop(key)
        return True

    def _free_entity_id(self, wanted: str) -> str:
        candidate, n = wanted, 2
        while candidate in self._by_entity_id:
            candidate, n = f"{wanted}_{n}", n + 1
        return candidate

    def _track(self, tracked: TrackedEntity) -> None:
        self._tracked[tracked.spec.key] = tracked
        self._by_entity_id[tracked.entity_id] = tracked
        for topic in command_topics(tracked.component, tracked.config):
            self._on_command_topic.setdefault(topic, set()).add(tracked.spec.key)

    def _drop(self, key: tuple[str, str]) -> None:
        tracked = self._tracked.pop(key, None)
        if tracked is None:
            return
        if self._names is not None:
            self._names.discard(tracked.entity_id)
        del self._by_entity_id[tracked.entity_id]
        for topic in command_topics(tracked.component, tracked.config):
            keys = self._on_command_topic[topic]
            keys.discard(key)
            if not keys:
                del self._on_command_topic[topic]
        for unsubscribe in tracked.unsubscribes:
            unsubscribe()
        existing = self.store.known(tracked.entity_id)  # untargeted ones too
        if existing is not None and existing.source == SOURCE:
            self.store.remove(tracked.entity_id)

    # --- one device, one entity --------------------------------------------------------------

    def _shadowing_entity(self, tracked: TrackedEntity) -> str | None:
        if self._others is None:  # built once per change of the other sources, not per config
            self._others = _OtherEntities(e for e in self.store.all() if e.source != SOURCE)
        for entity_id in self._others.candidates(tracked):
            entity = self.store.get(entity_id)
            if entity is not None and entity.source != SOURCE and _same_thing(entity, tracked):
                return entity.entity_id
        return None

    def _on_store_change(self, old: Entity | None, new: Entity) -> None:
        if new.source == SOURCE or (old is not None and (old.name, old.device_id) == (new.name, new.device_id)):
            return
        self._others = self._names = None
        if old is not None:
            return
        for tracked in self._tracked.values():
            if tracked.shadowed_by is None and _same_thing(new, tracked):
                tracked.shadowed_by = new.entity_id
                existing = self.store.known(tracked.entity_id)  # untargeted ones too
                if existing is not None and existing.source == SOURCE:
                    self.store.remove(tracked.entity_id)
                _LOGGER.info("MQTT entity %s is %s in Home Assistant: using that one", tracked.entity_id, new.entity_id)

    def _push(self, tracked: TrackedEntity) -> None:
        if tracked.shadowed_by is None:
            self.store.upsert(tracked.to_entity())

    # --- state topics -----------------------------------------------------------------------

    async def _subscribe_state(self, tracked: TrackedEntity) -> None:
        handlers = state_handlers(tracked)
        for index, entry in enumerate(availability_entries(tracked.config)):
            handlers.append((entry["topic"], availability_handler(index, entry)))
        for topic, handle in handlers:
            on_message = self._state_message_handler(tracked, handle)
            tracked.unsubscribes.append(await self.client.subscribe(topic, on_message, qos=tracked.config["qos"]))

    def _state_message_handler(self, tracked: TrackedEntity, handle: StateHandler) -> Callable[[MqttMessage], Awaitable[None]]:
        async def on_message(message: MqttMessage) -> None:
            if self._tracked.get(tracked.spec.key) is not tracked:
                return  # replaced or removed meanwhile
            if len(message.payload) > MAX_STATE_BYTES:
                _LOGGER.warning("ignored %d-byte state message on %s", len(message.payload), message.topic)
                return
            try:
                text = message.payload.decode("utf-8")
            except UnicodeDecodeError:
                _LOGGER.warning("ignored non-UTF-8 state message on %s", message.topic)
                return
            try:
                handle(tracked, text)
            except (MqttTemplateError, ValueError, TypeError) as err:
                _LOGGER.warning("ignored state message on %s for %s: %s", message.topic, tracked.entity_id, err)
                return
            self._push(tracked)

        return on_message

    def optimistic_update(self, tracked: TrackedEntity, state: str | None = None, **attributes: Any) -> None:
        if state is not None:
            tracked.state = state
        tracked.attributes.update(attributes)
        self._push(tracked)


def _same_thing(entity: Entity, tracked: TrackedEntity) -> bool:
    return (
        entity.entity_id == tracked.entity_id
        or (entity.domain == tracked.component and entity.name.casefold() == tracked.name.casefold())
        or bool(entity.device_id and entity.device_id in tracked.device_ids)
    )


class _OtherEntities:
    """The other sources' entities by what `_same_thing` compares: id, domain and name, device."""

    def __init__(self, entities: Iterable[Entity]) -> None:
        self._by_key: dict[tuple[str, ...], list[str]] = {}
        for entity in entities:
            for key in (("id", entity.entity_id), ("name", entity.domain, entity.name.casefold()),
                        *((("device", entity.device_id),) if entity.device_id else ())):
                self._by_key.setdefault(key, []).append(entity.entity_id)

    def candidates(self, tracked: TrackedEntity) -> list[str]:
        keys = [("id", tracked.entity_id), ("name", tracked.component, tracked.name.casefold()),
                *(("device", d) for d in tracked.device_ids)]
        return [entity_id for key in keys for entity_id in self._by_key.get(key, ())]
