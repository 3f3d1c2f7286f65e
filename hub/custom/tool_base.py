"""What every tool a user declares in YAML shares (`CustomTool`): its spec, the variables its
templates see, its result and failures, and the masking of secret values; what the tools reach
at run time (`ToolDeps`)."""

from __future__ import annotations

import secrets as token_source
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from hub.custom.templates import CompiledTemplate, TemplateRenderError, render_tree
from hub.home.entities import Entity
from hub.home.policy import ActionPolicy
from hub.home.watches import OutcomeSink
from hub.core.tools import ToolContext, ToolError, ToolResult, ToolTraits
from hub.transport.mqtt_client import MqttClient
from hub.core.messages import ToolSpec
from hub.locales import normalize_language, phrase

MASK = "***"
Localized = str | Mapping[str, str]


class ServiceCaller(Protocol):
    """Home Assistant's service calls (hub.backends.ha.client.HAClient)."""

    async def call_service(self, domain: str, service: str, data: dict[str, Any]) -> Any: ...


class HomeEntities(Protocol):
    """The hub's own entities (hub.home.entities.EntityStore): the only ones a tool may act on."""

    def get(self, entity_id: str) -> Entity | None:
        """The entity as the hub sees it; None when it has none, or the user untargeted it."""
        ...

    def known(self, entity_id: str) -> Entity | None:
        """The entity as its backend gave it (its own name and device class), untargeted or not."""
        ...


@dataclass
class ToolDeps:
    """What custom tools reach at run time. MQTT and Home Assistant start after the tools are
    loaded, so the composition root connects them (`connect`, once); until then, and when
    neither runs, a tool that needs one answers that it is unavailable."""

    secrets: Mapping[str, str] = field(repr=False)
    policy: ActionPolicy
    reporter: OutcomeSink
    entities: HomeEntities
    language: str = "en"
    mqtt: MqttClient | None = None
    home_assistant: ServiceCaller | None = None

    def connect(self, *, mqtt: MqttClient | None, home_assistant: ServiceCaller | None) -> None:
        assert self.mqtt is None and self.home_assistant is None, "custom tools are connected once"
        self.mqtt, self.home_assistant = mqtt, home_assistant


def localized(value: Localized | None, language: str) -> str | None:
    """The text for `language` from a string or a per-language mapping (then English, then any)."""
    if value is None or isinstance(value, str):
        return value
    wanted = normalize_language(language)
    by_language = {normalize_language(k, k): v for k, v in value.items()}
    return by_language.get(wanted) or by_language.get("en") or next(iter(value.values()), None)


def redact(value: Any, secret_values: tuple[str, ...]) -> Any:
    """`value` with every secret value masked (strings inside mappings and lists too)."""
    if not secret_values:
        return value
    if isinstance(value, str):
        for secret in secret_values:
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {redact(k, secret_values): redact(v, secret_values) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secret_values) for v in value]
    return value


@dataclass(frozen=True)
class Outputs:
    """How a tool turns a peer's response into its result: all optional templates."""

    result: Any = None  # template tree; a mapping becomes the data, anything else {"result": …}
    speech: CompiledTemplate | None = None
    success: CompiledTemplate | None = None  # falsy → the call failed (e.g. "{{ response.paid }}")


class CustomTool(ToolTraits):
    """What every user-defined tool shares: spec, variables, results, failures, masking."""

    def __init__(self, name: str, description: Localized, parameters: dict[str, Any],
                 deps: ToolDeps, outputs: Outputs, title: Localized | None = None) -> None:
        self.name = name
        self.descriptions = description  # kept whole: the spec carries the configured language's
        self.title = title
        self.deps = deps
        self.outputs = outputs
        self.spec = ToolSpec(name, localized(description, deps.language) or name, parameters)
        self._secret_values = tuple(sorted((v for v in deps.secrets.values() if v), key=len, reverse=True))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return self.mask(await self.run_safe(args, ctx, background=True))

    async def run_safe(self, args: dict[str, Any], ctx: ToolContext, background: bool) -> ToolResult:
        """Run once; refusals and failures become results (also for a sequence's steps)."""
        try:
            return await self.run(args, ctx, new_call_id(), background)
        except ToolError as err:
            return failure_result(err)
        except TemplateRenderError as err:
            return failure_result(self.failed(ctx, "template_error", detail=str(err)))

    async def run(self, args: dict[str, Any], ctx: ToolContext, call_id: str,
                  background: bool) -> ToolResult:
        raise NotImplementedError

    # --- helpers for the tool types -----------------------------------------------------------

    def spoken_name(self, language: str) -> str:
        return localized(self.title, language) or self.name.replace("_", " ")

    def variables(self, args: dict[str, Any], ctx: ToolContext, call_id: str) -> dict[str, Any]:
        return {"args": args, "secrets": dict(self.deps.secrets), "id": call_id,
                "conversation_id": ctx.conversation_id, "language": ctx.language,
                "persona": ctx.persona}

    def answer(self, variables: Mapping[str, Any], response: Any, extra: str = "response") -> ToolResult:
        """The result for a peer's response, through the tool's result/speech/success templates."""
        seen = {k: v for k, v in variables.items() if k != "secrets"}
        seen[extra] = response
        ok = True if self.outputs.success is None else bool(self.outputs.success.render(seen, native=True))
        value = response if self.outputs.result is None else render_tree(self.outputs.result, seen)
        if isinstance(value, dict):
            data = dict(value)
        else:
            data = {"status": "sent"} if value is None else {"result": value}
        speech = self.outputs.speech.render(seen) if self.outputs.speech is not None else None
        if not ok:
            data.setdefault("error", "failed")
            speech = speech or phrase(variables["language"], "tool.failed", name=self.spoken_name(variables["language"]))
        return ToolResult(ok=ok, data=data, speech=speech or None)

    def failed(self, ctx: ToolContext, code: str, key: str = "tool.failed", **details: Any) -> ToolError:
        """A ToolError whose message is the spoken sentence for `key` ({name} = this tool)."""
        spoken = phrase(ctx.language, key, name=self.spoken_name(ctx.language))
        return ToolError(spoken, code=code, tool=self.name, **details)

    def mask(self, result: ToolResult) -> ToolResult:
        if not self._secret_values:
            return result
        result.data = redact(result.data, self._secret_values)
        result.speech = redact(result.speech, self._secret_values)
        return result

    async def close(self) -> None:
        """End background work (the mqtt tool waits for late responses)."""


def new_call_id() -> str:
    return token_source.token_hex(8)


def failure_result(err: ToolError) -> ToolResult:
    message = str(err)
    return ToolResult(ok=False, data={"error": err.code, "message": message, **err.details}, speech=message)
