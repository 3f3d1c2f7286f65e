"""The Engine protocol over an OpenAI-compatible chat completions server, streamed with SSE.

So a hub on a small box can use a model server elsewhere: llama-server (with a `-md` drafter for
speculative decoding and `--reasoning-budget`), vLLM, Ollama, NVIDIA's hosted endpoint
(integrate.api.nvidia.com, with an API key) or llama-cpp-python's own server.

- Tools go out as OpenAI `tools`; what comes back (text, thinking, tool calls, usage) is read by
  `openai_stream`.
- Reasoning switches per server kind (`remote_server`): `chat_template_kwargs.enable_thinking`
  (llama-server, vLLM, NVIDIA), a budget where the server has one (`thinking_budget_tokens` for
  llama-server, `thinking_token_budget` for vLLM, `reasoning_budget` for NVIDIA), Ollama's
  `reasoning_effort`. The budget is the server's to enforce; llama-server's own
  `--reasoning-budget N` flag is the dependable one.
- A constrained request (small models) asks for the tool call as JSON through `response_format`
  with the same schema the in-process grammar uses (entity ids as an enum).
- Token counts for history trimming are estimated (bytes / 4): the tokenizer is on the server.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any, AsyncGenerator, AsyncIterator, Sequence

import aiohttp

from hub.core.messages import Message, ToolSpec
from hub.llm.grammar import tool_call_schema
from hub.llm.openai_stream import ChatStream, http_error, sse_events
from hub.llm.types import Delta, EngineBusy, EngineError, GenerationRequest, ModelInfo, ReasoningMode

SERVER_KINDS = ("llama_server", "vllm", "ollama", "nvidia", "openai")
NVIDIA_URL = "https://integrate.api.nvidia.com/v1"
BYTES_PER_TOKEN = 4  # estimate for count_tokens: the tokenizer lives on the server


class OpenAIEngine:
    """Streams chat completions from `base_url` (…/v1). Construction does no I/O; `connect()`
    (or the first request) asks the server for its model when none was configured."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        server: str = "llama_server",
        constrained_tools: str = "auto",
        n_ctx: int = 8192,
        queue_size: int = 32,
        timeout_s: float = 300.0,
    ) -> None:
        if server not in SERVER_KINDS:
            raise EngineError(f"remote_server must be one of {', '.join(SERVER_KINDS)}, not {server!r}")
        if constrained_tools not in ("auto", "always", "never"):
            raise EngineError(f"constrained_tools must be auto, always or never, not {constrained_tools!r}")
        if not base_url.startswith(("http://", "https://")):
            raise EngineError(f"remote_url must start with http:// or https://, not {base_url!r}")
        self._base_url = base_url.rstrip("/")
        self._model = model
        self._api_key = api_key
        self.server = server
        self.constrained_tools = constrained_tools
        self._queue_size = queue_size
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, sock_connect=10)
        self._in_flight = 0
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        self.info = ModelInfo(name=model or "remote", architecture="remote", path=self._base_url,
                              n_ctx=n_ctx, n_ctx_train=n_ctx, n_params=0)

    # --- Engine protocol -------------------------------------------------------------------

    @property
    def uses_constrained_tools(self) -> bool:
        """Only when asked for (`always`): a remote server usually runs a model big enough."""
        return self.constrained_tools == "always"

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)

    def memory(self) -> dict[str, int]:
        return {}  # the model lives in the server's memory

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def connect(self) -> ModelInfo:
        """Check that the server answers; learn its model name when none was configured."""
        if self._model is None:
            data = await self._get_json("/models")
            ids = [m.get("id") for m in data.get("data", []) if isinstance(m, dict)]
            models = [i for i in ids if isinstance(i, str) and i]
            if not models:
                raise EngineError(f"the model server at {self._base_url} lists no models: set remote_model")
            self._model = models[0]
            self.info = ModelInfo(name=self._model, architecture="remote", path=self._base_url,
                                  n_ctx=self.info.n_ctx, n_ctx_train=self.info.n_ctx_train, n_params=0)
        return self.info

    async def stream(self, request: GenerationRequest) -> AsyncGenerator[Delta, None]:
        """Text/thinking/tool-call deltas, then one Done (only that once `request.halt` is set; a
        server sends its usage last, so a halted one counts the pieces read); EngineError
        (EngineBusy, PromptTooLong) is raised from the iteration."""
        if not request.messages:
            raise EngineError("cannot generate from an empty message list")
        if request.max_tokens < 1:
            raise EngineError(f"max_tokens must be at least 1, not {request.max_tokens}")
        if self._in_flight >= self._queue_size:
            raise EngineBusy(f"the model is busy: {self._in_flight} requests are already running")
        self._in_flight += 1
        try:
            if self._model is None:
                await self.connect()
            body = self.request_body(request)
            async for delta in self._stream_body(body, request):
                yield delta
        finally:
            self._in_flight -= 1

    # --- request -----------------------------------------------------------------------------

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        """The JSON body sent for `request` (public for tests and debugging)."""
        body: dict[str, Any] = {
            "model": self._model or "",
            "messages": openai_messages(request.messages),
            "max_tokens": request.max_tokens,
            "temperature": max(0.0, request.temperature),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}} for t in request.tools]
        if request.constraint is not None:
            schema = tool_call_schema(request.tools, request.constraint)
            body["response_format"] = self._json_format(schema)
            body.pop("tools", None)  # the schema is the only way out: no native call may interfere
            body["messages"] = openai_messages(request.messages, tools_as_text=request.tools)
        body.update(self._reasoning_fields(request))
        return body

    def _json_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.server == "llama_server":  # llama-server and llama-cpp-python's server both read this
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "tool_call", "schema": schema, "strict": True}}

    def _reasoning_fields(self, request: GenerationRequest) -> dict[str, Any]:
        reasoning = request.reasoning
        thinking = request.constraint is None and (
            reasoning.mode is ReasoningMode.ON or (reasoning.mode is ReasoningMode.BUDGET and reasoning.budget > 0))
        budget = reasoning.budget if thinking and reasoning.mode is ReasoningMode.BUDGET else None
        if self.server == "ollama":
            if not thinking:
                return {"reasoning_effort": "none"}
            return {"reasoning_effort": "low" if budget is not None and budget <= 1024 else "high"}
        if self.server == "openai":
            return {}
        fields: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": thinking}}
        if budget is not None:
            key = {"llama_server": "thinking_budget_tokens", "vllm": "thinking_token_budget",
                   "nvidia": "reasoning_budget"}[self.server]
            fields[key] = budget
        return fields

    # --- response ----------------------------------------------------------------------------

    async def _stream_body(self, body: dict[str, Any], request: GenerationRequest) -> AsyncIterator[Delta]:
        started = time.perf_counter()
        stream = ChatStream(constrained=request.constraint is not None)
        session = self._session_for_loop()
        try:
            response_cm = session.post(self._base_url + "/chat/completions", json=body, headers=self._headers())
            async with response_cm as response:
                if response.status != 200:
                    raise http_error(response.status, await response.text(), self._base_url)
                async for chunk in sse_events(response):
                    if request.halt.is_set():  # leaving the response ends the server's generation
                        break
                    for item in stream.read(chunk, time.perf_counter()):
                        if not request.halt.is_set():
                            yield item
        except aiohttp.ClientConnectionError as err:
            raise EngineError(f"cannot reach the model server at {self._base_url}: {err}") from None
        except asyncio.TimeoutError:
            raise EngineError(f"the model server at {self._base_url} did not answer in time") from None
        halted = request.halt.is_set()
        tail = [] if halted else stream.finish()
        for item in tail:
            yield item
        yield stream.done(started, time.perf_counter(), halted, tail)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _session_for_loop(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._session_loop is not loop:
            self._session, self._session_loop = aiohttp.ClientSession(timeout=self._timeout), loop
        return self._session

    async def _get_json(self, path: str) -> dict[str, Any]:
        session = self._session_for_loop()
        try:
            async with session.get(self._base_url + path, headers=self._headers()) as response:
                if response.status != 200:
                    raise http_error(response.status, await response.text(), self._base_url)
                body: dict[str, Any] = await response.json(content_type=None)
                return body
        except aiohttp.ClientConnectionError as err:
            raise EngineError(f"cannot reach the model server at {self._base_url}: {err}") from None
        except (asyncio.TimeoutError, ValueError) as err:
            raise EngineError(f"the model server at {self._base_url} gave no usable answer: {err}") from None


# --- messages --------------------------------------------------------------------------------


def openai_messages(messages: Sequence[Message], tools_as_text: Sequence[ToolSpec] = ()) -> list[dict[str, Any]]:
    """Messages in OpenAI's shape; calls without ids get `call_N` ids their results refer to.

    `tools_as_text`: tool declarations appended to the system text (for a constrained request,
    which sends no `tools`, so the model still knows what the tools mean).
    """
    out: list[dict[str, Any]] = []
    open_ids: list[str] = []  # ids of calls whose results have not come yet, in order
    counter = 0
    for message in messages:
        entry: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.role == "assistant" and message.tool_calls:
            calls = []
            for call in message.tool_calls:
                counter += 1
                call_id = call.id or f"call_{counter}"
                open_ids.append(call_id)
                calls.append({"id": call_id, "type": "function",
                              "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}})
            entry["tool_calls"] = calls
        elif message.role == "tool":
            call_id = message.tool_call_id or (open_ids[0] if open_ids else f"call_{counter + 1}")
            if call_id in open_ids:
                open_ids.remove(call_id)
            entry["tool_call_id"] = call_id
            if message.name:
                entry["name"] = message.name
        out.append(entry)
    if tools_as_text:
        declarations = "\n".join(json.dumps({"name": t.name, "description": t.description,
                                             "parameters": t.parameters}, ensure_ascii=False) for t in tools_as_text)
        note = "Tools (answer with one call as JSON {\"name\": …, \"arguments\": {…}}):\n" + declarations
        if out and out[0]["role"] == "system":
            out[0] = {**out[0], "content": out[0]["content"] + "\n\n" + note}
        else:
            out.insert(0, {"role": "system", "content": note})
    return out
