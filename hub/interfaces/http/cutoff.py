"""A cancel scope for an HTTP request's work: its deadline, its client leaving, the server stopping.

aiohttp lets a handler run on after its client has gone (handler cancellation is off by default),
so a long model request would hold the one model for nobody. Work inside `async with cutoff:`
is cancelled at the deadline, as soon as the client's connection closes, or when the server
stops; the scope then raises TimeoutError and `reason` says which it was.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

from aiohttp import web

POLL_S = 0.1  # how often the client's connection is looked at (aiohttp has no disconnect event)


class Cutoff:
    """Reusable for several consecutive `async with` blocks: all end at the one deadline."""

    def __init__(self, request: web.Request, seconds: float, stopping: asyncio.Event) -> None:
        self._request = request
        self._stopping = stopping
        self._deadline = asyncio.get_running_loop().time() + seconds
        self._timeout: asyncio.Timeout | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.reason: str | None = None  # "timeout" | "disconnected" | "stopping", once cut

    async def __aenter__(self) -> "Cutoff":
        self._timeout = asyncio.timeout_at(self._deadline)
        await self._timeout.__aenter__()
        self._watcher = asyncio.create_task(self._watch())
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        assert self._timeout is not None and self._watcher is not None
        self._watcher.cancel()
        try:
            await self._timeout.__aexit__(kind, error, traceback)
        except TimeoutError:
            self.reason = self.reason or "timeout"
            raise

    async def _watch(self) -> None:
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            while not stopping.done():
                transport = self._request.transport
                if transport is None or transport.is_closing():
                    self._cut("disconnected")
                    return
                await asyncio.wait({stopping}, timeout=POLL_S)
            self._cut("stopping")
        finally:
            stopping.cancel()

    def _cut(self, reason: str) -> None:
        assert self._timeout is not None
        if self.reason is None and not self._timeout.expired():
            self.reason = reason
            self._timeout.reschedule(asyncio.get_running_loop().time())
