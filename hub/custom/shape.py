"""The shape of the custom file: voluptuous schemas of the whole file, of each tool type and of
a persona, a YAML loader that refuses a key given twice, and errors naming the key path."""

from __future__ import annotations

import re
from typing import Any

import voluptuous as vol
import yaml

from hub.custom.errors import CustomConfigError
from hub.locales import SUPPORTED_LANGUAGES

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
NAME = re.compile(NAME_PATTERN)
_SERVICE = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9_]+$")
TOOL_TYPES = ("mqtt", "rest", "ha_service", "ha_script", "sequence")


def _name(value: Any) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise vol.Invalid(f"{value!r} is not a valid name (lower-case letters, digits and _, "
                          "starting with a letter, at most 64 characters)")
    return value


def _localized(value: Any) -> Any:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, dict) and value and all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()):
        unknown = [k for k in value if k.split("-")[0].split("_")[0].lower() not in SUPPORTED_LANGUAGES]
        if unknown:
            raise vol.Invalid(f"unknown language code(s) {', '.join(unknown)}")
        return value
    raise vol.Invalid("expected text, or a mapping of language code to text")


def _section(value: Any) -> dict[str, Any]:
    """A mapping of names to entries (an empty section is fine; entries are checked later)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise vol.Invalid("expected a mapping of names to entries")
    return value


def _seconds(maximum: float) -> Any:
    return vol.All(vol.Coerce(float), vol.Range(min=0.1, max=maximum))


_COMMON = {
    vol.Required("type"): vol.In(TOOL_TYPES),
    vol.Required("description"): _localized,
    vol.Optional("title"): _localized,
    vol.Optional("parameters"): dict,
    vol.Optional("result"): object,
    vol.Optional("speech"): str,
    vol.Optional("success"): str,
}
TOOL_SCHEMAS = {
    "mqtt": vol.Schema({
        **_COMMON,
        vol.Required("topic"): str,
        vol.Optional("payload"): vol.Any(str, dict, list),
        vol.Optional("qos", default=1): vol.In((0, 1, 2)),
        vol.Optional("retain", default=False): bool,
        vol.Optional("response_topic"): str,
        vol.Optional("correlation"): vol.Any(None, vol.Match(r"^[^\s]+$")),
        vol.Optional("timeout", default=10.0): _seconds(3600),
        vol.Optional("ack_after"): _seconds(3600),
        vol.Optional("acknowledgement"): str,
    }),
    "rest": vol.Schema({
        **_COMMON,
        vol.Optional("method", default="GET"): vol.All(vol.Upper, vol.In(("GET", "POST", "PUT", "PATCH", "DELETE"))),
        vol.Required("url"): str,
        vol.Optional("headers", default=dict): {str: str},
        vol.Optional("body"): vol.Any(str, dict, list),
        vol.Optional("timeout", default=10.0): _seconds(600),
        vol.Optional("result_path"): str,
        vol.Optional("verify_ssl", default=True): bool,
    }),
    "ha_service": vol.Schema({
        **_COMMON,
        vol.Required("service"): vol.Match(_SERVICE, msg="expected domain.service, e.g. light.turn_on"),
        vol.Optional("data"): dict,
    }),
    "ha_script": vol.Schema({
        **_COMMON,
        vol.Required("script"): vol.Match(r"^(script\.)?[a-z0-9_]+$", msg="expected script.<name>"),
        vol.Optional("variables"): dict,
    }),
    "sequence": vol.Schema({
        **_COMMON,
        vol.Required("steps"): vol.All([vol.Schema({
            vol.Required("tool"): _name,
            vol.Optional("name"): _name,
            vol.Optional("args"): dict,
        })], vol.Length(min=1)),
    }),
}
PERSONA = vol.Schema({
    vol.Required("name"): vol.All(str, vol.Length(min=1)),
    vol.Required("instructions"): vol.All(str, vol.Length(min=1)),
    vol.Optional("language"): vol.In(SUPPORTED_LANGUAGES),
    vol.Optional("conversational"): bool,
    vol.Optional("reasoning"): vol.In(("on", "off", "budget")),
    vol.Optional("reasoning_budget"): vol.All(int, vol.Range(min=0, max=8192)),
    vol.Optional("tools", default=list): [_name],
    vol.Optional("home", default=False): bool,
    vol.Optional("greeting"): vol.All(str, vol.Length(min=1)),
    vol.Optional("satellites", default=list): [vol.All(str, vol.Length(min=1))],
    vol.Optional("tool_choice", default="auto"): vol.In(("auto", "required")),
})
FILE = vol.Schema({
    vol.Optional("personas"): _section,
    vol.Optional("tools"): _section,
    vol.Optional("default_persona"): _name,
})


class UniqueKeyLoader(yaml.SafeLoader):
    """safe_load, except that a key given twice in one mapping is an error (not a silent overwrite)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key!r} is defined twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _where(path: list[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validate(schema: vol.Schema, value: Any, where: str, source: str) -> Any:
    try:
        return schema(value)
    except vol.MultipleInvalid as err:
        problems = []
        for error in err.errors:
            path = _where([where, *error.path]) if where else _where(list(error.path))
            message = error.msg
            if message == "extra keys not allowed":
                message = "unknown key"
            problems.append(f"{path}: {message}")
        raise CustomConfigError(f"{source}: " + "; ".join(problems)) from None
