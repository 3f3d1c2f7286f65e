"""OpenAI chat-completions shapes ⇄ the hub's engine types.

The route offers the caller's tools to the model and hands its calls back as OpenAI
`tool_calls`; nothing is executed. `tool_choice: "required"` (or a named function) constrains
decoding with a grammar so the model must write one valid call. Thinking text comes back as `reasoning_content`, the field
llama-server and other OpenAI-compatible servers use.

OpenAI's conventions hold so that its official clients work as they do with OpenAI: errors are
`{"error": {"message", "type", "param", "code"}}`, `stop` ends the text at the first stop
sequence, a parameter the hub cannot honour (`n` > 1, `logprobs`, a structured
`response_format`, …) is refused with a 400 naming it rather than silently ignored, and the
model id is a slug.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from hub.agent.utterances import repeats_itself
from hub.core.messages import Message, ToolCall, ToolSpec
from hub.llm.types import (
    Done,
    Delta,
    GenerationRequest,
    MalformedToolCall,
    Reasoning,
    ReasoningMode,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolConstraint,
    Usage,
)

_EFFORT = {
    "none": Reasoning(ReasoningMode.OFF),
    "minimal": Reasoning(ReasoningMode.OFF),
    "low": Reasoning(ReasoningMode.BUDGET, 256),
    "medium": Reasoning(ReasoningMode.BUDGET, 1024),
    "high": Reasoning(ReasoningMode.ON),
}


# HTTP status -> OpenAI's error type
_ERROR_TYPES = {401: "authentication_error", 403: "permission_error", 404: "invalid_request_error",
                429: "rate_limit_error", 503: "server_error"}


class ChatRequestError(ValueError):
    """A request that passed the schema but still cannot be turned into a generation."""

    def __init__(self, message: str, param: str | None = None, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.param, self.code = param, code


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    """An error in OpenAI's shape (its clients show `message` and raise by status)."""
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


# enum/anyOf/oneOf values a tool_choice "required" grammar may be built from: far above real
# tools (a few dozen entity ids), far below what ties the model up building it
MAX_GRAMMAR_ALTERNATIVES = 256


def model_id(name: str) -> str:
    """A display name as an OpenAI-style model id: "SmolLM2 135M Instruct" -> "smollm2-135m-instruct"."""
    return re.sub(r"[^a-z0-9._]+", "-", name.lower()).strip("-") or "bolt-hub"


def refuse_unsupported(body: dict[str, Any]) -> None:
    """A 400 naming the first parameter the hub would otherwise have to ignore."""
    if body.get("n", 1) != 1:
        raise ChatRequestError("n: the hub returns one choice; send n=1 or leave it out", "n", "unsupported_parameter")
    if body.get("logprobs") or body.get("top_logprobs"):
        param = "logprobs" if body.get("logprobs") else "top_logprobs"
        raise ChatRequestError(f"{param}: the hub does not return log probabilities", param, "unsupported_parameter")
    response_format = body.get("response_format")
    if response_format is not None and response_format.get("type") != "text":
        raise ChatRequestError(f"response_format: only type 'text' is supported, not "
                               f"{response_format.get('type')!r}", "response_format", "unsupported_parameter")
    if any(m != "text" for m in body.get("modalities", ["text"])) or body.get("audio") is not None:
        param = "audio" if body.get("audio") is not None else "modalities"
        raise ChatRequestError(f"{param}: the hub answers in text only", param, "unsupported_parameter")
    if body.get("logit_bias"):
        raise ChatRequestError("logit_bias: not supported", "logit_bias", "unsupported_parameter")


def stop_sequences(body: dict[str, Any]) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    return (stop,) if isinstance(stop, str) else tuple(stop)


def generation_request(body: dict[str, Any], *, default_max_tokens: int, default_temperature: float,
                       context_tokens: int) -> GenerationRequest:
    """Build the engine request from a schema-valid chat-completions body."""
    refuse_unsupported(body)
    messages = _messages(body["messages"])
    choice = body.get("tool_choice", "auto")
    tools = [] if choice == "none" else [
        ToolSpec(t["function"]["name"], t["function"].get("description", ""),
                 t["function"].get("parameters") or {"type": "object", "properties": {}})
        for t in body.get("tools", [])
    ]
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or default_max_tokens
    return GenerationRequest(
        messages=messages, tools=tools,
        reasoning=_EFFORT.get(body.get("reasoning_effort", "none"), Reasoning()),
        conversational=True,
        max_tokens=min(max_tokens, context_tokens),
        temperature=body.get("temperature", default_temperature),
        constraint=_constraint(choice, tools),
    )


def _constraint(choice: str | dict[str, Any], tools: list[ToolSpec]) -> ToolConstraint | None:
    if choice in ("auto", "none"):
        return None
    names = tuple(t.name for t in tools)
    if isinstance(choice, dict):
        wanted = choice["function"]["name"]
        if wanted not in names:
            raise ChatRequestError(f"tool_choice names {wanted!r}, which is not among the tools", "tool_choice")
        names = (wanted,)
    if not names:
        raise ChatRequestError("tool_choice requires a tool call, but no tools were given", "tool_choice")
    alternatives = sum(_alternatives(t.parameters) for t in tools if t.name in names)
    if alternatives > MAX_GRAMMAR_ALTERNATIVES:
        raise ChatRequestError(
            f"the tools a call is required of offer {alternatives} alternatives (enum, anyOf, oneOf "
            f"values); a constrained call takes at most {MAX_GRAMMAR_ALTERNATIVES}", "tools", "grammar_too_large")
    return ToolConstraint(tool_names=names, entity_ids=())


def _alternatives(schema: Any) -> int:
    """The enum, anyOf and oneOf values anywhere in a JSON schema: what a grammar built from it
    grows with (500 of them held the model for 30 s before the grammar was even ready)."""
    count, stack = 0, [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += sum(len(v) for k, v in node.items() if k in ("enum", "anyOf", "oneOf") and isinstance(v, list))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def _messages(raw_messages: list[dict[str, Any]]) -> list[Message]:
    messages: list[Message] = []
    call_names: dict[str, str] = {}
    for index, raw in enumerate(raw_messages):
        role = "system" if raw["role"] == "developer" else raw["role"]
        content = _text(raw.get("content"))
        if role == "assistant":
            calls = [_tool_call(call, index) for call in raw.get("tool_calls", [])]
            call_names.update({c.id: c.name for c in calls if c.id})
            messages.append(Message("assistant", content, tool_calls=calls))
        elif role == "tool":
            call_id = raw.get("tool_call_id")
            name = raw.get("name") or call_names.get(call_id or "")
            if not name:
                raise ChatRequestError(f"messages[{index}]: a tool message needs the tool_call_id of an "
                                       "earlier assistant tool call, or a name", f"messages.[{index}].tool_call_id")
            messages.append(Message("tool", content, name=name, tool_call_id=call_id))
        else:  # the request schema leaves system and user
            messages.append(Message("user" if role == "user" else "system", content))
    return messages


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content)


def _tool_call(raw: dict[str, Any], index: int) -> ToolCall:
    function = raw["function"]
    try:
        arguments = json.loads(function["arguments"] or "{}")
    except ValueError as err:
        raise ChatRequestError(f"messages[{index}]: tool call arguments are not JSON: {err}",
                               f"messages.[{index}].tool_calls") from None
    if not isinstance(arguments, dict):
        raise ChatRequestError(f"messages[{index}]: tool call arguments must be a JSON object",
                               f"messages.[{index}].tool_calls")
    return ToolCall(function["name"], arguments, raw.get("id", ""))


@dataclass
class Completion:
    """Collects one generation's deltas and renders them as OpenAI objects; halts the generation
    (`halt`: its request's) when a stop sequence ended the text or the model repeats itself,
    so the caller reads on only to its Done and its usage."""

    model: str
    halt: threading.Event
    stop: tuple[str, ...] = ()
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex[:24]}")
    created: int = field(default_factory=lambda: int(time.time()))
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None
    looping: bool = False  # the model repeats itself: halted (finish "length")
    stopped: bool = False  # a stop sequence ended the text: halted
    _held: str = ""  # text that may be the start of a stop sequence

    def add(self, delta: Delta) -> dict[str, Any] | None:
        """Record a delta; returns the `delta` object of the chunk that streams it, if any."""
        if isinstance(delta, TextDelta) and delta.text:
            out = self._text(delta.text)
            self.looping = repeats_itself("".join(self.text[-64:]))
            if self.stopped or self.looping:
                self.halt.set()
            return out
        if isinstance(delta, ThinkingDelta) and delta.text:
            self.thinking.append(delta.text)
            return {"reasoning_content": delta.text}
        if isinstance(delta, ToolCallDelta):
            call = {"id": delta.call.id or f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                    "function": {"name": delta.call.name,
                                 "arguments": json.dumps(delta.call.arguments, ensure_ascii=False)}}
            self.calls.append(call)
            return {"tool_calls": [{"index": len(self.calls) - 1, **call}]}
        if isinstance(delta, MalformedToolCall):
            # what the model wrote stays visible instead of vanishing
            self.text.append(delta.raw)
            return {"content": delta.raw}
        if isinstance(delta, Done):
            self.usage = delta.usage
            held, self._held = self._held, ""
            if held:
                self.text.append(held)
                return {"content": held}
        return None

    def _text(self, text: str) -> dict[str, Any] | None:
        """Pass text on, holding back what could begin a stop sequence; cut at a whole one."""
        if self.stopped:
            return None
        pending = self._held + text
        cut = min((i for i in (pending.find(s) for s in self.stop) if i >= 0), default=-1)
        if cut >= 0:
            out, self._held, self.stopped = pending[:cut], "", True
        else:
            keep = max((n for s in self.stop for n in range(min(len(s) - 1, len(pending)), 0, -1)
                        if pending.endswith(s[:n])), default=0)
            out, self._held = pending[:len(pending) - keep], pending[len(pending) - keep:]
        if not out:
            return None
        self.text.append(out)
        return {"content": out}

    @property
    def finish_reason(self) -> str:
        if self.calls:
            return "tool_calls"
        if self.stopped:
            return "stop"
        if self.looping or (self.usage is not None and self.usage.stop_reason == "length"):
            return "length"
        return "stop"

    def usage_json(self) -> dict[str, Any] | None:
        """None until the generation's Done came."""
        usage = self.usage
        if usage is None:
            return None
        return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.reused_prompt_tokens}}

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    def usage_chunk(self) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model, "choices": [], "usage": self.usage_json()}

    def response(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.thinking:
            message["reasoning_content"] = "".join(self.thinking)
        if self.calls:
            message["tool_calls"] = self.calls
        return {"id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
                "usage": self.usage_json()}
