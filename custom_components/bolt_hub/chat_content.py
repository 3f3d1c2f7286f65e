"""The hub's tool calls and their results as chat-log content, so that HA's Assist debug view and
the conversation's history show what the hub did. The hub has already run them: HA must not.

HA 2025.8+ marks such calls `external` and takes them with
`async_add_assistant_content_without_tools`; older HA has no way to add a call it will not run,
so they go into the log's content list directly (HA only reads it). HA 2026 names a result's data
`result` (an `llm.ToolResult`) instead of `tool_result`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers import llm
from homeassistant.util.ulid import ulid_now

_EXTERNAL_CALLS = "external" in {f.name for f in dataclasses.fields(llm.ToolInput)}
_RESULT_OBJECTS = "result" in {f.name for f in dataclasses.fields(conversation.ToolResultContent)}


def record_tool_call(chat_log: conversation.ChatLog, agent_id: str, finished: dict[str, Any]) -> None:
    """Add one finished call of the hub (its SSE `tool_finished`, or a result's `tool_calls`
    item) and its result to the chat log."""
    call_id = str(finished.get("id") or ulid_now())
    name = str(finished.get("name", "tool"))
    arguments: dict[str, Any] = finished["arguments"] if isinstance(finished.get("arguments"), dict) else {}
    data: dict[str, Any] = finished["result"] if isinstance(finished.get("result"), dict) else {}
    ok = bool(finished.get("ok"))
    tool_input = llm.ToolInput(tool_name=name, tool_args=arguments, id=call_id,
                               **({"external": True} if _EXTERNAL_CALLS else {}))
    call = conversation.AssistantContent(agent_id=agent_id, tool_calls=[tool_input])
    outcome: dict[str, Any] = ({"result": llm.ToolResult(data=data, error=not ok)}  # type: ignore[attr-defined]
                               if _RESULT_OBJECTS else {"tool_result": data})
    result = conversation.ToolResultContent(agent_id=agent_id, tool_call_id=call_id, tool_name=name, **outcome)
    if _EXTERNAL_CALLS:
        chat_log.async_add_assistant_content_without_tools(call)
        chat_log.async_add_assistant_content_without_tools(result)  # type: ignore[arg-type]
    else:
        chat_log.content.extend([call, result])
