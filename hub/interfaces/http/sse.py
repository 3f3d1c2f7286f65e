"""Server-sent events on an aiohttp response; every write says whether the client is still there."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web


async def start(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    await response.prepare(request)
    return response


async def send_event(response: web.StreamResponse, name: str, data: dict[str, Any]) -> bool:
    payload = json.dumps(data, ensure_ascii=False)
    return await send_raw(response, f"event: {name}\ndata: {payload}\n\n".encode())


async def send_data(response: web.StreamResponse, data: dict[str, Any]) -> bool:
    return await send_raw(response, f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())


async def send_raw(response: web.StreamResponse, payload: bytes) -> bool:
    """Write to a stream; False once the client has gone."""
    try:
        await response.write(payload)
        return True
    except (ConnectionResetError, RuntimeError):
        return False


async def finish(response: web.StreamResponse) -> None:
    try:
        await response.write_eof()
    except (ConnectionResetError, RuntimeError):
        pass
