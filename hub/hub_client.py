"""A client of a running hub, for the CLI: `bolt-hub ask` against its REST API, and the health
check (`bolt-hub health`, the image's HEALTHCHECK) against its `/health` and Wyoming server."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

from hub.interfaces.http.auth import TOKEN_FILE

PROBE_TIMEOUT_S = 2.0


class HubClientError(Exception):
    """The running hub could not be asked (one plain line for the user)."""


@dataclass(frozen=True)
class RunningHub:
    url: str  # e.g. http://127.0.0.1:8099
    token: str = field(repr=False)

    @staticmethod
    async def health(url: str, timeout_s: float = PROBE_TIMEOUT_S) -> dict[str, Any] | None:
        """The hub's `/health` answer, or None when nothing (or something else) answers there."""
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session:
                async with session.get(f"{url}/health") as response:
                    data = await response.json(content_type=None)
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("status") in ("ok", "warming") else None

    async def wait_ready(self, timeout_s: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while (health := await self.health(self.url)) is None or health["status"] != "ok":
            if loop.time() > deadline:
                raise HubClientError(f"the hub at {self.url} is not ready after {timeout_s:.0f} s")
            await asyncio.sleep(0.5)

    async def ask(self, body: dict[str, Any], timeout_s: float) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """POST /api/ask streamed: (event name, data) for chunk, tool_started, tool_finished, done."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "text/event-stream"}
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.post(f"{self.url}/api/ask", json=body, headers=headers) as response:
                if response.status != 200:
                    detail = (await response.json(content_type=None)).get("message", response.reason)
                    raise HubClientError(f"the hub at {self.url} refused the request ({response.status}): {detail}")
                name = ""
                async for raw in response.content:
                    line = raw.decode("utf-8").rstrip("\r\n")
                    if line.startswith("event: "):
                        name = line[len("event: "):]
                    elif line.startswith("data: "):
                        yield name, json.loads(line[len("data: "):])


def saved_token(configured: str | None, state_dir: Path) -> str | None:
    """The token a running hub uses: the api_token option, else the one it saved (never a new one)."""
    if configured:
        return configured
    try:
        return (state_dir / TOKEN_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


async def wyoming_describe(host: str, port: int, timeout_s: float = PROBE_TIMEOUT_S) -> Info:
    """Ask a Wyoming server `describe`, as Home Assistant does every 30 s."""
    async def exchange() -> Info:
        async with AsyncTcpClient(host, port) as client:
            await client.write_event(Describe().event())
            while True:
                event = await client.read_event()
                if event is None:
                    raise ConnectionError("the server closed the connection")
                if Info.is_type(event.type):
                    return Info.from_event(event)

    return await asyncio.wait_for(exchange(), timeout_s)
