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

Entities are also filtered by the `include_entities` / `exclude_entities` globs.
Malformed configs are rejected with a warning and leave everything else as it was; an empty
(retained) config removes the entity.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from hub.home.colors import COLORS, color_key
from hub.home.entities import BackendError, Entity, EntityStore
from hub.backends.mqtt.discovery import (
    SUPPORTED_COMPONENTS,
    ComponentConfig,
    command_topics,
    DiscoveryError,
    DiscoveryMessage,
    device_identifiers,
    friendly_name,
    object_slug,
    parse_component_message,
    parse_device_message,
    parse_topic,
)
from hub.backends.mqtt.templates import MqttTemplate, MqttTemplateError
from hub.home.policy import SENSITIVE_COVER_CLASSES, SENSITIVE_DOMAINS
from hub.transport.mqtt_client import MqttClient, MqttMessage

_LOGGER = logging.getLogger(__name__)

SOURCE = "mqtt"
MAX_STATE_BYTES = 64 * 1024
MAX_STATE_CHARS = 255


@dataclass
class TrackedEntity:
    """One discovered component and what the hub knows about it."""

    spec: ComponentConfig
    entity_id: str
    name: str
    state: str = "unknown"
    attributes: dict[str, Any] = field(default_factory=dict)
    availability: dict[int, bool] = field(default_factory=dict)  # availability entry → available
    last_availability: bool | None = None
    unsubscribes: list[Callable[[], None]] = field(default_factory=list)
    shadowed_by: str | None = None  # the other-source entity that stands for this device

    @property
    def component(self) -> str:
        return self.spec.component

    @property
    def config(self) -> dict[str, Any]:
        return self.spec.config

    @property
    def device_ids(self) -> tuple[str, ...]:
        return device_identifiers(self.config)

    @property
    def available(self) -> bool:
        entries = _availability_entries(self.config)
        if not entries:
            return True
        mode = self.config.get("availability_mode", "latest")
        if mode == "all":
            return len(self.availability) == len(entries) and all(self.availability.values())
        if mode == "any":
            return any(self.availability.values())
        return bool(self.last_availability)

    def to_entity(self) -> Entity:
        device = self.config.get("device") or {}
        ids = self.device_ids
        return Entity(
            entity_id=self.entity_id,
            name=self.name,
            state=self.state if self.available else "unavailable",
            attributes=dict(self.attributes),
            area=device.get("suggested_area"),
            device_class=self.config.get("device_class"),
            source=SOURCE,
            device_id=ids[0] if ids else None,
        )


def _availability_entries(config: dict[str, Any]) -> list[dict[str, Any]]:
    if config.get("availability"):
        return config["availability"]
    if config.get("availability_topic"):
        entry = {
            "topic": config["availability_topic"],
            "payload_available": config["payload_available"],
            "payload_not_available": config["payload_not_available"],
        }
        if config.get("availability_template"):
            entry["value_template"] = config["availability_template"]
        return [entry]
    return []


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
        self._device_keys: dict[str, set[tuple[str, str]]] = {}  # device topic → component keys
        self._unsubscribes: list[Callable[[], None]] = []
        self._remove_listener: Callable[[], None] | None = None
        self.backend = MqttBackend(self)

    @classmethod
    def from_config(cls, client: MqttClient, store: EntityStore, config: Any, ignore_node_ids: Iterable[str] = ()) -> "MqttDevices":
        return cls(
            client,
            store,
            discovery_prefix=config.mqtt_discovery_prefix,
            ignore_node_ids=ignore_node_ids,
            include_entities=config.include_entities,
            exclude_entities=config.exclude_entities,
        )

    async def start(self) -> None:
        self.store.register_backend(SOURCE, self.backend)
        self._remove_listener = self.store.add_listener(self._on_store_change)
        for topic_filter in (f"{self.prefix}/+/+/config", f"{self.prefix}/+/+/+/config"):
            self._unsubscribes.append(await self.client.subscribe(topic_filter, self._on_discovery))

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
        for tracked in self._tracked.values():
            if tracked.entity_id == entity_id:
                return tracked
        return None

    def all_tracked(self) -> list[TrackedEntity]:
        return list(self._tracked.values())

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
        self._tracked[spec.key] = tracked
        tracked.shadowed_by = self._shadowing_entity(tracked)
        await self._subscribe_state(tracked)
        self._push(tracked)

    def _guard_sensitive_topics(self, new: TrackedEntity) -> bool:
        """Whether `new` may be tracked: not when it would publish on a sensitive entity's command
        topic; a sensitive `new` withdraws the non-sensitive entities already on its topics."""
        topics = command_topics(new.component, new.config)
        for key, other in list(self._tracked.items()):
            shared = topics & command_topics(other.component, other.config)
            if key == new.spec.key or not shared or _is_sensitive(new) == _is_sensitive(other):
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
        taken = {t.entity_id for t in self._tracked.values()}
        candidate, n = wanted, 2
        while candidate in taken:
            candidate, n = f"{wanted}_{n}", n + 1
        return candidate

    def _drop(self, key: tuple[str, str]) -> None:
        tracked = self._tracked.pop(key, None)
        if tracked is None:
            return
        for unsubscribe in tracked.unsubscribes:
            unsubscribe()
        existing = self.store.get(tracked.entity_id)
        if existing is not None and existing.source == SOURCE:
            self.store.remove(tracked.entity_id)

    # --- one device, one entity --------------------------------------------------------------

    def _shadowing_entity(self, tracked: TrackedEntity) -> str | None:
        for entity in self.store.all():
            if entity.source != SOURCE and _same_thing(entity, tracked):
                return entity.entity_id
        return None

    def _on_store_change(self, old: Entity | None, new: Entity) -> None:
        if old is not None or new.source == SOURCE:
            return
        for tracked in self._tracked.values():
            if tracked.shadowed_by is None and _same_thing(new, tracked):
                tracked.shadowed_by = new.entity_id
                existing = self.store.get(tracked.entity_id)
                if existing is not None and existing.source == SOURCE:
                    self.store.remove(tracked.entity_id)
                _LOGGER.info("MQTT entity %s is %s in Home Assistant: using that one", tracked.entity_id, new.entity_id)

    def _push(self, tracked: TrackedEntity) -> None:
        if tracked.shadowed_by is None:
            self.store.upsert(tracked.to_entity())

    # --- state topics -----------------------------------------------------------------------

    async def _subscribe_state(self, tracked: TrackedEntity) -> None:
        handlers = _state_handlers(tracked)
        for index, entry in enumerate(_availability_entries(tracked.config)):
            handlers.append((entry["topic"], _availability_handler(index, entry)))
        for topic, handle in handlers:
            on_message = self._state_message_handler(tracked, handle)
            tracked.unsubscribes.append(await self.client.subscribe(topic, on_message, qos=tracked.config["qos"]))

    def _state_message_handler(self, tracked: TrackedEntity, handle: "StateHandler"):
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


# --- state parsing ---------------------------------------------------------------------------

StateHandler = Callable[[TrackedEntity, str], None]


def _render(template: MqttTemplate | None, text: str) -> str:
    return template.render(text) if template is not None else text.strip()


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def _state_handlers(tracked: TrackedEntity) -> list[tuple[str, StateHandler]]:
    c = tracked.config
    kind = tracked.component
    handlers: list[tuple[str, StateHandler]] = []

    def on_off(template_key: str, on: str, off: str) -> StateHandler:
        def handle(t: TrackedEntity, text: str) -> None:
            value = _render(c.get(template_key), text)
            if value == on:
                t.state = "on"
            elif value == off:
                t.state = "off"
            elif value in ("", "None"):
                t.state = "unknown"
            else:
                raise ValueError(f"unexpected state {value[:40]!r}")

        return handle

    if kind == "light":
        tracked.attributes["supported_color_modes"] = _color_modes(c)
    if kind == "light" and c.get("schema") == "json":
        if "state_topic" in c:
            handlers.append((c["state_topic"], _json_light_state))
        return handlers
    if kind == "light":
        if "state_topic" in c:
            handlers.append((c["state_topic"], on_off("state_value_template", c["payload_on"], c["payload_off"])))
        if "brightness_state_topic" in c:
            handlers.append((c["brightness_state_topic"], _light_brightness))
        if "rgb_state_topic" in c:
            handlers.append((c["rgb_state_topic"], _light_rgb))
    elif kind in ("switch", "binary_sensor"):
        on = c.get("state_on", c["payload_on"])
        off = c.get("state_off", c["payload_off"])
        if "state_topic" in c:
            handlers.append((c["state_topic"], on_off("value_template", on, off)))
    elif kind == "fan":
        if "state_topic" in c:
            handlers.append((c["state_topic"], on_off("state_value_template", c["payload_on"], c["payload_off"])))
        if "percentage_state_topic" in c:
            handlers.append((c["percentage_state_topic"], _fan_percentage))
    elif kind == "cover":
        if "state_topic" in c:
            handlers.append((c["state_topic"], _cover_state))
        if "position_topic" in c:
            handlers.append((c["position_topic"], _cover_position))
    elif kind == "lock":
        if "state_topic" in c:
            handlers.append((c["state_topic"], _lock_state))
    elif kind == "climate":
        tracked.attributes.update(
            hvac_modes=list(c["modes"]), min_temp=c["min_temp"], max_temp=c["max_temp"], target_temp_step=c["temp_step"]
        )
        if "mode_state_topic" in c:
            handlers.append((c["mode_state_topic"], _climate_mode))
        for topic_key, template_key, attribute in (
            ("temperature_state_topic", "temperature_state_template", "temperature"),
            ("current_temperature_topic", "current_temperature_template", "current_temperature"),
        ):
            if topic_key in c:
                handlers.append((c[topic_key], _number_attribute(template_key, attribute)))
        if "action_topic" in c:
            handlers.append((c["action_topic"], _climate_action))
    elif kind == "sensor":
        if c.get("unit_of_measurement"):
            tracked.attributes["unit_of_measurement"] = c["unit_of_measurement"]
        handlers.append((c["state_topic"], _sensor_state))
    return handlers


def _color_modes(c: dict[str, Any]) -> list[str]:
    if c.get("schema") == "json":
        modes = [m for m in c["supported_color_modes"] if m != "onoff"]
        return modes or (["brightness"] if c["brightness"] else ["onoff"])
    if c.get("rgb_command_topic"):
        return ["rgb"]
    return ["brightness"] if c.get("brightness_command_topic") else ["onoff"]


def _json_light_state(t: TrackedEntity, text: str) -> None:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("JSON light state is not an object")
    state = data.get("state")
    if state == "ON":
        t.state = "on"
    elif state == "OFF":
        t.state = "off"
    elif state is not None:
        raise ValueError(f"unexpected state {str(state)[:40]!r}")
    if data.get("brightness") is not None:
        t.attributes["brightness"] = _scale_to_255(_number(str(data["brightness"])), t.config["brightness_scale"])
    color = data.get("color")
    if isinstance(color, dict) and all(k in color for k in "rgb"):
        t.attributes["rgb_color"] = [_channel(color[k]) for k in "rgb"]
    if isinstance(data.get("color_mode"), str):
        t.attributes["color_mode"] = data["color_mode"][:32]


def _light_brightness(t: TrackedEntity, text: str) -> None:
    value = _render(t.config.get("brightness_value_template"), text)
    t.attributes["brightness"] = _scale_to_255(_number(value), t.config["brightness_scale"])


def _light_rgb(t: TrackedEntity, text: str) -> None:
    value = _render(t.config.get("rgb_value_template"), text)
    parts = value.split(",")
    if len(parts) != 3:
        raise ValueError(f"rgb state {value[:40]!r} is not 'r,g,b'")
    t.attributes["rgb_color"] = [_channel(p) for p in parts]


def _channel(value: Any) -> int:
    number = int(float(value))
    if not 0 <= number <= 255:
        raise ValueError(f"color channel {number} out of range")
    return number


def _scale_to_255(value: float, scale: int) -> int:
    return max(0, min(255, round(value * 255 / scale)))


def _fan_percentage(t: TrackedEntity, text: str) -> None:
    value = _render(t.config.get("percentage_value_template"), text)
    low, high = t.config["speed_range_min"], t.config["speed_range_max"]
    ranged = _number(value)
    if ranged == 0:
        t.attributes["percentage"] = 0
        return
    t.attributes["percentage"] = max(0, min(100, round((ranged - low + 1) * 100 / (high - low + 1))))


def _cover_state(t: TrackedEntity, text: str) -> None:
    c = t.config
    value = _render(c.get("value_template"), text)
    states = {
        c["state_open"]: "open",
        c["state_opening"]: "opening",
        c["state_closed"]: "closed",
        c["state_closing"]: "closing",
    }
    if value in states:
        t.state = states[value]
    elif value == c["state_stopped"]:
        position = t.attributes.get("current_position")
        t.state = "closed" if position == 0 else "open"
    elif value in ("", "None"):
        t.state = "unknown"
    else:
        raise ValueError(f"unexpected cover state {value[:40]!r}")


def _cover_position(t: TrackedEntity, text: str) -> None:
    c = t.config
    raw = _number(_render(c.get("position_template"), text))
    span = c["position_open"] - c["position_closed"]
    percent = round((raw - c["position_closed"]) * 100 / span) if span else 0
    percent = max(0, min(100, percent))
    t.attributes["current_position"] = percent
    if "state_topic" not in c:
        t.state = "closed" if percent == 0 else "open"


def _lock_state(t: TrackedEntity, text: str) -> None:
    c = t.config
    value = _render(c.get("value_template"), text)
    states = {
        c["state_locked"]: "locked",
        c["state_locking"]: "locking",
        c["state_unlocked"]: "unlocked",
        c["state_unlocking"]: "unlocking",
        c["state_jammed"]: "jammed",
        c["state_open"]: "open",
        c["state_opening"]: "opening",
    }
    if value not in states:
        raise ValueError(f"unexpected lock state {value[:40]!r}")
    t.state = states[value]


def _climate_mode(t: TrackedEntity, text: str) -> None:
    value = _render(t.config.get("mode_state_template"), text)
    if value not in t.config["modes"]:
        raise ValueError(f"mode {value[:40]!r} is not one of {t.config['modes']}")
    t.state = value


def _climate_action(t: TrackedEntity, text: str) -> None:
    t.attributes["hvac_action"] = _render(t.config.get("action_template"), text)[:32]


def _number_attribute(template_key: str, attribute: str) -> StateHandler:
    def handle(t: TrackedEntity, text: str) -> None:
        t.attributes[attribute] = _number(_render(t.config.get(template_key), text))

    return handle


def _sensor_state(t: TrackedEntity, text: str) -> None:
    t.state = _render(t.config.get("value_template"), text)[:MAX_STATE_CHARS]


def _availability_handler(index: int, entry: dict[str, Any]) -> StateHandler:
    def handle(t: TrackedEntity, text: str) -> None:
        value = _render(entry.get("value_template"), text)
        if value == entry["payload_available"]:
            available = True
        elif value == entry["payload_not_available"]:
            available = False
        else:
            raise ValueError(f"unexpected availability payload {value[:40]!r}")
        t.availability[index] = available
        t.last_availability = available

    return handle


# --- commands --------------------------------------------------------------------------------

# Home Assistant's intents turn covers "on" by opening them and locks "on" by locking them.
_SERVICE_ALIASES = {
    ("cover", "turn_on"): "open_cover",
    ("cover", "turn_off"): "close_cover",
    ("cover", "open"): "open_cover",
    ("cover", "close"): "close_cover",
    ("cover", "stop"): "stop_cover",
    ("lock", "turn_on"): "lock",
    ("lock", "turn_off"): "unlock",
    ("climate", "set_mode"): "set_hvac_mode",
    ("fan", "set_speed"): "set_percentage",
}


class MqttBackend:
    """EntityBackend for source "mqtt": publishes the commands each discovery config defines.

    Services (Home Assistant names and data keys):
      light: turn_on {brightness 0-255 | brightness_pct 0-100, rgb_color [r,g,b] | color_name},
             turn_off, toggle
      switch: turn_on, turn_off, toggle
      fan: turn_on {percentage}, turn_off, toggle, set_percentage {percentage}
      cover: open_cover, close_cover, stop_cover, set_cover_position {position 0-100}
      lock: lock, unlock, open
      climate: set_temperature {temperature, hvac_mode?}, set_hvac_mode {hvac_mode}, turn_on, turn_off
    Commands are not queued while the broker is away: the call fails with BackendError instead,
    so a late light switch never surprises anyone.
    """

    def __init__(self, devices: MqttDevices) -> None:
        self.devices = devices

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        tracked = self.devices.tracked(entity.entity_id)
        if tracked is None or tracked.shadowed_by is not None:
            raise BackendError(f"{entity.entity_id} is not an MQTT device the hub knows")
        if not self.devices.client.connected:
            raise BackendError("the MQTT broker is not connected")
        if not tracked.available:
            raise BackendError(f"{entity.entity_id} is unavailable")
        service = _SERVICE_ALIASES.get((tracked.component, service), service)
        method = getattr(self, f"_{tracked.component}_{service}", None)
        if method is None:
            raise BackendError(f"{tracked.component} {entity.entity_id} does not support {service}")
        try:
            await method(tracked, dict(data or {}))
        except (MqttTemplateError, ValueError, TypeError, KeyError) as err:
            raise BackendError(f"cannot {service} {entity.entity_id}: {err}") from None

    # --- helpers ---

    def _publish(self, tracked: TrackedEntity, topic_key: str, payload: str) -> None:
        topic = tracked.config.get(topic_key)
        if not topic:
            raise BackendError(f"{tracked.entity_id} has no {topic_key}")
        sent = self.devices.client.publish(
            topic, payload, qos=tracked.config["qos"], retain=tracked.config["retain"], queue=False
        )
        if not sent:
            raise BackendError("the MQTT broker is not connected")

    @staticmethod
    def _command(tracked: TrackedEntity, template_key: str, value: Any, **variables: Any) -> str:
        template = tracked.config.get(template_key)
        if template is None:
            return str(value)
        return template.render(value, **variables)

    def _optimistic(self, tracked: TrackedEntity, state_topic_key: str) -> bool:
        return bool(tracked.config.get("optimistic")) or state_topic_key not in tracked.config

    # --- light ---

    async def _light_turn_on(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        c = t.config
        brightness = _requested_brightness(data)
        rgb = _requested_rgb(data)
        if c.get("schema") == "json":
            command: dict[str, Any] = {"state": "ON"}
            if brightness is not None:
                command["brightness"] = round(brightness * c["brightness_scale"] / 255)
            if rgb is not None:
                command["color"] = dict(zip("rgb", rgb))
                command["color_mode"] = "rgb"
            self._publish(t, "command_topic", json.dumps(command))
            if self._optimistic(t, "state_topic"):
                self._light_optimistic(t, brightness, rgb)
            return
        on_type = c["on_command_type"]
        if on_type == "brightness" and brightness is None:
            brightness = t.attributes.get("brightness") or 255
        if on_type == "first":
            self._publish(t, "command_topic", c["payload_on"])
        if rgb is not None and c.get("rgb_command_topic"):
            if not c.get("brightness_command_topic"):
                level = brightness if brightness is not None else (t.attributes.get("brightness") or 255)
                rgb = [int(channel * level / 255) for channel in rgb]
            value = ",".join(str(v) for v in rgb)
            self._publish(t, "rgb_command_topic", self._command(t, "rgb_command_template", value, red=rgb[0], green=rgb[1], blue=rgb[2]))
        elif rgb is not None:
            raise BackendError(f"{t.entity_id} cannot change color")
        if brightness is not None and c.get("brightness_command_topic"):
            scaled = round(brightness * c["brightness_scale"] / 255)
            self._publish(t, "brightness_command_topic", self._command(t, "brightness_command_template", scaled))
        elif brightness is not None and on_type == "brightness":
            raise BackendError(f"{t.entity_id} has no brightness command topic")
        if on_type == "last":
            self._publish(t, "command_topic", c["payload_on"])
        if self._optimistic(t, "state_topic"):
            self._light_optimistic(t, brightness, rgb)

    def _light_optimistic(self, t: TrackedEntity, brightness: int | None, rgb: list[int] | None) -> None:
        attributes: dict[str, Any] = {}
        if brightness is not None:
            attributes["brightness"] = brightness
        if rgb is not None:
            attributes["rgb_color"] = rgb
        self.devices.optimistic_update(t, "on", **attributes)

    async def _light_turn_off(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        if t.config.get("schema") == "json":
            self._publish(t, "command_topic", json.dumps({"state": "OFF"}))
        else:
            self._publish(t, "command_topic", t.config["payload_off"])
        if self._optimistic(t, "state_topic"):
            self.devices.optimistic_update(t, "off")

    async def _light_toggle(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await (self._light_turn_off(t, data) if t.state == "on" else self._light_turn_on(t, data))

    # --- switch ---

    async def _switch_turn_on(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        self._publish(t, "command_topic", self._command(t, "command_template", t.config["payload_on"]))
        if self._optimistic(t, "state_topic"):
            self.devices.optimistic_update(t, "on")

    async def _switch_turn_off(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        self._publish(t, "command_topic", self._command(t, "command_template", t.config["payload_off"]))
        if self._optimistic(t, "state_topic"):
            self.devices.optimistic_update(t, "off")

    async def _switch_toggle(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await (self._switch_turn_off(t, data) if t.state == "on" else self._switch_turn_on(t, data))

    # --- fan ---

    async def _fan_turn_on(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        self._publish(t, "command_topic", self._command(t, "command_template", t.config["payload_on"]))
        if data.get("percentage") is not None:
            await self._fan_set_percentage(t, data)
        if self._optimistic(t, "state_topic"):
            self.devices.optimistic_update(t, "on")

    async def _fan_turn_off(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        self._publish(t, "command_topic", self._command(t, "command_template", t.config["payload_off"]))
        if self._optimistic(t, "state_topic"):
            self.devices.optimistic_update(t, "off")

    async def _fan_toggle(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await (self._fan_turn_off(t, data) if t.state == "on" else self._fan_turn_on(t, data))

    async def _fan_set_percentage(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        percentage = _bounded_number(data, "percentage", 0, 100)
        low, high = t.config["speed_range_min"], t.config["speed_range_max"]
        ranged = 0 if percentage == 0 else math.ceil((high - low + 1) * percentage / 100 + low - 1)
        self._publish(t, "percentage_command_topic", self._command(t, "percentage_command_template", ranged))
        if self._optimistic(t, "percentage_state_topic"):
            self.devices.optimistic_update(t, None, percentage=round(percentage))

    # --- cover ---

    async def _cover_command(self, t: TrackedEntity, payload_key: str, state: str, position: int | None) -> None:
        payload = t.config.get(payload_key)
        if payload is None or "command_topic" not in t.config:
            if position is not None and "set_position_topic" in t.config:
                await self._cover_set_cover_position(t, {"position": position})
                return
            raise BackendError(f"{t.entity_id} does not support {payload_key[8:]}")
        self._publish(t, "command_topic", payload)
        if self._optimistic(t, "state_topic") and "position_topic" not in t.config:
            self.devices.optimistic_update(t, state, **({"current_position": position} if position is not None else {}))

    async def _cover_open_cover(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await self._cover_command(t, "payload_open", "open", 100)

    async def _cover_close_cover(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await self._cover_command(t, "payload_close", "closed", 0)

    async def _cover_stop_cover(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await self._cover_command(t, "payload_stop", t.state, None)

    async def _cover_set_cover_position(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        c = t.config
        position = _bounded_number(data, "position", 0, 100)
        if "set_position_topic" not in c:
            if position in (0, 100) and "command_topic" in c:
                await self._cover_command(t, "payload_open" if position else "payload_close", "open" if position else "closed", int(position))
                return
            raise BackendError(f"{t.entity_id} cannot be set to a position")
        raw = round(c["position_closed"] + (c["position_open"] - c["position_closed"]) * position / 100)
        self._publish(t, "set_position_topic", self._command(t, "set_position_template", raw, position=raw))
        if self._optimistic(t, "state_topic") and "position_topic" not in c:
            self.devices.optimistic_update(t, "closed" if position == 0 else "open", current_position=round(position))

    # --- lock ---

    async def _lock_send(self, t: TrackedEntity, payload_key: str, state: str) -> None:
        payload = t.config.get(payload_key)
        if payload is None:
            raise BackendError(f"{t.entity_id} does not support {payload_key[8:]}")
        self._publish(t, "command_topic", self._command(t, "command_template", payload))
        if self._optimistic(t, "state_topic"):
            self.devices.optimistic_update(t, state)

    async def _lock_lock(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await self._lock_send(t, "payload_lock", "locked")

    async def _lock_unlock(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await self._lock_send(t, "payload_unlock", "unlocked")

    async def _lock_open(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        await self._lock_send(t, "payload_open", "open")

    # --- climate ---

    async def _climate_set_hvac_mode(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        mode = data.get("hvac_mode")
        if mode not in t.config["modes"]:
            raise BackendError(f"{t.entity_id} has no mode {str(mode)[:40]!r} (modes: {', '.join(t.config['modes'])})")
        self._publish(t, "mode_command_topic", self._command(t, "mode_command_template", mode))
        if self._optimistic(t, "mode_state_topic"):
            self.devices.optimistic_update(t, mode)

    async def _climate_set_temperature(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        c = t.config
        if data.get("hvac_mode") is not None:
            await self._climate_set_hvac_mode(t, data)
        temperature = _bounded_number(data, "temperature", c["min_temp"], c["max_temp"])
        step = c["temp_step"]
        temperature = round(round(temperature / step) * step, 3)
        self._publish(t, "temperature_command_topic", self._command(t, "temperature_command_template", temperature))
        if self._optimistic(t, "temperature_state_topic"):
            self.devices.optimistic_update(t, None, temperature=temperature)

    async def _climate_turn_on(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        if "power_command_topic" in t.config:
            self._publish(t, "power_command_topic", self._command(t, "power_command_template", t.config["payload_on"]))
            return
        for mode in ("heat_cool", "heat", "auto", "cool"):
            if mode in t.config["modes"]:
                await self._climate_set_hvac_mode(t, {"hvac_mode": mode})
                return
        raise BackendError(f"{t.entity_id} cannot be turned on")

    async def _climate_turn_off(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        if "power_command_topic" in t.config:
            self._publish(t, "power_command_topic", self._command(t, "power_command_template", t.config["payload_off"]))
            return
        await self._climate_set_hvac_mode(t, {"hvac_mode": "off"})


def _bounded_number(data: dict[str, Any], key: str, low: float, high: float) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BackendError(f"{key} must be a number")
    try:
        number = float(value)
    except ValueError:
        raise BackendError(f"{key} must be a number") from None
    if not math.isfinite(number) or not low <= number <= high:
        raise BackendError(f"{key} must be between {low:g} and {high:g}")
    return number


def _requested_brightness(data: dict[str, Any]) -> int | None:
    if data.get("brightness") is not None:
        return round(_bounded_number(data, "brightness", 0, 255))
    if data.get("brightness_pct") is not None:
        return round(_bounded_number(data, "brightness_pct", 0, 100) * 255 / 100)
    return None


def _requested_rgb(data: dict[str, Any]) -> list[int] | None:
    if data.get("color_name") is not None:
        name = color_key(str(data["color_name"]))
        if name not in COLORS:
            raise BackendError(f"unknown color {str(data['color_name'])[:40]!r}")
        return list(COLORS[name])
    rgb = data.get("rgb_color")
    if rgb is None:
        return None
    if not isinstance(rgb, (list, tuple)) or len(rgb) != 3:
        raise BackendError("rgb_color must be [red, green, blue]")
    return [round(_bounded_number({"c": v}, "c", 0, 255)) for v in rgb]
