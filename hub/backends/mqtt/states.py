"""State topics → states: the handler for each state and availability topic of a component."""

from __future__ import annotations

import json
import math
from typing import Any, Callable

from hub.backends.mqtt.templates import MqttTemplate
from hub.backends.mqtt.tracked import TrackedEntity

MAX_STATE_CHARS = 255
VACUUM_STATES = ("cleaning", "docked", "paused", "idle", "returning", "error")
LAWN_MOWER_ACTIVITIES = ("mowing", "docked", "paused", "error", "returning")

StateHandler = Callable[[TrackedEntity, str], None]


def _render(template: MqttTemplate | None, text: str) -> str:
    return template.render(text) if template is not None else text.strip()


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def state_handlers(tracked: TrackedEntity) -> list[tuple[str, StateHandler]]:
    """(topic, handler) for each state topic of the config; sets the attributes the config fixes."""
    c = tracked.config
    _set_fixed_attributes(tracked)
    topics = _JSON_LIGHT_TOPICS if tracked.component == "light" and c.get("schema") == "json" \
        else _STATE_TOPICS.get(tracked.component, ())
    return [(c[key], handler_for(c)) for key, handler_for in topics if key in c]


def _set_fixed_attributes(tracked: TrackedEntity) -> None:
    c = tracked.config
    if tracked.component == "light":
        tracked.attributes["supported_color_modes"] = _color_modes(c)
    elif tracked.component == "climate":
        tracked.attributes.update(
            hvac_modes=list(c["modes"]), min_temp=c["min_temp"], max_temp=c["max_temp"], target_temp_step=c["temp_step"]
        )
        if "fan_mode_command_topic" in c:  # as HA's MQTT climate: fan modes only when it takes them
            tracked.attributes["fan_modes"] = list(c["fan_modes"])
    elif tracked.component == "sensor" and c.get("unit_of_measurement"):
        tracked.attributes["unit_of_measurement"] = c["unit_of_measurement"]
    elif tracked.component == "humidifier":
        tracked.attributes.update(available_modes=list(c["modes"]), min_humidity=c["min_humidity"],
                                  max_humidity=c["max_humidity"])
    elif tracked.component == "water_heater":
        tracked.attributes.update(operation_list=list(c["modes"]), min_temp=c["min_temp"], max_temp=c["max_temp"])
    elif tracked.component == "vacuum" and c["fan_speed_list"]:
        tracked.attributes["fan_speed_list"] = list(c["fan_speed_list"])


def _on_off(c: dict[str, Any], template_key: str, on: str, off: str) -> StateHandler:
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


def _switch_state(c: dict[str, Any]) -> StateHandler:
    return _on_off(c, "value_template", c.get("state_on", c["payload_on"]), c.get("state_off", c["payload_off"]))


def _power_state(c: dict[str, Any]) -> StateHandler:
    return _on_off(c, "state_value_template", c["payload_on"], c["payload_off"])


def _fixed(handler: StateHandler) -> Callable[[dict[str, Any]], StateHandler]:
    return lambda _config: handler


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
    if isinstance(data.get("color_temp"), (int, float)) and data["color_temp"] > 0:
        temp = float(data["color_temp"])
        t.attributes["color_temp_kelvin"] = round(temp if t.config["color_temp_kelvin"] else 1_000_000 / temp)


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


def _valve_state(t: TrackedEntity, text: str) -> None:
    """HA's valve: a state payload, a position (`reports_position`), or JSON with both."""
    c = t.config
    value = _render(c.get("value_template"), text)
    moving = {c["state_opening"]: "opening", c["state_closing"]: "closing"}
    state, position = value, None
    if value.startswith("{"):
        data = json.loads(value)
        if not isinstance(data, dict):
            raise ValueError("valve state is not an object")
        state, position = str(data.get("state") or ""), data.get("position")
    elif c["reports_position"] and value not in moving:
        state, position = "", value
    if state in moving:
        t.state = moving[state]
    elif not c["reports_position"] and state:
        states = {c["state_open"]: "open", c["state_closed"]: "closed"}
        if state not in states:
            raise ValueError(f"unexpected valve state {state[:40]!r}")
        t.state = states[state]
    if position is not None:
        span = c["position_open"] - c["position_closed"]
        percent = max(0, min(100, round((_number(str(position)) - c["position_closed"]) * 100 / span))) if span else 0
        t.attributes["current_position"] = percent
        if state not in moving:
            t.state = "closed" if percent == 0 else "open"


def _one_of(states: tuple[str, ...], what: str, template_key: str | None = None) -> StateHandler:
    def handle(t: TrackedEntity, text: str) -> None:
        value = _render(t.config.get(template_key) if template_key else None, text)
        if value not in states:
            raise ValueError(f"unexpected {what} {value[:40]!r}")
        t.state = value

    return handle


def _vacuum_state(t: TrackedEntity, text: str) -> None:
    """HA's state vacuum: JSON with `state`, `battery_level`, `fan_speed`."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("vacuum state is not an object")
    if data.get("state") is not None:
        _one_of(VACUUM_STATES, "vacuum state")(t, str(data["state"]))
    if isinstance(data.get("battery_level"), (int, float)):
        t.attributes["battery_level"] = max(0, min(100, round(data["battery_level"])))
    if isinstance(data.get("fan_speed"), str):
        t.attributes["fan_speed"] = data["fan_speed"][:32]


def _text_attribute(template_key: str, attribute: str) -> StateHandler:
    def handle(t: TrackedEntity, text: str) -> None:
        t.attributes[attribute] = _render(t.config.get(template_key), text)[:32]

    return handle


def _water_heater_mode(t: TrackedEntity, text: str) -> None:
    _one_of(tuple(t.config["modes"]), "mode", "mode_state_template")(t, text)


def _sensor_state(t: TrackedEntity, text: str) -> None:
    t.state = _render(t.config.get("value_template"), text)[:MAX_STATE_CHARS]


def availability_handler(index: int, entry: dict[str, Any]) -> StateHandler:
    """The handler of the `index`-th availability entry (see `availability_entries`)."""
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


# per component: (config key of a state topic, the handler for it), in subscription order
_StateTopics = tuple[tuple[str, Callable[[dict[str, Any]], StateHandler]], ...]
_JSON_LIGHT_TOPICS: _StateTopics = (("state_topic", _fixed(_json_light_state)),)
_STATE_TOPICS: dict[str, _StateTopics] = {
    "light": (("state_topic", _power_state), ("brightness_state_topic", _fixed(_light_brightness)),
              ("rgb_state_topic", _fixed(_light_rgb))),
    "switch": (("state_topic", _switch_state),),
    "binary_sensor": (("state_topic", _switch_state),),
    "fan": (("state_topic", _power_state), ("percentage_state_topic", _fixed(_fan_percentage))),
    "cover": (("state_topic", _fixed(_cover_state)), ("position_topic", _fixed(_cover_position))),
    "lock": (("state_topic", _fixed(_lock_state)),),
    "climate": (("mode_state_topic", _fixed(_climate_mode)),
                ("temperature_state_topic", _fixed(_number_attribute("temperature_state_template", "temperature"))),
                ("current_temperature_topic",
                 _fixed(_number_attribute("current_temperature_template", "current_temperature"))),
                ("action_topic", _fixed(_climate_action)),
                ("fan_mode_state_topic", _fixed(_text_attribute("fan_mode_state_template", "fan_mode")))),
    "sensor": (("state_topic", _fixed(_sensor_state)),),
    "valve": (("state_topic", _fixed(_valve_state)),),
    "vacuum": (("state_topic", _fixed(_vacuum_state)),),
    "lawn_mower": (("activity_state_topic",
                    _fixed(_one_of(LAWN_MOWER_ACTIVITIES, "activity", "activity_value_template"))),),
    "humidifier": (("state_topic", _power_state),
                   ("target_humidity_state_topic",
                    _fixed(_number_attribute("target_humidity_state_template", "humidity"))),
                   ("current_humidity_topic",
                    _fixed(_number_attribute("current_humidity_template", "current_humidity"))),
                   ("mode_state_topic", _fixed(_text_attribute("mode_state_template", "mode"))),
                   ("action_topic", _fixed(_text_attribute("action_template", "action")))),
    "water_heater": (("mode_state_topic", _fixed(_water_heater_mode)),
                     ("temperature_state_topic",
                      _fixed(_number_attribute("temperature_state_template", "temperature"))),
                     ("current_temperature_topic",
                      _fixed(_number_attribute("current_temperature_template", "current_temperature")))),
}
