"""The conversation's data, shared by every layer: messages, the tools the model is told of, their calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for. `id` is assigned by the hub when the format has none."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass
class Message:
    """One chat message, as the agent keeps it in a conversation's history.

    `tool_calls` is set on assistant messages that called tools; `name` and `tool_call_id`
    on role="tool" messages that carry a tool's result (JSON text in `content`).
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    name: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool: name, description, JSON schema of its arguments.

    `entity_args` names the arguments that hold entity ids: constrained decoding offers only
    the candidates for them (hub.llm.grammar); the model is not told.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    entity_args: tuple[str, ...] = ()
