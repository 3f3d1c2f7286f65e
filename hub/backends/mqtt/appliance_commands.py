"""Services → commands for the appliances, as Home Assistant's MQTT integration publishes them:
valve (open/close/stop, a position when it reports one), vacuum (start, stop, pause, return to
base; an area to clean as a `send_command` `{"command": "clean_area", "area": …}`), lawn mower
(start mowing, pause, dock), scene (activate), button (press), humidifier (power, humidity, mode),
water heater (power, temperature, operation mode)."""

from __future__ import annotations

import json
import math
from typing import Any, Awaitable, Callable, Protocol

from hub.backends.mqtt.tracked import TrackedEntity
from hub.home.entities import ActionRejected, BackendError


class Sender(Protocol):
    """What the appliances' commands need of the backend."""

    def send(self, tracked: TrackedEntity, topic_key: str, value: Any, template_key: str | None = None,
             **variables: Any) -> None:
        """Publish `value` (rendered by the config's template `template_key`, if any) on the topic."""

    def show(self, tracked: TrackedEntity, state_topic_key: str, state: str | None, **attributes: Any) -> None:
        """Show the command's effect at once when the device reports no state (optimistic)."""


Service = Callable[[Sender, TrackedEntity, dict[str, Any]], Awaitable[None]]


def bounded(data: dict[str, Any], key: str, low: float, high: float) -> float:
    """`data[key]` as a finite number within [low, high]; BackendError otherwise."""
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


def _one_of(data: dict[str, Any], key: str, allowed: list[str], entity_id: str) -> str:
    value = data.get(key)
    if value not in allowed:
        raise BackendError(f"{entity_id} has no mode {str(value)[:40]!r} (modes: {', '.join(allowed)})")
    return str(value)


# --- valve -------------------------------------------------------------------------------------

async def _valve_position(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    c = t.config
    if not c["reports_position"]:
        raise BackendError(f"{t.entity_id} cannot be set to a position")
    percent = bounded(data, "position", 0, 100)
    raw = round(c["position_closed"] + (c["position_open"] - c["position_closed"]) * percent / 100)
    b.send(t, "command_topic", raw, "command_template", position=raw)
    b.show(t, "state_topic", "closed" if percent == 0 else "open", current_position=round(percent))


def _valve_moving(payload_key: str, position: int, state: str) -> Service:
    async def move(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
        if t.config["reports_position"]:  # HA opens such a valve by setting its position
            await _valve_position(b, t, {"position": position})
            return
        if t.config.get(payload_key) is None:
            raise ActionRejected(f"{t.entity_id} does not support {payload_key[8:]}")
        b.send(t, "command_topic", t.config[payload_key], "command_template")
        b.show(t, "state_topic", state)

    return move


async def _valve_stop(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    if t.config.get("payload_stop") is None:
        raise ActionRejected(f"{t.entity_id} cannot stop")
    b.send(t, "command_topic", t.config["payload_stop"], "command_template")


# --- vacuum, lawn mower ------------------------------------------------------------------------

def _vacuum_command(feature: str, payload_key: str, state: str) -> Service:
    async def command(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
        if feature not in t.config["supported_features"]:
            raise ActionRejected(f"{t.entity_id} does not support {feature}")
        b.send(t, "command_topic", t.config[payload_key])
        b.show(t, "state_topic", state)

    return command


async def _vacuum_clean_area(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    area = data.get("cleaning_area_id")
    if "send_command" not in t.config["supported_features"] or "send_command_topic" not in t.config:
        raise ActionRejected(f"{t.entity_id} cannot be sent to clean an area")
    if not isinstance(area, str) or not area:
        raise BackendError("cleaning_area_id must be an area")
    b.send(t, "send_command_topic", json.dumps({"command": "clean_area", "area": area[:255]}))


def _mower_command(command: str, activity: str) -> Service:
    async def send(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
        b.send(t, f"{command}_command_topic", command, f"{command}_command_template")
        b.show(t, "activity_state_topic", activity)

    return send


# --- scene, button -----------------------------------------------------------------------------

async def _scene_on(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    b.send(t, "command_topic", t.config["payload_on"])


async def _button_press(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    b.send(t, "command_topic", t.config["payload_press"], "command_template")


# --- humidifier, water heater ------------------------------------------------------------------

def _power(topic_key: str, template_key: str, on: bool, state_topic_key: str, shown: str | None) -> Service:
    """Power on or off; `shown`: the state that shows at once (a water heater's state is its mode)."""
    async def switch(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
        if topic_key not in t.config:
            raise BackendError(f"{t.entity_id} cannot be turned {'on' if on else 'off'}")
        b.send(t, topic_key, t.config["payload_on" if on else "payload_off"], template_key)
        b.show(t, state_topic_key, shown)

    return switch


async def _humidity(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    humidity = round(bounded(data, "humidity", t.config["min_humidity"], t.config["max_humidity"]))
    b.send(t, "target_humidity_command_topic", humidity, "target_humidity_command_template")
    b.show(t, "target_humidity_state_topic", None, humidity=humidity)


async def _humidifier_mode(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    mode = _one_of(data, "mode", list(t.config["modes"]), t.entity_id)
    b.send(t, "mode_command_topic", mode, "mode_command_template")
    b.show(t, "mode_state_topic", None, mode=mode)


async def _heater_temperature(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    temperature = bounded(data, "temperature", t.config["min_temp"], t.config["max_temp"])
    b.send(t, "temperature_command_topic", temperature, "temperature_command_template")
    b.show(t, "temperature_state_topic", None, temperature=temperature)


async def _heater_mode(b: Sender, t: TrackedEntity, data: dict[str, Any]) -> None:
    mode = _one_of(data, "operation_mode", list(t.config["modes"]), t.entity_id)
    b.send(t, "mode_command_topic", mode, "mode_command_template")
    b.show(t, "mode_state_topic", mode)


APPLIANCE_SERVICES: dict[tuple[str, str], Service] = {
    ("valve", "open_valve"): _valve_moving("payload_open", 100, "open"),
    ("valve", "close_valve"): _valve_moving("payload_close", 0, "closed"),
    ("valve", "stop_valve"): _valve_stop,
    ("valve", "set_valve_position"): _valve_position,
    ("vacuum", "start"): _vacuum_command("start", "payload_start", "cleaning"),
    ("vacuum", "pause"): _vacuum_command("pause", "payload_pause", "paused"),
    ("vacuum", "stop"): _vacuum_command("stop", "payload_stop", "idle"),
    ("vacuum", "return_to_base"): _vacuum_command("return_home", "payload_return_to_base", "returning"),
    ("vacuum", "clean_area"): _vacuum_clean_area,
    ("lawn_mower", "start_mowing"): _mower_command("start_mowing", "mowing"),
    ("lawn_mower", "pause"): _mower_command("pause", "paused"),
    ("lawn_mower", "dock"): _mower_command("dock", "docked"),
    ("scene", "turn_on"): _scene_on,
    ("button", "press"): _button_press,
    ("humidifier", "turn_on"): _power("command_topic", "command_template", True, "state_topic", "on"),
    ("humidifier", "turn_off"): _power("command_topic", "command_template", False, "state_topic", "off"),
    ("humidifier", "set_humidity"): _humidity,
    ("humidifier", "set_mode"): _humidifier_mode,
    ("water_heater", "turn_on"): _power("power_command_topic", "power_command_template", True,
                                        "mode_state_topic", None),
    ("water_heater", "turn_off"): _power("power_command_topic", "power_command_template", False,
                                         "mode_state_topic", "off"),
    ("water_heater", "set_temperature"): _heater_temperature,
    ("water_heater", "set_operation_mode"): _heater_mode,
}
