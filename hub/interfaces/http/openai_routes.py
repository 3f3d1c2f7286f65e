"""The OpenAI-compatible routes of the REST API: `/v1/models[/{model}]`, `/v1/chat/completions`.

Completions straight on the hub's engine (the caller's tools are offered, never run; see
`openai_compat`), streamed as OpenAI's SSE chunks or answered whole; errors come in OpenAI's
shape (see `http_errors.json_error_body`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

from aiohttp import web

from hub.interfaces.http import sse
from hub.interfaces.http.cutoff import Cutoff
from hub.interfaces.http.errors import ClientError
from hub.interfaces.http.openai_compat import (
    ChatRequestError,
    Completion,
    error_body,
    generation_request,
    model_id,
    stop_sequences,
)
from hub.llm.types import Engine, EngineError

BodyReader = Callable[[web.Request, str], Awaitable[Any]]  # (request, schema name) -> checked JSON


@dataclass(frozen=True)
class CompletionOptions:
    max_tokens: int  # a request's defaults
    temperature: float
    turn_timeout: int  # a completion's limit


class ModelHost(Protocol):
    """What the routes need of the hub: its loaded engine."""

    @property
    def engine(self) -> Engine: ...


class OpenAiRoutes:
    """Adds the `/v1/` routes to the REST API's app (behind its token check and error middleware)."""

    def __init__(self, hub: ModelHost, options: CompletionOptions, read_body: BodyReader,
                 stopping: asyncio.Event) -> None:
        self._hub = hub
        self._options = options
        self._read_body = read_body
        self._stopping = stopping

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/v1/models/{model}", self.model)
        app.router.add_post("/v1/chat/completions", self.chat_completions)

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [self._model_json()]})

    async def model(self, request: web.Request) -> web.Response:
        model = self._model_json()
        if request.match_info["model"] != model["id"]:
            raise ClientError(404, "model_not_found", f"The model {request.match_info['model']!r} does not "
                                                      f"exist; this hub serves {model['id']!r}.", "model")
        return web.json_response(model)

    def _model_json(self) -> dict[str, Any]:
        info = self._hub.engine.info
        return {"id": model_id(info.name), "object": "model", "created": 0, "owned_by": "bolt-hub",
                "name": info.name, "context_length": info.n_ctx}

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        body = await self._read_body(request, "chat")
        engine = self._hub.engine
        try:
            generation = generation_request(
                body, default_max_tokens=self._options.max_tokens,
                default_temperature=self._options.temperature, context_tokens=engine.info.n_ctx)
        except ChatRequestError as err:
            raise ClientError(400, err.code, str(err), err.param) from None
        # like a turn: admitted only if the model's queue lets it be done within turn_timeout,
        # and cut at turn_timeout, when the client leaves or when the hub stops
        timeout = self._options.turn_timeout
        generation = replace(generation, deadline=time.monotonic() + timeout)
        cutoff = Cutoff(request, timeout, self._stopping)
        completion = Completion(model=model_id(engine.info.name), halt=generation.halt, stop=stop_sequences(body))
        deltas = engine.stream(generation)
        try:
            try:
                async with cutoff:
                    # the first delta comes before any header: a busy or failing engine gets a real status
                    first = await _first_delta(deltas)
                    if not body.get("stream"):
                        completion.add(first)
                        async for delta in deltas:
                            completion.add(delta)
                        return web.json_response(completion.response())
            except TimeoutError:
                raise _cut_error(cutoff.reason, timeout) from None
            return await self._stream_completion(request, completion, first, deltas, cutoff,
                                                 bool(body.get("stream_options", {}).get("include_usage")))
        finally:
            await deltas.aclose()

    async def _stream_completion(self, request: web.Request, completion: Completion, first: Any,
                                 deltas: AsyncIterator[Any], cutoff: Cutoff,
                                 include_usage: bool) -> web.StreamResponse:
        response = await sse.start(request)
        connected = await sse.send_data(response, completion.chunk({"role": "assistant", "content": ""}))
        pending = [first]
        try:
            async with cutoff:
                while connected:
                    delta = pending.pop() if pending else await anext(deltas, None)
                    if delta is None:
                        break
                    out = completion.add(delta)
                    if out is not None:
                        connected = await sse.send_data(response, completion.chunk(out))
        except EngineError as err:
            await sse.send_data(response, error_body(503, "engine_error", str(err)))
        except TimeoutError:
            cut = _cut_error(cutoff.reason, self._options.turn_timeout)
            if connected:
                await sse.send_data(response, error_body(cut.status, cut.code, cut.message))
                if await sse.send_raw(response, b"data: [DONE]\n\n"):
                    await sse.finish(response)
            return response
        if connected:
            await sse.send_data(response, completion.chunk({}, completion.finish_reason))
            if include_usage and completion.usage is not None:
                await sse.send_data(response, completion.usage_chunk())
            if await sse.send_raw(response, b"data: [DONE]\n\n"):
                await sse.finish(response)
        return response


def _cut_error(reason: str | None, timeout: float) -> ClientError:
    """What a chat completion cut short by its Cutoff answers."""
    if reason == "stopping":
        return ClientError(503, "stopping", "The hub is shutting down.")
    if reason == "disconnected":  # nobody reads it
        return ClientError(499, "client_closed_request", "The client closed the connection.")
    return ClientError(504, "timeout", f"The model did not finish within turn_timeout ({timeout:g} s).")


async def _first_delta(deltas: AsyncIterator[Any]) -> Any:
    try:
        return await anext(deltas)
    except EngineError as err:
        if type(err).__name__ == "EngineBusy":
            raise ClientError(503, "busy", "The model is busy with other requests; retry shortly.") from None
        raise ClientError(400, "model_error", str(err)) from None
    except StopAsyncIteration:
        raise ClientError(503, "model_error", "The model produced nothing.") from None
