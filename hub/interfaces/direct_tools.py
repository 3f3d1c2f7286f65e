"""Calling the hub's tools directly, without the model: one request shape and one result shape
for MQTT (`hub.interfaces.mqtt.tool_api`) and REST (`POST /api/tools/{name}`).

A direct call goes through `Agent.call_tool`, so it meets the same persona scoping, policy and
argument validation as a call the model makes; its result is the very ToolResult the model
would see, so automations and games can use the hub's tools as an API.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from hub.agent.api import AgentApi
from hub.agent.personas import UnknownPersona
from hub.core.tools import ToolContext, ToolResult
from hub.interfaces import json_input
from hub.interfaces.request_ids import checked_id, peek_id
from hub.locales import normalize_language

MAX_CALL_BYTES = 64 * 1024
# the fields of a call that are not the tool's arguments
CALL_FIELDS = ("id", "arguments", "persona", "conversation_id", "language")


class CallError(ValueError):
    """A direct call the hub refuses before running anything; `code` is the error's name."""

    def __init__(self, message: str, call_id: str | int | None = None, code: str = "bad_request") -> None:
        super().__init__(message)
        self.call_id = call_id
        self.code = code


@dataclass(frozen=True)
class DirectCall:
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | int | None = None
    persona: str | None = None
    conversation_id: str | None = None
    language: str | None = None


def parse_call(tool: str, payload: bytes) -> DirectCall:
    """One call from its JSON payload: `{"id"?, "arguments"?, "persona"?, "conversation_id"?,
    "language"?}`; without an "arguments" key the other fields are the arguments."""
    if len(payload) > MAX_CALL_BYTES:
        raise CallError(f"payload of {len(payload)} bytes exceeds {MAX_CALL_BYTES}", peek_id(payload))
    try:
        data = json_input.loads(payload) if payload.strip() else {}
    except json_input.BadJson as err:
        raise CallError(f"payload is not JSON text ({err}): send an object with the tool's arguments",
                        peek_id(payload)) from None
    if not isinstance(data, dict):
        raise CallError("payload must be a JSON object")
    try:
        call_id = checked_id(data)
    except ValueError as err:
        raise CallError(str(err)) from None
    if "arguments" in data:
        arguments = data["arguments"]
        if not isinstance(arguments, dict):
            raise CallError("'arguments' must be a JSON object", call_id)
    else:
        arguments = {k: v for k, v in data.items() if k not in CALL_FIELDS}
    fields = {}
    for key, limit in (("persona", 64), ("conversation_id", 200), ("language", 35)):
        value = data.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > limit):
            raise CallError(f"'{key}' must be a non-empty string of at most {limit} characters", call_id)
        fields[key] = value.strip() if isinstance(value, str) else None
    return DirectCall(tool, arguments, call_id, **fields)


async def run_call(agent: AgentApi, call: DirectCall, source: str, default_language: str) -> ToolResult:
    """Run a call through the agent (persona scoping, policy, validation). Raises CallError
    for an unknown persona; a refused or failed tool is an ok=False result."""
    ctx = ToolContext(
        conversation_id=call.conversation_id or f"{source}-tool-{uuid.uuid4().hex[:12]}",
        language=normalize_language(call.language, default=default_language),
        source=source,
        persona=call.persona,
    )
    try:
        return await agent.call_tool(call.tool, call.arguments, ctx)
    except UnknownPersona as err:
        raise CallError(str(err), call.id, "unknown_persona") from None


def result_json(tool: str, call_id: str | int | None, result: ToolResult) -> dict[str, Any]:
    """The answer to a direct call; `result` is what the model would have seen."""
    answer: dict[str, Any] = {
        "id": call_id, "tool": tool, "ok": result.ok, "result": result.data, "speech": result.speech,
        "pending": result.pending, "changed_entities": list(result.changed_entities),
    }
    if not result.ok:
        answer["error"] = str(result.data.get("error") or "failed")
        answer["message"] = str(result.data.get("message") or answer["error"])
    return answer


def error_json(tool: str, call_id: str | int | None, code: str, message: str) -> dict[str, Any]:
    """The answer to a call refused before anything ran."""
    return {"id": call_id, "tool": tool, "ok": False, "result": None, "speech": None, "pending": False,
            "changed_entities": [], "error": code, "message": message}


