"""What an OpenAI-compatible server streams back, read into the engine's deltas.

A completion comes as SSE `data:` lines of JSON chunks until `[DONE]`. Content text goes through
the StreamParser (a server without a reasoning or tool parser leaves `<think>` and tool-call
markers in it); `reasoning_content` (llama-server, vLLM, NVIDIA) or `reasoning` (Ollama) deltas
are thinking; `tool_calls` pieces are assembled per index and become calls when the stream ends
(arguments that are not a JSON object: MalformedToolCall). Usage is the server's when it reports
it (llama-server's own `timings` included), else counted from the pieces read.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import aiohttp

from hub.core.messages import ToolCall
from hub.llm.grammar import constrained_delta
from hub.llm.stream_parser import StreamParser
from hub.llm.types import (
    Delta,
    Done,
    EngineBusy,
    EngineError,
    MalformedToolCall,
    PromptTooLong,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
)

_LOGGER = logging.getLogger(__name__)

_CONTEXT_WORDS = ("context", "too long", "exceed", "maximum")


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChatStream:
    """One streamed completion read chunk by chunk: `read` gives each chunk's deltas, `finish`
    what only the end tells (the parser's rest, the constrained call, the assembled calls), and
    `done` the Done with its usage."""

    def __init__(self, constrained: bool) -> None:
        self.usage = Usage()
        self._constrained = constrained  # the content is the JSON call, read whole at the end
        self._constrained_text: list[str] = []
        self._parser = StreamParser()
        self._calls: dict[int, _PendingCall] = {}
        self._first_at: float | None = None
        self._pieces = 0  # content/reasoning deltas: about one token each, when the server sends no usage
        self._finish_reason = "stop"

    def read(self, chunk: dict[str, Any], now: float) -> list[Delta]:
        if "error" in chunk:
            raise stream_error(chunk["error"])
        _read_usage(chunk, self.usage)
        out: list[Delta] = []
        for choice in chunk.get("choices") or []:
            out += self._read_choice(choice, now)
        return out

    def _read_choice(self, choice: dict[str, Any], now: float) -> list[Delta]:
        delta = choice.get("delta") or {}
        out: list[Delta] = []
        thinking = delta.get("reasoning_content") or delta.get("reasoning")
        if thinking:
            self.usage.thinking_tokens += 1
            out.append(ThinkingDelta(thinking))
        content = delta.get("content")
        if content:
            if self._constrained:
                self._constrained_text.append(content)
            else:
                out += self._parser.feed(content)
        for call_delta in delta.get("tool_calls") or []:
            _add_call_delta(self._calls, call_delta)
        if out or delta.get("tool_calls") or content:
            self._pieces += 1
            self._first_at = self._first_at or now
        if choice.get("finish_reason"):
            self._finish_reason = choice["finish_reason"]
        return out

    def finish(self) -> list[Delta]:
        """What the end of the stream completes (not called for a halted one: what it had not
        finished is not output)."""
        tail = self._parser.finish()
        if self._constrained:
            tail.append(constrained_delta("".join(self._constrained_text), "call_1", self._finish_reason))
        return tail + [_finished_call(index, call) for index, call in sorted(self._calls.items())]

    def done(self, started: float, now: float, halted: bool, tail: list[Delta]) -> Done:
        usage = self.usage
        usage.total_s = now - started
        usage.first_token_s = (self._first_at or now) - started
        usage.prefill_s = usage.prefill_s or usage.first_token_s
        usage.decode_s = max(0.0, now - (self._first_at or now))
        usage.stop_reason = "halted" if halted else _stop_reason(self._finish_reason, tail)
        usage.completion_tokens = usage.completion_tokens or self._pieces
        return Done(usage)


async def sse_events(response: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of an SSE stream's `data:` lines, until `[DONE]`."""
    async for raw in response.content:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue  # blank separators, `event:` names, `:` comments
        payload = line[5:].strip()
        if payload == "[DONE]":
            return
        try:
            event = json.loads(payload)
        except ValueError:
            _LOGGER.warning("ignoring an unreadable event from the model server: %.200s", payload)
            continue
        if isinstance(event, dict):
            yield event


def _add_call_delta(calls: dict[int, _PendingCall], delta: dict[str, Any]) -> None:
    index = delta.get("index", len(calls))
    call = calls.setdefault(index, _PendingCall())
    call.id = call.id or delta.get("id") or ""
    function = delta.get("function") or {}
    if function.get("name") and not call.name:  # some servers repeat the name in every delta
        call.name = function["name"]
    if function.get("arguments"):
        call.arguments.append(function["arguments"])


def _finished_call(index: int, call: _PendingCall) -> Delta:
    raw = "".join(call.arguments)
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except ValueError as err:
        return MalformedToolCall(raw=f"{call.name}{raw}", error=f"arguments are not valid JSON: {err}")
    if not call.name or not isinstance(arguments, dict):
        return MalformedToolCall(raw=f"{call.name}{raw}", error="a tool call needs a name and an arguments object")
    return ToolCallDelta(ToolCall(call.name, arguments, call.id or f"call_{index + 1}"))


def _read_usage(chunk: dict[str, Any], usage: Usage) -> None:
    reported = chunk.get("usage")
    if isinstance(reported, dict):
        usage.prompt_tokens = int(reported.get("prompt_tokens") or 0)
        usage.completion_tokens = int(reported.get("completion_tokens") or 0)
        cached = (reported.get("prompt_tokens_details") or {}).get("cached_tokens")
        if cached is not None:
            usage.reused_prompt_tokens = int(cached)
        reasoning = (reported.get("completion_tokens_details") or {}).get("reasoning_tokens")
        if reasoning:
            usage.thinking_tokens = int(reasoning)
        usage.evaluated_prompt_tokens = usage.prompt_tokens - usage.reused_prompt_tokens
    timings = chunk.get("timings")  # llama-server's own figures
    if isinstance(timings, dict) and "prompt_n" in timings:
        usage.evaluated_prompt_tokens = int(timings["prompt_n"])
        usage.reused_prompt_tokens = int(timings.get("cache_n") or 0)
        usage.prefill_s = float(timings.get("prompt_ms") or 0.0) / 1000


def _stop_reason(finish_reason: str, tail: list[Delta]) -> str:
    if any(isinstance(d, ToolCallDelta) for d in tail) or finish_reason in ("tool_calls", "function_call"):
        return "tool_call"
    return "length" if finish_reason == "length" else "stop"


def http_error(status: int, text: str, url: str) -> EngineError:
    message = _error_message(text)
    if status in (401, 403):
        return EngineError(f"the model server at {url} refused the request ({status}): check remote_api_key")
    if status in (429, 503):
        return EngineBusy(f"the model server at {url} is busy ({status}): {message}")
    if status == 404:
        return EngineError(f"the model server at {url} has no such model or endpoint (404): {message}")
    if status == 400 and any(word in message.lower() for word in _CONTEXT_WORDS):
        return PromptTooLong(f"the model server rejected the prompt as too long: {message}")
    return EngineError(f"the model server at {url} answered {status}: {message}")


def stream_error(error: Any) -> EngineError:
    message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
    if any(word in message.lower() for word in _CONTEXT_WORDS):
        return PromptTooLong(f"the model server rejected the prompt as too long: {message}")
    return EngineError(f"the model server failed while generating: {message}")


def _error_message(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        return str(error.get("message") or error.get("detail") or error)[:300]
    return str(error)[:300]
