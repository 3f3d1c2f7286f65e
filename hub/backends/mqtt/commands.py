"""Services → commands: the EntityBackend that publishes what each discovery config defines."""

from __future__ import annotations

import functools
import json
import math
from typing import Any, Awaitable, Callable, Protocol

from hub.backends.mqtt.appliance_commands import APPLIANCE_SERVICES
from hub.backends.mqtt.appliance_commands import bounded as _bounded_number
from hub.backends.mqtt.templates import MqttTemplateError
from hub.backends.mqtt.tracked import TrackedEntity
from hub.home.colors import COLORS, color_key
from hub.home.entities import ActionRejected, BackendError, Entity
from hub.transport.mqtt_client import MqttClient


class TrackedDevices(Protocol):
    """What the commands need of `MqttDevices`: the connection, the tracked entities, and a way
    to show a command's effect at once when the device reports no state (optimistic)."""

    client: MqttClient

    def tracked(self, entity_id: str) -> TrackedEntity | None: ...

    def optimistic_update(self, tracked: TrackedEntity, state: str | None = None, **attributes: Any) -> None: ...


Service = Callable[[TrackedEntity, dict[str, Any]], Awaitable[None]]

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
      climate: set_temperature {temperature, hvac_mode?}, set_hvac_mode {hvac_mode}, set_fan_mode {fan_mode},
               turn_on, turn_off
      the appliances (valve, vacuum, lawn_mower, scene, button, humidifier, water_heater):
      see `appliance_commands`
    Commands are not queued while the broker is away: the call fails with BackendError instead,
    so a late light switch never surprises anyone.
    """

    def __init__(self, devices: TrackedDevices) -> None:
        self.devices = devices
        self._services: dict[tuple[str, str], Service] = {
            ("light", "turn_on"): self._light_turn_on,
            ("light", "turn_off"): self._light_turn_off,
            ("light", "toggle"): self._light_toggle,
            ("switch", "turn_on"): self._switch_turn_on,
            ("switch", "turn_off"): self._switch_turn_off,
            ("switch", "toggle"): self._switch_toggle,
            ("fan", "turn_on"): self._fan_turn_on,
            ("fan", "turn_off"): self._fan_turn_off,
            ("fan", "toggle"): self._fan_toggle,
            ("fan", "set_percentage"): self._fan_set_percentage,
            ("cover", "open_cover"): self._cover_open_cover,
            ("cover", "close_cover"): self._cover_close_cover,
            ("cover", "stop_cover"): self._cover_stop_cover,
            ("cover", "set_cover_position"): self._cover_set_cover_position,
            ("lock", "lock"): self._lock_lock,
            ("lock", "unlock"): self._lock_unlock,
            ("lock", "open"): self._lock_open,
            ("climate", "set_hvac_mode"): self._climate_set_hvac_mode,
            ("climate", "set_temperature"): self._climate_set_temperature,
            ("climate", "turn_on"): self._climate_turn_on,
            ("climate", "turn_off"): self._climate_turn_off,
            ("climate", "set_fan_mode"): self._climate_set_fan_mode,
            **{key: functools.partial(service, self) for key, service in APPLIANCE_SERVICES.items()},
        }

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        tracked = self.devices.tracked(entity.entity_id)
        if tracked is None or tracked.shadowed_by is not None:
            raise BackendError(f"{entity.entity_id} is not an MQTT device the hub knows")
        if not self.devices.client.connected:
            raise BackendError("the MQTT broker is not connected")
        if not tracked.available:
            raise BackendError(f"{entity.entity_id} is unavailable")
        service = _SERVICE_ALIASES.get((tracked.component, service), service)
        method = self._services.get((tracked.component, service))
        if method is None:
            raise ActionRejected(f"{tracked.component} {entity.entity_id} does not support {service}")
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

    def send(self, tracked: TrackedEntity, topic_key: str, value: Any, template_key: str | None = None,
             **variables: Any) -> None:
        """Publish `value`, rendered by the config's `template_key` template when it has one."""
        self._publish(tracked, topic_key, self._command(tracked, template_key, value, **variables)
                      if template_key else str(value))

    def show(self, tracked: TrackedEntity, state_topic_key: str, state: str | None, **attributes: Any) -> None:
        """The command's effect at once, when the device reports no state on that topic."""
        if self._optimistic(tracked, state_topic_key):
            self.devices.optimistic_update(tracked, state, **attributes)

    @staticmethod
    def _command(tracked: TrackedEntity, template_key: str, value: Any, **variables: Any) -> str:
        template = tracked.config.get(template_key)
        if template is None:
            return str(value)
        return str(template.render(value, **variables))

    def _optimistic(self, tracked: TrackedEntity, state_topic_key: str) -> bool:
        return bool(tracked.config.get("optimistic")) or state_topic_key not in tracked.config

    # --- light ---

    async def _light_turn_on(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        c = t.config
        brightness = _requested_brightness(data)
        rgb = _requested_rgb(data)
        kelvin = _requested_kelvin(t, data)  # a basic-schema light has no colour temperature here
        if c.get("schema") == "json":
            command: dict[str, Any] = {"state": "ON"}
            if brightness is not None:
                command["brightness"] = round(brightness * c["brightness_scale"] / 255)
            if rgb is not None:
                command["color"] = dict(zip("rgb", rgb))
                command["color_mode"] = "rgb"
            if kelvin is not None:  # HA's JSON schema: mireds unless the config says kelvin
                command["color_temp"] = kelvin if c["color_temp_kelvin"] else round(1_000_000 / kelvin)
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
            raise ActionRejected(f"{t.entity_id} does not support {payload_key[8:]}")
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
            raise ActionRejected(f"{t.entity_id} does not support {payload_key[8:]}")
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

    async def _climate_set_fan_mode(self, t: TrackedEntity, data: dict[str, Any]) -> None:
        mode = data.get("fan_mode")
        if "fan_mode_command_topic" not in t.config or mode not in t.config["fan_modes"]:
            raise BackendError(f"{t.entity_id} has no fan mode {str(mode)[:40]!r}")
        self._publish(t, "fan_mode_command_topic", self._command(t, "fan_mode_command_template", mode))
        if self._optimistic(t, "fan_mode_state_topic"):
            self.devices.optimistic_update(t, None, fan_mode=mode)

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


def _requested_kelvin(t: TrackedEntity, data: dict[str, Any]) -> int | None:
    """The colour temperature asked for, if any; BackendError for a light that shows none."""
    if data.get("color_temp_kelvin") is None:
        return None
    if "color_temp" not in t.config.get("supported_color_modes", ()):
        raise BackendError(f"{t.entity_id} cannot change its color temperature")
    return round(_bounded_number(data, "color_temp_kelvin", 1000, 10000))


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
