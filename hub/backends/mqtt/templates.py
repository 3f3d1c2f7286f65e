"""Value and command templates from MQTT discovery, rendered in a sandboxed jinja2.

Supported: the common Home Assistant device templates — `{{ value }}`, `{{ value_json.state }}`,
`{{ value_json['x'] }}`, `{{ value_json.a.b | int }}`, `{{ 'ON' if value_json.on else 'OFF' }}`,
filters `int`, `float`, `round`, `lower`, `upper`, `default`, `tojson`/`to_json`, `from_json`,
`is_defined`, `iif`, `bool`, `abs`, `min`, `max` and plain jinja expressions.
Limits: no Home Assistant state functions (`states()`, `now()`, `is_state()`, …): a template
using them fails to render and its message is ignored with a warning; a template may be at
most 2,000 characters; the sandbox forbids attribute access to Python internals.
"""

from __future__ import annotations

import json
from typing import Any

from jinja2 import StrictUndefined, TemplateError, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_TEMPLATE_CHARS = 2000
MAX_RENDER_CHARS = 65536


class MqttTemplateError(ValueError):
    """A template that cannot be compiled or rendered."""


def _from_json(value: Any) -> Any:
    return json.loads(value)


def _is_defined(value: Any) -> Any:
    if isinstance(value, Undefined):
        raise MqttTemplateError("value is undefined")
    return value


def _iif(value: Any, if_true: Any = True, if_false: Any = False, if_none: Any = False) -> Any:
    if value is None:
        return if_none
    return if_true if value else if_false


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "on", "yes", "enable")
    return bool(value)


def _make_environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    env.filters.update(
        {
            "from_json": _from_json,
            "to_json": lambda v: json.dumps(v, ensure_ascii=False),
            "tojson": lambda v: json.dumps(v, ensure_ascii=False),
            "is_defined": _is_defined,
            "iif": _iif,
            "bool": _bool,
        }
    )
    env.globals.update({"iif": _iif, "bool": _bool, "float": float, "int": int, "min": min, "max": max, "round": round})
    return env


_ENV = _make_environment()


class MqttTemplate:
    def __init__(self, source: str) -> None:
        if not isinstance(source, str):
            raise MqttTemplateError("a template must be a string")
        if len(source) > MAX_TEMPLATE_CHARS:
            raise MqttTemplateError(f"template longer than {MAX_TEMPLATE_CHARS} characters")
        self.source = source
        try:
            self._template = _ENV.from_string(source)
        except TemplateError as err:
            raise MqttTemplateError(f"template does not compile: {err}") from None

    def render(self, value: Any = None, **variables: Any) -> str:
        """Render with `value` (the payload text) and `value_json` (when it parses as JSON)."""
        context = dict(variables)
        if value is not None:
            context["value"] = value
            if isinstance(value, str):
                try:
                    context["value_json"] = json.loads(value)
                except ValueError:
                    pass
        try:
            rendered = self._template.render(context)
        except (TemplateError, ValueError, TypeError, ArithmeticError, LookupError, AttributeError) as err:
            raise MqttTemplateError(f"template {self.source!r} failed: {err}") from None
        if len(rendered) > MAX_RENDER_CHARS:
            raise MqttTemplateError("template output too long")
        return rendered.strip()
