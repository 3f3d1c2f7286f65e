"""An HTTP-aware loopback proxy in front of a real server that misbehaves on demand.

Modes: `pass` forwards everything (REST and websockets); `error` answers every new request with
HTTP 500 (a websocket already open stays up, as when HA's API fails but its core runs); `down`
cuts every connection and refuses new ones; `blackhole` accepts and never answers.
"""

from __future__ import annotations

import asyncio

from ha.ha_harness import free_port, pipe

ERROR_RESPONSE = (b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                  b"Content-Length: 21\r\nConnection: close\r\n\r\nInternal Server Error")
MODES = ("pass", "error", "down", "blackhole")


class FaultProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.mode = "pass"
        self.errors_sent = 0
        self._server: asyncio.AbstractServer | None = None
        self._plain: set[asyncio.StreamWriter] = set()  # REST connections (kept alive by clients)
        self._upgraded: set[asyncio.StreamWriter] = set()  # websockets
        self._held: set[asyncio.StreamWriter] = set()  # blackholed

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._connect, "127.0.0.1", self.port, reuse_address=True)

    async def set_mode(self, mode: str) -> None:
        assert mode in MODES, mode
        self.mode = mode
        if mode != "pass":
            _abort(self._plain)  # a kept-alive REST connection must not bypass the fault
        if mode == "down":
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()
                self._server = None
            _abort(self._upgraded)
        else:
            _abort(self._held)
            await self.start()

    async def stop(self) -> None:
        await self.set_mode("down")

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.transport.abort()
            return
        if self.mode == "blackhole":
            self._held.add(writer)
            return
        if self.mode != "pass":
            self.errors_sent += 1
            writer.write(ERROR_RESPONSE)
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        group = self._upgraded if b"upgrade: websocket" in head.lower() else self._plain
        group.update((writer, up_writer))
        up_writer.write(head)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer), return_exceptions=True)
        for w in (writer, up_writer):
            group.discard(w)
            w.transport.abort()


def _abort(writers: set[asyncio.StreamWriter]) -> None:
    for writer in list(writers):
        writer.transport.abort()
    writers.clear()

