"""Sandboxed Jinja templates for user-defined tools, checked when the file is loaded.

The user's YAML is configuration, but it still must not reach Python internals: templates run
in Jinja's immutable sandbox, and before that the parsed template is walked so that anything
reaching for internals (`x.__class__`, `x['__globals__']`, `x.gi_frame`, `"{0.__class__}".format`,
`map(attribute='__class__')`, globals like `cycler` or `self`) is refused at load time with a
message naming where it sits. The sandbox still guards render time (keys built at run time).

A template tree is a YAML value whose strings are templates: mappings and lists keep their
shape, and a string that is exactly one `{{ expression }}` keeps the expression's type, so
`quantity: "{{ args.quantity }}"` publishes a number, not the text "3".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Collection, Mapping

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, Undefined, nodes
from jinja2.meta import find_undeclared_variables
from jinja2.sandbox import (
    UNSAFE_ASYNC_GENERATOR_ATTRIBUTES,
    UNSAFE_COROUTINE_ATTRIBUTES,
    UNSAFE_GENERATOR_ATTRIBUTES,
    ImmutableSandboxedEnvironment,
)

from hub.custom.errors import CustomConfigError

REQUEST_VARIABLES = frozenset({"args", "secrets", "id", "conversation_id", "language", "persona"})
RESULT_VARIABLES = (REQUEST_VARIABLES - {"secrets"}) | {"response"}  # results and speech never see secrets
STEP_VARIABLES = REQUEST_VARIABLES | {"steps"}
SEQUENCE_RESULT_VARIABLES = (REQUEST_VARIABLES - {"secrets"}) | {"steps"}
ALL_VARIABLES = REQUEST_VARIABLES | {"response", "steps"}

_UNSAFE_NAMES = (UNSAFE_GENERATOR_ATTRIBUTES | UNSAFE_COROUTINE_ATTRIBUTES
                 | UNSAFE_ASYNC_GENERATOR_ATTRIBUTES | {"mro", "format", "format_map"})
_ATTRIBUTE_FILTERS = frozenset({"map", "sort", "groupby", "sum", "selectattr", "rejectattr",
                                "unique", "min", "max", "dictsort"})
_SINGLE_EXPRESSION = re.compile(r"^\s*\{\{(?P<expr>(?:(?!\{\{|\}\}|\{%|%\}).)*)\}\}\s*$", re.S)


class TemplateRenderError(Exception):
    """A template failed while rendering (missing value, refused by the sandbox, bad filter)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False,
                                        keep_trailing_newline=False)
    env.globals.clear()  # no range, dict, cycler, joiner, namespace, lipsum
    del env.filters["attr"]  # attribute access by a computed name
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
    return env


ENV = _environment()


def _refusal(node: nodes.Node, secret_names: Collection[str] | None) -> str | None:
    """Why this node may not appear in a user template, or None."""
    if isinstance(node, nodes.Getattr):
        if node.attr.startswith("_") or node.attr in _UNSAFE_NAMES:
            return f"access to '{node.attr}' is not allowed"
        if (secret_names is not None and isinstance(node.node, nodes.Name)
                and node.node.name == "secrets" and node.attr not in secret_names):
            return f"unknown secret '{node.attr}' (tool_secrets defines: {', '.join(sorted(secret_names)) or 'none'})"
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        key = node.arg.value
        if isinstance(key, str) and (key.startswith("_") or key in _UNSAFE_NAMES):
            return f"access to '{key}' is not allowed"
        if (secret_names is not None and isinstance(node.node, nodes.Name)
                and node.node.name == "secrets" and key not in secret_names):
            return f"unknown secret '{key}'"
    if isinstance(node, (nodes.Filter, nodes.Test)):
        for keyword in node.kwargs:
            value = keyword.value
            if (keyword.key == "attribute" and isinstance(value, nodes.Const) and isinstance(value.value, str)
                    and any(p.startswith("_") or p in _UNSAFE_NAMES for p in value.value.split("."))):
                return f"attribute '{value.value}' is not allowed"
        if isinstance(node, nodes.Filter) and node.name in _ATTRIBUTE_FILTERS:
            for arg in node.args:
                if isinstance(arg, nodes.Const) and isinstance(arg.value, str) and arg.value.startswith("_"):
                    return f"'{arg.value}' is not allowed"
    if isinstance(node, nodes.Name) and node.name in ("self", "super"):
        return f"'{node.name}' is not available"
    if isinstance(node, (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        return "include, import and extends are not available"
    return None


def check_source(source: str, where: str, variables: Collection[str] = ALL_VARIABLES,
                 secret_names: Collection[str] | None = None) -> nodes.Template:
    """Parse and vet one template; raises CustomConfigError naming `where`."""
    try:
        tree = ENV.parse(source)
    except TemplateError as err:
        line = f" (line {err.lineno})" if isinstance(err, TemplateSyntaxError) and err.lineno else ""
        raise CustomConfigError(f"{where}: template syntax error{line}: {err.message}") from None
    for node in tree.find_all(nodes.Node):
        reason = _refusal(node, secret_names)
        if reason:
            raise CustomConfigError(f"{where}: {reason} in a template")
    try:
        unknown = find_undeclared_variables(tree) - set(variables)
    except TemplateError as err:  # e.g. an unknown filter or test
        raise CustomConfigError(f"{where}: template error: {err.message}") from None
    if unknown:
        raise CustomConfigError(
            f"{where}: unknown template variable(s) {', '.join(sorted(unknown))}; "
            f"available here: {', '.join(sorted(variables))}")
    return tree


@dataclass(frozen=True)
class CompiledTemplate:
    """One checked template; `render` gives text, or the value of a lone `{{ expression }}`."""

    where: str
    source: str
    _template: Any
    _expression: Any  # compiled expression when the source is exactly one {{ … }}

    @property
    def is_expression(self) -> bool:
        return self._expression is not None

    def render(self, variables: Mapping[str, Any], native: bool = False) -> Any:
        try:
            if native and self._expression is not None:
                value = self._expression(**variables)
                if isinstance(value, Undefined):
                    str(value)  # StrictUndefined raises its own clear message
                return value
            return self._template.render(**variables)
        except TemplateError as err:  # UndefinedError, SecurityError, TemplateRuntimeError
            raise TemplateRenderError(self.where, err.message or type(err).__name__) from None
        except (TypeError, ValueError, ArithmeticError, LookupError) as err:
            raise TemplateRenderError(self.where, str(err)) from None


def compile_template(source: str, where: str, variables: Collection[str] = ALL_VARIABLES,
                     secret_names: Collection[str] | None = None) -> CompiledTemplate:
    """A checked, compiled template. Raises CustomConfigError (naming `where`) when it is refused.

    `variables` are the names it may use here; `secret_names`, when given, are the secrets
    that exist, so `secrets.typo` is caught at load time too.
    """
    if not isinstance(source, str):
        raise CustomConfigError(f"{where}: a template must be text, not {type(source).__name__}")
    check_source(source, where, variables, secret_names)
    try:
        template = ENV.from_string(source)
        match = _SINGLE_EXPRESSION.match(source)
        expression = ENV.compile_expression(match["expr"], undefined_to_none=False) if match else None
    except TemplateError as err:
        raise CustomConfigError(f"{where}: template error: {err.message}") from None
    return CompiledTemplate(where, source, template, expression)


# --- template trees -------------------------------------------------------------------------------


def compile_tree(value: Any, where: str, variables: Collection[str] = ALL_VARIABLES,
                 secret_names: Collection[str] | None = None) -> Any:
    """A YAML value with every string compiled as a template (shape and other scalars kept)."""
    if isinstance(value, str):
        return compile_template(value, where, variables, secret_names)
    if isinstance(value, Mapping):
        return {str(k): compile_tree(v, f"{where}.{k}", variables, secret_names) for k, v in value.items()}
    if isinstance(value, list):
        return [compile_tree(v, f"{where}[{i}]", variables, secret_names) for i, v in enumerate(value)]
    return value


def render_tree(tree: Any, variables: Mapping[str, Any]) -> Any:
    """Render a compiled tree: lone expressions keep their type, other strings become text."""
    if isinstance(tree, CompiledTemplate):
        return tree.render(variables, native=True)
    if isinstance(tree, dict):
        return {k: render_tree(v, variables) for k, v in tree.items()}
    if isinstance(tree, list):
        return [render_tree(v, variables) for v in tree]
    return tree
