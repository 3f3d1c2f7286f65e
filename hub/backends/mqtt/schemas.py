"""The component configs the hub accepts: one voluptuous schema per component (pure, no I/O).

Discovered strings are capped (MAX_TEXT_CHARS for names and other text, MAX_PAYLOAD_CHARS for
payloads): a config whose `name` is 200,000 characters long is refused, not let into every
prompt. Topics are checked for what may be published or subscribed to; templates are compiled.
"""

from __future__ import annotations

from typing import Any, cast

import voluptuous as vol

from hub.backends.mqtt.templates import MqttTemplate, MqttTemplateError

MAX_TEXT_CHARS = 255  # names, areas, ids, classes, units, modes (Home Assistant's registry length)
MAX_PAYLOAD_CHARS = 1024
CLIMATE_MODES = ["auto", "off", "cool", "heat", "dry", "fan_only"]


class DiscoveryError(ValueError):
    """A discovery message the hub rejects (the message says why)."""


def _publish_topic(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise vol.Invalid("a topic must be a non-empty string")
    if len(value.encode("utf-8")) > 1024 or "\0" in value:
        raise vol.Invalid("topic too long or contains NUL")
    if "+" in value or "#" in value:
        raise vol.Invalid("a command topic cannot contain wildcards")
    return value


def _subscribe_topic(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise vol.Invalid("a topic must be a non-empty string")
    if len(value.encode("utf-8")) > 1024 or "\0" in value:
        raise vol.Invalid("topic too long or contains NUL")
    levels = value.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            raise vol.Invalid("'#' must be a whole last level")
        if "+" in level and level != "+":
            raise vol.Invalid("'+' must be a whole level")
    return value


def _payload(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise vol.Invalid("a payload must be a string or a number")
    if len(text := str(value)) > MAX_PAYLOAD_CHARS:
        raise vol.Invalid(f"a payload of {len(text)} characters is longer than {MAX_PAYLOAD_CHARS}")
    return text


def _template(value: Any) -> MqttTemplate:
    try:
        return MqttTemplate(value)
    except MqttTemplateError as err:
        raise vol.Invalid(str(err)) from None


def _string(value: Any) -> str:
    if isinstance(value, (dict, list)) or value is None:
        raise vol.Invalid("expected a string")
    if len(text := str(value)) > MAX_TEXT_CHARS:
        raise vol.Invalid(f"{len(text)} characters is longer than {MAX_TEXT_CHARS}")
    return text


def _ensure_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


_NUMBER = vol.All(vol.Coerce(float), vol.Range(min=-1e9, max=1e9))
_INT = vol.All(vol.Coerce(int), vol.Range(min=-1_000_000_000, max=1_000_000_000))

DEVICE_SCHEMA = vol.Schema(
    {
        vol.Optional("identifiers", default=list): vol.All(_ensure_list, [_string], vol.Length(max=32)),
        vol.Optional("connections", default=list): vol.All(
            _ensure_list, [vol.All([_string], vol.Length(min=2, max=2))], vol.Length(max=32)
        ),
        vol.Optional("name"): vol.Any(None, _string),
        vol.Optional("suggested_area"): vol.Any(None, _string),
    },
    extra=vol.ALLOW_EXTRA,
)
_AVAILABILITY_ITEM = vol.Schema(
    {
        vol.Required("topic"): _subscribe_topic,
        vol.Optional("payload_available", default="online"): _payload,
        vol.Optional("payload_not_available", default="offline"): _payload,
        vol.Optional("value_template"): _template,
    },
    extra=vol.ALLOW_EXTRA,
)
_BASE = {
    vol.Optional("name"): vol.Any(None, _string),
    vol.Optional("unique_id"): _string,
    vol.Optional("object_id"): _string,
    vol.Optional("default_entity_id"): _string,
    vol.Optional("device"): DEVICE_SCHEMA,
    vol.Optional("availability_topic"): _subscribe_topic,
    vol.Optional("availability_template"): _template,
    vol.Optional("payload_available", default="online"): _payload,
    vol.Optional("payload_not_available", default="offline"): _payload,
    vol.Optional("availability"): vol.All(_ensure_list, [_AVAILABILITY_ITEM], vol.Length(max=16)),
    vol.Optional("availability_mode", default="latest"): vol.In(["all", "any", "latest"]),
    vol.Optional("qos", default=0): vol.All(vol.Coerce(int), vol.In([0, 1, 2])),
    vol.Optional("retain", default=False): vol.Boolean(),
    vol.Optional("optimistic"): vol.Boolean(),
    vol.Optional("device_class"): vol.Any(None, _string),
    vol.Optional("enabled_by_default", default=True): vol.Boolean(),
}


def _schema(fields: dict[Any, Any]) -> vol.Schema:
    return vol.Schema({**_BASE, **fields}, extra=vol.ALLOW_EXTRA)


_ON_OFF = {
    vol.Optional("payload_on", default="ON"): _payload,
    vol.Optional("payload_off", default="OFF"): _payload,
}
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
    "sensor": SENSOR, "binary_sensor": BINARY_SENSOR,
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
