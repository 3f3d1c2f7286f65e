"""What every component config is checked with: topics, payloads, templates, capped strings, the
device and availability blocks and the options every component shares (pure, no I/O).

Discovered strings are capped (MAX_TEXT_CHARS for names and other text, MAX_PAYLOAD_CHARS for
payloads): a config whose `name` is 200,000 characters long is refused, not let into every
prompt. Topics are checked for what may be published or subscribed to; templates are compiled.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from hub.backends.mqtt.templates import MqttTemplate, MqttTemplateError

MAX_TEXT_CHARS = 255  # names, areas, ids, classes, units, modes (Home Assistant's registry length)
MAX_PAYLOAD_CHARS = 1024


class DiscoveryError(ValueError):
    """A discovery message the hub rejects (the message says why)."""


def publish_topic(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise vol.Invalid("a topic must be a non-empty string")
    if len(value.encode("utf-8")) > 1024 or "\0" in value:
        raise vol.Invalid("topic too long or contains NUL")
    if "+" in value or "#" in value:
        raise vol.Invalid("a command topic cannot contain wildcards")
    return value


def subscribe_topic(value: Any) -> str:
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


def payload(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise vol.Invalid("a payload must be a string or a number")
    if len(text := str(value)) > MAX_PAYLOAD_CHARS:
        raise vol.Invalid(f"a payload of {len(text)} characters is longer than {MAX_PAYLOAD_CHARS}")
    return text


def template(value: Any) -> MqttTemplate:
    try:
        return MqttTemplate(value)
    except MqttTemplateError as err:
        raise vol.Invalid(str(err)) from None


def string(value: Any) -> str:
    if isinstance(value, (dict, list)) or value is None:
        raise vol.Invalid("expected a string")
    if len(text := str(value)) > MAX_TEXT_CHARS:
        raise vol.Invalid(f"{len(text)} characters is longer than {MAX_TEXT_CHARS}")
    return text


def ensure_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


NUMBER = vol.All(vol.Coerce(float), vol.Range(min=-1e9, max=1e9))
INT = vol.All(vol.Coerce(int), vol.Range(min=-1_000_000_000, max=1_000_000_000))

DEVICE_SCHEMA = vol.Schema(
    {
        vol.Optional("identifiers", default=list): vol.All(ensure_list, [string], vol.Length(max=32)),
        vol.Optional("connections", default=list): vol.All(
            ensure_list, [vol.All([string], vol.Length(min=2, max=2))], vol.Length(max=32)
        ),
        vol.Optional("name"): vol.Any(None, string),
        vol.Optional("suggested_area"): vol.Any(None, string),
    },
    extra=vol.ALLOW_EXTRA,
)
_AVAILABILITY_ITEM = vol.Schema(
    {
        vol.Required("topic"): subscribe_topic,
        vol.Optional("payload_available", default="online"): payload,
        vol.Optional("payload_not_available", default="offline"): payload,
        vol.Optional("value_template"): template,
    },
    extra=vol.ALLOW_EXTRA,
)
BASE = {
    vol.Optional("name"): vol.Any(None, string),
    vol.Optional("unique_id"): string,
    vol.Optional("object_id"): string,
    vol.Optional("default_entity_id"): string,
    vol.Optional("device"): DEVICE_SCHEMA,
    vol.Optional("availability_topic"): subscribe_topic,
    vol.Optional("availability_template"): template,
    vol.Optional("payload_available", default="online"): payload,
    vol.Optional("payload_not_available", default="offline"): payload,
    vol.Optional("availability"): vol.All(ensure_list, [_AVAILABILITY_ITEM], vol.Length(max=16)),
    vol.Optional("availability_mode", default="latest"): vol.In(["all", "any", "latest"]),
    vol.Optional("qos", default=0): vol.All(vol.Coerce(int), vol.In([0, 1, 2])),
    vol.Optional("retain", default=False): vol.Boolean(),
    vol.Optional("optimistic"): vol.Boolean(),
    vol.Optional("device_class"): vol.Any(None, string),
    vol.Optional("enabled_by_default", default=True): vol.Boolean(),
}


def component_schema(fields: dict[Any, Any]) -> vol.Schema:
    return vol.Schema({**BASE, **fields}, extra=vol.ALLOW_EXTRA)


ON_OFF = {
    vol.Optional("payload_on", default="ON"): payload,
    vol.Optional("payload_off", default="OFF"): payload,
}
