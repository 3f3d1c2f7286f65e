"""One client cannot hold the Wyoming port (issue #30 item 3), on real sockets against the real server.

Reported: 32 idle connections locked Home Assistant out, 268 of 300 connections got a bare EOF,
and 40 connections trickling a byte every 5 s kept a new client out for 60 s. Now each client
address has its own cap, a refused connection is told why with an `error` event, and an event
must be complete within a few seconds of its first byte (the first one: of the connection).
Loopback is 127.0.0.0/8 on Linux, so 127.0.0.2 is a second client of a server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import pytest
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.info import Describe, Info

from hub.config import validate
from hub.options import hub_options
from hub.interfaces.wyoming.server import WyomingServer
from helpers.wyoming_fake_agent import ScriptedAgent

pytestmark = pytest.mark.timeout(60)
Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def started(**options: object) -> WyomingServer:
    server = WyomingServer(ScriptedAgent(), hub_options(validate(options)).wyoming, host="127.0.0.1", port=0,
                           discovery=False)
    await server.start()
    return server


async def connect(server: WyomingServer, client: str = "127.0.0.1") -> Connection:
    return await asyncio.open_connection("127.0.0.1", server.port, local_addr=(client, 0))


async def next_event(connection: Connection, timeout: float = 5) -> Event | None:
    """The next event; None when the server closed the connection (a reset included)."""
    try:
        return await asyncio.wait_for(async_read_event(connection[0]), timeout)
    except ConnectionError:
        return None


async def describe(connection: Connection) -> Event | None:
    await async_write_event(Describe().event(), connection[1])
    return await next_event(connection)


async def trickle(connection: Connection, every: float) -> None:
    """Half an event header, a byte at a time, until the server hangs up."""
    with contextlib.suppress(ConnectionError):
        for byte in b'{"type": "describe", "data": {"padding": "' + b"x" * 10_000:
            connection[1].write(bytes([byte]))
            await connection[1].drain()
            await asyncio.sleep(every)


async def closed_after(connection: Connection, timeout: float) -> float | None:
    """Seconds until the server closes the connection (None: still open after `timeout`)."""
    start = time.monotonic()
    try:
        while await asyncio.wait_for(connection[0].read(1 << 16), timeout):
            pass
    except TimeoutError:
        return None
    except ConnectionError:
        pass
    return time.monotonic() - start


def close_all(connections: list[Connection], tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for _, writer in connections:
        writer.close()


async def test_one_client_trickling_forty_connections_does_not_keep_another_out() -> None:
    """The issue's 40 slow connections: from another address, describe is answered at once."""
    server = await started()  # the defaults: 32 connections in all
    server.event_deadline = 60.0  # so what lets the second client in is its own share, not a timeout
    flood = [await connect(server) for _ in range(40)]
    tasks = [asyncio.create_task(trickle(c, every=0.5)) for c in flood]
    try:
        await asyncio.sleep(1.0)  # every one of the 40 is accepted, or refused, by now
        start = time.monotonic()
        second = await connect(server, "127.0.0.2")
        answer = await describe(second)
        assert answer is not None and Info.is_type(answer.type), f"127.0.0.2 was kept out: {answer}"
        assert time.monotonic() - start < 5
        second[1].close()
        assert await describe(await connect(server)) is not None  # the flooding client is answered too
    finally:
        close_all(flood, tasks)
        await server.stop()


async def test_a_refused_connection_is_told_why_with_an_error_event(caplog: pytest.LogCaptureFixture) -> None:
    """40 idle connections from one client: it gets its share, the rest an `error` event each
    (never a bare EOF) and one warning line for the burst."""
    server = await started()
    server.event_deadline = 60.0
    held: list[Connection] = []
    try:
        with caplog.at_level(logging.WARNING):
            held = [await connect(server) for _ in range(40)]
            answers = await asyncio.gather(*(next_event(c, timeout=1.0) for c in held), return_exceptions=True)
        still_open = [c for c, a in zip(held, answers) if isinstance(a, TimeoutError)]
        refused = [(c, a) for c, a in zip(held, answers) if isinstance(a, Event)]
        assert len(still_open) + len(refused) == 40, f"bare EOFs: {answers}"
        assert 0 < len(still_open) < 32, "one client held every connection"
        for connection, answer in refused:
            assert answer.type == "error" and answer.data["code"] == "too_many_connections", answer
            assert "from this client" in answer.data["text"]
        assert await closed_after(refused[0][0], timeout=5) is not None  # told, then closed
        refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
        assert len(refusals) == 1 and "127.0.0.1" in refusals[0], refusals
    finally:
        close_all(held, [])
        await server.stop()


async def test_a_connection_over_the_total_cap_is_told_why() -> None:
    server = await started(wyoming_max_connections=3)
    server.slots.per_client = 2
    held = [await connect(server), await connect(server), await connect(server, "127.0.0.2")]
    try:
        await asyncio.sleep(0.3)
        held.append(await connect(server, "127.0.0.3"))
        answer = await next_event(held[-1])
        assert answer is not None and answer.type == "error" and "wyoming_max_connections" in answer.data["text"]
    finally:
        close_all(held, [])
        await server.stop()


async def test_a_connection_trickling_bytes_is_closed_within_the_event_deadline() -> None:
    server = await started(wyoming_idle_timeout=60)
    server.event_deadline = 1.0
    connections = [await connect(server), await connect(server)]
    tasks = [asyncio.create_task(trickle(connections[0], every=0.2))]
    try:
        # from its first byte on, one connection trickles; the other answers a describe first
        answer = await describe(connections[1])
        assert answer is not None and Info.is_type(answer.type)
        closed = await closed_after(connections[0], timeout=10)
        assert closed is not None and closed < 5, "a byte every 0.2 s kept the connection open"

        await asyncio.sleep(1.5)  # idle between events, past the deadline: open (idle timeout 60 s)
        answer = await describe(connections[1])
        assert answer is not None and Info.is_type(answer.type), "an idle connection was cut between events"
        tasks.append(asyncio.create_task(trickle(connections[1], every=0.2)))
        closed = await closed_after(connections[1], timeout=10)
        assert closed is not None and closed < 5, "a slow second event kept the connection open"
    finally:
        close_all(connections, tasks)
        await server.stop()


async def test_a_connection_that_sends_nothing_is_closed_within_the_event_deadline() -> None:
    server = await started(wyoming_idle_timeout=60)
    server.event_deadline = 1.0
    connection = await connect(server)
    try:
        closed = await closed_after(connection, timeout=10)
        assert closed is not None and closed < 5
    finally:
        connection[1].close()
        await server.stop()
