"""A stand-in for the hub's HTTP API, as the integration's unit tests need it: its health and
version, the token check, a turn's JSON result or its server-sent events (the shapes of the
hub's `rest_schema`; the end-to-end tests run the real hub), and every request it was sent.

`gate`: when set, a streamed turn sends its first chunk, then waits for the gate before the rest,
so a test can tell whether the agent passed the first sentence on before the reply ended."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

TOKEN = "hub-token"


def result(reply: str = "Turned on Kitchen light.", **fields: Any) -> dict[str, Any]:
    """A turn's result as the hub answers it (`POST /api/ask`)."""
    return {"conversation_id": "c", "language": "en", "reply": reply, "ok": True, "error": None,
            "path": "fast_path", "intent": None, "awaiting": None, "tool_calls": [], "timings": {}, **fields}


def turned_on(entity_id: str, name: str) -> dict[str, Any]:
    """A tool call that turned `entity_id` on."""
    return {"id": "fast_path_0", "name": "turn_on", "arguments": {"entity_id": entity_id}, "ok": True,
            "result": {"entity_id": entity_id, "name": name, "state": "on"}, "changed_entities": [entity_id],
            "seconds": 0.01}


class FakeHub:
    def __init__(self, version: str = "0.6.0") -> None:
        self.version = version
        self.token = TOKEN
        self.next: dict[str, Any] = result()  # what the next turn answers
        self.chunks: list[str] | None = None  # a streamed turn's sentences (default: the reply)
        self.asked: list[dict[str, Any]] = []  # every turn's body
        self.streamed: list[bool] = []  # whether each turn asked for server-sent events
        self.gate: asyncio.Event | None = None
        self.sent_done = False
        self.personas = [{"key": "home", "name": "Bolt"}, {"key": "blacksmith", "name": "Brom"}]
        self._server: TestServer | None = None
        self._streams: set[asyncio.Transport] = set()  # open event streams: stop() cuts them

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.port}"

    async def start(self, port: int = 0) -> FakeHub:
        """Serve on `port` (0: a free one; the same one again: the hub is back)."""
        app = web.Application()
        app.router.add_get("/health", self._health)
        app.router.add_get("/api/status", self._status)
        app.router.add_get("/api/personas", self._personas)
        app.router.add_post("/api/ask", self._ask)
        self._server = TestServer(app, host="127.0.0.1", port=port)
        await self._server.start_server()
        return self

    async def stop(self) -> None:
        """Stop as a killed hub does: open event streams cut mid-reply."""
        for transport in list(self._streams):
            transport.abort()
        if self._server is not None:
            await self._server.close()

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.token}"

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "version": self.version, "startup": {"stage": "ready"}})

    async def _status(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"error": "unauthorized", "message": "Bad token."}, status=401)
        return web.json_response({"version": self.version, "model": {"name": "stand-in"}, "entities": 3,
                                  "uptime_s": 1.0, "settings": {"api_token": "never-here"}})

    async def _personas(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"error": "unauthorized", "message": "Bad token."}, status=401)
        return web.json_response(self.personas)

    async def _ask(self, request: web.Request) -> web.StreamResponse:
        if not self._authorized(request):
            return web.json_response({"error": "unauthorized", "message": "Bad token."}, status=401)
        body = await request.json()
        self.asked.append(body)
        self.streamed.append("text/event-stream" in request.headers.get("Accept", ""))
        answer = {**self.next, "conversation_id": body.get("conversation_id", "c")}
        if "text/event-stream" not in request.headers.get("Accept", ""):
            return web.json_response(answer)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if request.transport is not None:
            self._streams.add(request.transport)  # type: ignore[arg-type]
        for call in answer["tool_calls"]:
            await self._event(response, "tool_started", {k: call[k] for k in ("id", "name", "arguments")})
            await self._event(response, "tool_finished", call)
        for number, chunk in enumerate(self.chunks if self.chunks is not None else [answer["reply"]]):
            await self._event(response, "chunk", {"text": chunk})
            if number == 0 and self.gate is not None:
                await asyncio.wait_for(self.gate.wait(), 10)
        await self._event(response, "done", answer)
        self.sent_done = True
        await response.write_eof()
        return response

    @staticmethod
    async def _event(response: web.StreamResponse, name: str, data: dict[str, Any]) -> None:
        await response.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
