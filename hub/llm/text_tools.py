"""Tool declarations, calls and results written as text, for formats with no tool syntax of their own."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from hub.llm.chat_format import (
    TEXT_TOOL_CALL_CLOSE,
    TEXT_TOOL_CALL_OPEN,
    TEXT_TOOL_RESPONSE_CLOSE,
    TEXT_TOOL_RESPONSE_OPEN,
)
from hub.core.messages import Message, ToolCall, ToolSpec


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def tool_result_value(content: str) -> Any:
    """A tool result's content is JSON text; keep it as data when it parses."""
    try:
        return json.loads(content)
    except (ValueError, TypeError):
        return content


def openai_tools(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def text_tool_instructions(tools: Sequence[ToolSpec]) -> str:
    """Tool declarations for a format with no tool syntax of its own (goes into the system text)."""
    lines = [
        "You can call these tools. Each line inside <tools></tools> describes one tool:",
        "<tools>",
        *(_dumps(entry["function"]) for entry in openai_tools(tools)),
        "</tools>",
        "To call a tool, answer with only this, one line per call:",
        f'{TEXT_TOOL_CALL_OPEN}{{"name": "<tool name>", "arguments": {{<arguments as JSON>}}}}{TEXT_TOOL_CALL_CLOSE}',
        f"Tool results come back inside {TEXT_TOOL_RESPONSE_OPEN}{TEXT_TOOL_RESPONSE_CLOSE}.",
    ]
    return "\n".join(lines)


def text_tool_call(call: ToolCall) -> str:
    return f"{TEXT_TOOL_CALL_OPEN}{_dumps({'name': call.name, 'arguments': call.arguments})}{TEXT_TOOL_CALL_CLOSE}"


def text_tool_result(message: Message) -> str:
    payload = {"name": message.name or "", "result": tool_result_value(message.content)}
    return f"{TEXT_TOOL_RESPONSE_OPEN}{_dumps(payload)}{TEXT_TOOL_RESPONSE_CLOSE}"


@dataclass
class _Turn:
    role: str  # system | user | assistant
    content: str


def text_tool_turns(
    messages: Sequence[Message], tools: Sequence[ToolSpec], *, system_role: bool = True
) -> list[_Turn]:
    """Messages as plain turns for a format without tool syntax.

    Tool declarations join the system text; assistant calls become `<tool_call>` text; tool
    results become a user turn of `<tool_response>` text. Consecutive turns of one role are
    merged, so formats that insist on alternating roles accept the result.
    """
    turns: list[_Turn] = []
    system_parts = [m.content.strip() for m in messages[:1] if m.role == "system"]
    rest = messages[1:] if system_parts else messages
    if tools:
        system_parts.append(text_tool_instructions(tools))
    system_text = "\n\n".join(p for p in system_parts if p)
    if system_text:
        turns.append(_Turn("system", system_text))
    for message in rest:
        if message.role == "tool":
            role, content = "user", text_tool_result(message)
        elif message.role == "assistant":
            calls = "\n".join(text_tool_call(c) for c in message.tool_calls)
            role, content = "assistant", "\n".join(p for p in (message.content.strip(), calls) if p)
        else:  # a later system message is a note to the model: it goes in as user text
            role, content = "user", message.content.strip()
        if turns and turns[-1].role == role:
            turns[-1].content += "\n\n" + content
        else:
            turns.append(_Turn(role, content))
    if not system_role and turns and turns[0].role == "system":
        system = turns.pop(0)
        if turns and turns[0].role == "user":
            turns[0].content = system.content + "\n\n" + turns[0].content
        else:
            turns.insert(0, _Turn("user", system.content))
    return turns
