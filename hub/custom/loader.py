"""Read the user's custom file (`custom_file` option): personas and their tools, checked whole.

Everything is checked at load time, so a typo stops the hub with a message naming the file
and the key path (`custom.yaml: tools.craft_item.payload.item: …`) instead of failing in the
middle of a game: the YAML's shape (voluptuous, `shape`), tool and persona names, argument schemas,
every template (sandbox, variables, secrets), references between personas, sequences and tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import jsonschema
import yaml

from hub.agent.personas import HOME_PERSONA, Persona, parse_reasoning
from hub.custom.errors import CustomConfigError
from hub.custom.templates import (
    REQUEST_VARIABLES,
    RESULT_VARIABLES,
    SEQUENCE_RESULT_VARIABLES,
    STEP_VARIABLES,
    CompiledTemplate,
    compile_template,
    compile_tree,
)
from hub.custom.tool_base import CustomTool, Outputs, ToolDeps
from hub.custom.tools import (
    HaScriptTool,
    HaServiceTool,
    MqttTool,
    RestTool,
    SequenceTool,
    Step,
    parse_result_path,
)
from hub.core.tools import Tool
from hub.custom.shape import FILE, NAME, PERSONA, TOOL_SCHEMAS, TOOL_TYPES, UniqueKeyLoader, validate

__all__ = ["CustomConfigError", "CustomSetup", "ToolDeps", "load_custom_file", "parse_secrets"]

_SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
EMPTY_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


@dataclass(frozen=True)
class CustomOptions:
    custom_file: str | None
    tool_secrets: str | None = field(repr=False)
    default_persona: str | None  # wins over the file's
    language: str


@dataclass
class CustomSetup:
    personas: list[Persona]
    tools: list[Tool]
    default_persona: str | None = None

    async def close(self) -> None:
        """Stop waiting for late answers (call at shutdown)."""
        for tool in self.tools:
            if isinstance(tool, CustomTool):
                await tool.close()


# --- secrets -----------------------------------------------------------------------------------


def parse_secrets(text: str | None) -> dict[str, str]:
    """`name=value` pairs separated by `;` or newlines (the `tool_secrets` option).

    Errors name the pair by position and name, never by value.
    """
    found: dict[str, str] = {}
    for number, pair in enumerate((p.strip() for p in re.split(r"[;\n]", text or "")), start=1):
        if not pair:
            continue
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not _SECRET_NAME.match(name):
            raise CustomConfigError(
                f"tool_secrets: entry {number} is not name=value with a name of letters, digits and _")
        if name in found:
            raise CustomConfigError(f"tool_secrets: {name!r} is given twice")
        if not value.strip():
            raise CustomConfigError(f"tool_secrets: {name!r} has an empty value")
        found[name] = value.strip()
    return found


# --- loading ------------------------------------------------------------------------------------


def load_custom_file(path: Path, deps: ToolDeps) -> CustomSetup:
    """Personas and tools from the YAML at `path`. Raises CustomConfigError naming file and key."""
    source = str(path)
    try:
        raw = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=UniqueKeyLoader)  # noqa: S506 (safe)
    except OSError as err:
        raise CustomConfigError(f"{source}: cannot read the custom file: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise CustomConfigError(f"{source}: not valid YAML: {err}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise CustomConfigError(f"{source}: expected a mapping with personas: and tools:")
    doc = validate(FILE, raw, "", source)
    tool_entries = doc.get("tools") or {}
    persona_entries = doc.get("personas") or {}
    for section, entries in (("tools", tool_entries), ("personas", persona_entries)):
        for key in entries:
            if not isinstance(key, str) or not NAME.match(key):
                raise CustomConfigError(
                    f"{source}: {section}.{key}: {key!r} is not a valid name (lower-case letters, digits "
                    "and _, starting with a letter, at most 64 characters)")
    builder = _Builder(source, deps)
    tools = {name: builder.tool(name, entry) for name, entry in tool_entries.items()}
    builder.check_sequences(tools)
    personas = [builder.persona(key, entry, tools) for key, entry in persona_entries.items()]
    default = doc.get("default_persona")
    if default is not None and default != HOME_PERSONA and default not in persona_entries:
        raise CustomConfigError(f"{source}: default_persona: no persona named {default!r}; "
                                f"defined: {', '.join([HOME_PERSONA, *persona_entries])}")
    return CustomSetup(personas=personas, tools=list(tools.values()), default_persona=default)


@dataclass
class _Builder:
    source: str
    deps: ToolDeps
    _sequence_tools: dict[str, dict[str, CustomTool]] = field(default_factory=dict)

    def error(self, where: str, message: str) -> CustomConfigError:
        return CustomConfigError(f"{self.source}: {where}: {message}")

    def template(self, value: Any, where: str, variables: frozenset[str]) -> CompiledTemplate:
        try:
            return compile_template(value, where, variables, self.deps.secrets.keys())
        except CustomConfigError as err:
            raise CustomConfigError(f"{self.source}: {err}") from None

    def tree(self, value: Any, where: str, variables: frozenset[str]) -> Any:
        try:
            return compile_tree(value, where, variables, self.deps.secrets.keys())
        except CustomConfigError as err:
            raise CustomConfigError(f"{self.source}: {err}") from None

    def tool(self, name: str, entry: Any) -> CustomTool:
        where = f"tools.{name}"
        if not isinstance(entry, dict):
            raise self.error(where, "expected a mapping with type, description, …")
        kind = entry.get("type")
        if kind not in TOOL_SCHEMAS:
            raise self.error(f"{where}.type", f"unknown tool type {kind!r}; known: {', '.join(TOOL_TYPES)}")
        conf = validate(TOOL_SCHEMAS[kind], entry, where, self.source)
        result_vars = SEQUENCE_RESULT_VARIABLES if kind == "sequence" else RESULT_VARIABLES
        success = None
        if "success" in conf:
            success = self.template(conf["success"], f"{where}.success", result_vars)
            if not success.is_expression:
                raise self.error(f"{where}.success", "must be a single expression, e.g. \"{{ response.ok }}\"")
        common = dict(
            name=name, description=conf["description"], title=conf.get("title"),
            parameters=self.parameters(conf.get("parameters"), f"{where}.parameters"), deps=self.deps,
            outputs=Outputs(
                result=self.tree(conf["result"], f"{where}.result", result_vars) if "result" in conf else None,
                speech=self.template(conf["speech"], f"{where}.speech", result_vars) if "speech" in conf else None,
                success=success))
        if kind == "sequence":
            return self._sequence(name, conf, where, common)
        build = {"mqtt": self._mqtt, "rest": self._rest, "ha_service": self._ha_service,
                 "ha_script": self._ha_script}[kind]
        return build(conf, where, common)

    def _mqtt(self, conf: dict[str, Any], where: str, common: dict[str, Any]) -> CustomTool:
        request = REQUEST_VARIABLES
        if "ack_after" in conf and "response_topic" not in conf:
            raise self.error(f"{where}.ack_after", "needs a response_topic to wait for")
        if "ack_after" in conf and conf["ack_after"] >= conf["timeout"]:
            raise self.error(f"{where}.ack_after", "must be shorter than timeout")
        return MqttTool(
            topic=self.template(conf["topic"], f"{where}.topic", request),
            payload=self.tree(conf["payload"], f"{where}.payload", request) if "payload" in conf else None,
            qos=conf["qos"], retain=conf["retain"],
            response_topic=(self.template(conf["response_topic"], f"{where}.response_topic", request)
                            if "response_topic" in conf else None),
            correlation=conf.get("correlation"), timeout=conf["timeout"], ack_after=conf.get("ack_after"),
            acknowledgement=(self.template(conf["acknowledgement"], f"{where}.acknowledgement",
                                           REQUEST_VARIABLES - {"secrets"})
                             if "acknowledgement" in conf else None),
            **common)

    def _rest(self, conf: dict[str, Any], where: str, common: dict[str, Any]) -> CustomTool:
        request = REQUEST_VARIABLES
        return RestTool(
            method=conf["method"], url=self.template(conf["url"], f"{where}.url", request),
            headers={k: self.template(v, f"{where}.headers.{k}", request) for k, v in conf["headers"].items()},
            body=self.tree(conf["body"], f"{where}.body", request) if "body" in conf else None,
            timeout=conf["timeout"], verify_ssl=conf["verify_ssl"],
            result_path=parse_result_path(conf["result_path"]) if "result_path" in conf else None,
            **common)

    def _ha_service(self, conf: dict[str, Any], where: str, common: dict[str, Any]) -> CustomTool:
        domain, service = conf["service"].split(".", 1)
        return HaServiceTool(domain=domain, service=service,
                             data=self.tree(conf.get("data", {}), f"{where}.data", REQUEST_VARIABLES), **common)

    def _ha_script(self, conf: dict[str, Any], where: str, common: dict[str, Any]) -> CustomTool:
        script = conf["script"] if conf["script"].startswith("script.") else f"script.{conf['script']}"
        return HaScriptTool(script=script,
                            variables=self.tree(conf.get("variables", {}), f"{where}.variables", REQUEST_VARIABLES),
                            **common)

    def _sequence(self, name: str, conf: dict[str, Any], where: str, common: dict[str, Any]) -> CustomTool:
        steps: list[Step] = []
        for index, step in enumerate(conf["steps"]):
            step_name = step.get("name", step["tool"])
            if any(s.name == step_name for s in steps):
                raise self.error(f"{where}.steps[{index}]", f"two steps are named {step_name!r}; give one a name:")
            args = self.tree(step["args"], f"{where}.steps[{index}].args", STEP_VARIABLES) if "args" in step else None
            steps.append(Step(step_name, step["tool"], args))
        registry: dict[str, CustomTool] = {}
        self._sequence_tools[name] = registry
        return SequenceTool(steps=tuple(steps), tools=registry, **common)

    def parameters(self, schema: Any, where: str) -> dict[str, Any]:
        if schema is None:
            return dict(EMPTY_SCHEMA)
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as err:
            at = "/".join(str(p) for p in err.absolute_path)
            raise self.error(where + (f" ({at})" if at else ""), f"not a valid JSON schema: {err.message}") from None
        if schema.get("type") != "object":
            raise self.error(where, "the arguments schema must have type: object")
        return cast(dict[str, Any], schema)

    def check_sequences(self, tools: dict[str, CustomTool]) -> None:
        """Every step names an existing tool, and no sequence reaches itself."""
        for name, registry in self._sequence_tools.items():
            sequence = tools[name]
            assert isinstance(sequence, SequenceTool)
            for index, step in enumerate(sequence.steps):
                if step.tool == name:
                    raise self.error(f"tools.{name}.steps[{index}].tool", "a sequence cannot call itself")
                if step.tool not in tools:
                    raise self.error(f"tools.{name}.steps[{index}].tool",
                                     f"no tool named {step.tool!r}; defined: {', '.join(tools)}")
            registry.update(tools)
        for name in self._sequence_tools:
            self._find_cycle(name, tools, [])

    def _find_cycle(self, name: str, tools: dict[str, CustomTool], path: list[str]) -> None:
        if name in path:
            cycle = " → ".join([*path[path.index(name):], name])
            raise self.error(f"tools.{path[0]}.steps", f"sequences call each other in a circle: {cycle}")
        tool = tools[name]
        if isinstance(tool, SequenceTool):
            for step in tool.steps:
                self._find_cycle(step.tool, tools, [*path, name])

    def persona(self, key: str, entry: Any, tools: dict[str, CustomTool]) -> Persona:
        where = f"personas.{key}"
        if not isinstance(entry, dict):
            raise self.error(where, "expected a mapping with name, instructions, tools, …")
        conf = validate(PERSONA, entry, where, self.source)
        for index, tool in enumerate(conf["tools"]):
            if tool not in tools:
                raise self.error(f"{where}.tools[{index}]",
                                 f"no tool named {tool!r}; defined: {', '.join(tools) or 'none'}")
        if conf["tool_choice"] == "required" and not conf["tools"]:
            raise self.error(f"{where}.tool_choice", "required needs at least one tool in tools")
        if "reasoning_budget" in conf and conf.get("reasoning") != "budget":
            raise self.error(f"{where}.reasoning_budget", "only used with reasoning: budget")
        return Persona(
            key=key, name=conf["name"], instructions=conf["instructions"], language=conf.get("language"),
            conversational=conf.get("conversational"),
            reasoning=parse_reasoning(conf.get("reasoning"), conf.get("reasoning_budget")),
            tools=tuple(dict.fromkeys(conf["tools"])), home=conf["home"], greeting=conf.get("greeting"),
            satellites=tuple(conf["satellites"]), tool_choice=conf["tool_choice"])
