"""The component configs the hub accepts: one voluptuous schema per component (pure, no I/O).

What they share (topics, payloads, templates, capped strings, the device block) is in
`schema_base`; the appliances (valve, vacuum, lawn mower, scene, humidifier, water heater,
button) are in `appliance_schemas`.
"""

from __future__ import annotations

from typing import Any, cast

import voluptuous as vol

from hub.backends.mqtt.appliance_schemas import APPLIANCE_SCHEMAS, check_appliance
from hub.backends.mqtt.schema_base import (
    INT as _INT,
    NUMBER as _NUMBER,
    ON_OFF as _ON_OFF,
    DiscoveryError,
    component_schema as _schema,
    ensure_list as _ensure_list,
    payload as _payload,
    publish_topic as _publish_topic,
    string as _string,
    subscribe_topic as _subscribe_topic,
    template as _template,
)

CLIMATE_MODES = ["auto", "off", "cool", "heat", "dry", "fan_only"]
CLIMATE_FAN_MODES = ["auto", "low", "medium", "high"]  # HA's MQTT climate's default fan_modes
__all__ = ["DiscoveryError", "command_topics", "validate_component"]


LIGHT_BASIC = _schema(
    {
        vol.Optional("schema", default="basic"): vol.In(["basic", "default"]),
        vol.Required("command_topic"): _publish_topic,
        vol.Optional("state_topic"): _subscribe_topic,
        vol.Optional("state_value_template"): _template,
        **_ON_OFF,
        vol.Optional("on_command_type", default="last"): vol.In(["first", "last", "brightness"]),
        vol.Optional("brightness_command_topic"): _publish_topic,
        vol.Optional("brightness_command_template"): _template,
        vol.Optional("brightness_state_topic"): _subscribe_topic,
        vol.Optional("brightness_value_template"): _template,
        vol.Optional("brightness_scale", default=255): vol.All(vol.Coerce(int), vol.Range(min=1, max=1_000_000)),
        vol.Optional("rgb_command_topic"): _publish_topic,
        vol.Optional("rgb_command_template"): _template,
        vol.Optional("rgb_state_topic"): _subscribe_topic,
        vol.Optional("rgb_value_template"): _template,
    }
)
LIGHT_JSON = _schema(
    {
        vol.Required("schema"): "json",
        vol.Required("command_topic"): _publish_topic,
        vol.Optional("state_topic"): _subscribe_topic,
        vol.Optional("brightness", default=False): vol.Boolean(),
        vol.Optional("brightness_scale", default=255): vol.All(vol.Coerce(int), vol.Range(min=1, max=1_000_000)),
        vol.Optional("supported_color_modes", default=list): vol.All(_ensure_list, [_string], vol.Length(max=16)),
        vol.Optional("color_temp_kelvin", default=False): vol.Boolean(),
    }
)
SWITCH = _schema(
    {
        vol.Required("command_topic"): _publish_topic,
        vol.Optional("command_template"): _template,
        vol.Optional("state_topic"): _subscribe_topic,
        vol.Optional("value_template"): _template,
        **_ON_OFF,
        vol.Optional("state_on"): _payload,
        vol.Optional("state_off"): _payload,
    }
)
FAN = _schema(
    {
        vol.Required("command_topic"): _publish_topic,
        vol.Optional("command_template"): _template,
        vol.Optional("state_topic"): _subscribe_topic,
        vol.Optional("state_value_template"): _template,
        **_ON_OFF,
        vol.Optional("percentage_command_topic"): _publish_topic,
        vol.Optional("percentage_command_template"): _template,
        vol.Optional("percentage_state_topic"): _subscribe_topic,
        vol.Optional("percentage_value_template"): _template,
        vol.Optional("speed_range_min", default=1): vol.All(vol.Coerce(int), vol.Range(min=1, max=10_000)),
        vol.Optional("speed_range_max", default=100): vol.All(vol.Coerce(int), vol.Range(min=1, max=10_000)),
    }
)
COVER = _schema(
    {
        vol.Optional("command_topic"): _publish_topic,
        vol.Optional("state_topic"): _subscribe_topic,
        vol.Optional("value_template"): _template,
        vol.Optional("payload_open", default="OPEN"): vol.Any(None, _payload),
        vol.Optional("payload_close", default="CLOSE"): vol.Any(None, _payload),
        vol.Optional("payload_stop", default="STOP"): vol.Any(None, _payload),
        vol.Optional("state_open", default="open"): _payload,
        vol.Optional("state_opening", default="opening"): _payload,
        vol.Optional("state_closed", default="closed"): _payload,
        vol.Optional("state_closing", default="closing"): _payload,
        vol.Optional("state_stopped", default="stopped"): _payload,
        vol.Optional("position_topic"): _subscribe_topic,
        vol.Optional("position_template"): _template,
        vol.Optional("set_position_topic"): _publish_topic,
        vol.Optional("set_position_template"): _template,
        vol.Optional("position_open", default=100): _INT,
        vol.Optional("position_closed", default=0): _INT,
    }
)
LOCK = _schema(
    {
        vol.Required("command_topic"): _publish_topic,
        vol.Optional("command_template"): _template,
        vol.Optional("state_topic"): _subscribe_topic,
        vol.Optional("value_template"): _template,
        vol.Optional("payload_lock", default="LOCK"): _payload,
        vol.Optional("payload_unlock", default="UNLOCK"): _payload,
        vol.Optional("payload_open"): _payload,
        vol.Optional("state_locked", default="LOCKED"): _payload,
        vol.Optional("state_locking", default="LOCKING"): _payload,
        vol.Optional("state_unlocked", default="UNLOCKED"): _payload,
        vol.Optional("state_unlocking", default="UNLOCKING"): _payload,
        vol.Optional("state_jammed", default="JAMMED"): _payload,
        vol.Optional("state_open", default="OPEN"): _payload,
        vol.Optional("state_opening", default="OPENING"): _payload,
    }
)
CLIMATE = _schema(
    {
        vol.Optional("mode_command_topic"): _publish_topic,
        vol.Optional("mode_command_template"): _template,
        vol.Optional("mode_state_topic"): _subscribe_topic,
        vol.Optional("mode_state_template"): _template,
        vol.Optional("modes", default=lambda: list(CLIMATE_MODES)): vol.All(_ensure_list, [_string], vol.Length(max=16)),
        vol.Optional("temperature_command_topic"): _publish_topic,
        vol.Optional("temperature_command_template"): _template,
        vol.Optional("temperature_state_topic"): _subscribe_topic,
        vol.Optional("temperature_state_template"): _template,
        vol.Optional("current_temperature_topic"): _subscribe_topic,
        vol.Optional("current_temperature_template"): _template,
        vol.Optional("action_topic"): _subscribe_topic,
        vol.Optional("action_template"): _template,
        vol.Optional("power_command_topic"): _publish_topic,
        vol.Optional("power_command_template"): _template,
        vol.Optional("fan_mode_command_topic"): _publish_topic,
        vol.Optional("fan_mode_command_template"): _template,
        vol.Optional("fan_mode_state_topic"): _subscribe_topic,
        vol.Optional("fan_mode_state_template"): _template,
        vol.Optional("fan_modes", default=lambda: list(CLIMATE_FAN_MODES)): vol.All(_ensure_list, [_string],
                                                                                   vol.Length(max=16)),
        **_ON_OFF,
        vol.Optional("min_temp", default=7.0): _NUMBER,
        vol.Optional("max_temp", default=35.0): _NUMBER,
        vol.Optional("temp_step", default=1.0): vol.All(vol.Coerce(float), vol.Range(min=0.01, max=100)),
        vol.Optional("temperature_unit"): vol.Any(None, _string),
    }
)
SENSOR = _schema(
    {
        vol.Required("state_topic"): _subscribe_topic,
        vol.Optional("value_template"): _template,
        vol.Optional("unit_of_measurement"): vol.Any(None, _string),
        vol.Optional("state_class"): vol.Any(None, _string),
    }
)
BINARY_SENSOR = _schema(
    {
        vol.Required("state_topic"): _subscribe_topic,
        vol.Optional("value_template"): _template,
        **_ON_OFF,
    }
)

_SCHEMAS: dict[str, vol.Schema] = {
    "switch": SWITCH, "fan": FAN, "cover": COVER, "lock": LOCK, "climate": CLIMATE,
    "sensor": SENSOR, "binary_sensor": BINARY_SENSOR, **APPLIANCE_SCHEMAS,
}


def validate_component(component: str, config: dict[str, Any]) -> dict[str, Any]:
    """Validate one expanded component config; returns it with defaults and compiled templates."""
    if component == "light":
        light_schema = config.get("schema", "basic")
        if light_schema == "template":
            raise DiscoveryError("template-schema lights are not supported")
        schema = LIGHT_JSON if light_schema == "json" else LIGHT_BASIC
    else:
        schema = _SCHEMAS[component]
    try:
        validated = schema(config)
    except vol.Invalid as err:
        raise DiscoveryError(_describe(err)) from None
    if component == "cover" and "command_topic" not in validated and "set_position_topic" not in validated:
        raise DiscoveryError("a cover needs command_topic or set_position_topic")
    if component == "climate" and not any(
        k in validated for k in ("mode_command_topic", "temperature_command_topic", "power_command_topic")
    ):
        raise DiscoveryError("a climate device needs a mode, temperature or power command topic")
    if component == "climate" and validated["min_temp"] > validated["max_temp"]:
        raise DiscoveryError("min_temp is above max_temp")
    if component == "fan" and validated["speed_range_min"] > validated["speed_range_max"]:
        raise DiscoveryError("speed_range_min is above speed_range_max")
    check_appliance(component, validated)
    return cast(dict[str, Any], validated)


def command_topics(component: str, config: dict[str, Any]) -> frozenset[str]:
    """The topics a validated component publishes commands on (its options validated as publish
    topics; a shared `command_topic` a sensor merely carries does not count)."""
    if component == "light":
        schema = LIGHT_JSON if config.get("schema") == "json" else LIGHT_BASIC
    else:
        schema = _SCHEMAS[component]
    keys = [str(marker) for marker, validator in schema.schema.items() if validator is _publish_topic]
    return frozenset(config[k] for k in keys if isinstance(config.get(k), str))


def _describe(error: vol.Invalid) -> str:
    errors = error.errors if isinstance(error, vol.MultipleInvalid) else [error]
    parts = []
    for e in errors[:5]:
        where = ".".join(str(p) for p in e.path) or "config"
        parts.append(f"{where}: {e.error_message}")
    return "; ".join(parts)
