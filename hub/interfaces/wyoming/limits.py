"""How much of the Wyoming port one client gets, so that no client keeps another out.

Each client address holds at most a SHARE_PER_CLIENT of `wyoming_max_connections`, the cap for
all of them together (24 of 32): Home Assistant is one address for all its satellites, and ran
20 turns at once in the load test, while the rest stays free for others. A connection over a cap
gets an `error` event (code `too_many_connections`) saying which, then is closed. An event must be
complete EVENT_DEADLINE_S after its first byte, the first one EVENT_DEADLINE_S after the
connection opened, so a byte every few seconds holds no connection; between events a connection
may stay silent for `wyoming_idle_timeout` seconds, and while a turn runs on it as long as the turn
does. Home Assistant opens a connection per request and writes its event at once, so it never
meets these limits in normal use. A burst of refusals or slow clients is one warning line.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import Counter

from wyoming.error import Error
from wyoming.event import Event, async_write_event

from hub.interfaces.wyoming.events import ProtocolProblem, read_event_checked

_LOGGER = logging.getLogger(__name__)

SHARE_PER_CLIENT = 0.75  # of wyoming_max_connections, for one client address
EVENT_DEADLINE_S = 5.0
REFUSAL_LINGER_S = 1.0  # a refused client's bytes are read this long: closing on them would reset the error
WARNING_INTERVAL_S = 60.0  # at most one warning line of a kind this often


class BurstLog:
    """Warns once per burst of a kind of trouble: the first, then at most one a WARNING_INTERVAL_S,
    counting those in between (logged at debug level)."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}
        self._quiet: Counter[str] = Counter()

    def warning(self, kind: str, message: str) -> None:
        now = time.monotonic()
        if now - self._last.get(kind, -math.inf) < WARNING_INTERVAL_S:
            self._quiet[kind] += 1
            _LOGGER.debug("%s", message)
            return
        self._last[kind] = now
        quiet = self._quiet.pop(kind, 0)
        since = f"; {quiet} more since the last warning" if quiet else ""
        _LOGGER.warning("%s%s (more in the next %.0f s are not logged)", message, since, WARNING_INTERVAL_S)


class ConnectionSlots:
    """The open connections per client address: at most `total` in all, `per_client` from one."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.per_client = max(1, int(total * SHARE_PER_CLIENT))
        self._open: Counter[str] = Counter()

    def __len__(self) -> int:
        return self._open.total()

    def take(self, peer: str) -> str | None:
        """Takes a slot for `peer`; when there is none, says why (the refused client's error text)."""
        if self._open[peer] >= self.per_client:
            return f"too many connections from this client (at most {self.per_client} at once); try again shortly"
        if len(self) >= self.total:
            return f"the hub is serving {self.total} connections (wyoming_max_connections); try again shortly"
        self._open[peer] += 1
        return None

    def give_back(self, peer: str) -> None:
        self._open[peer] -= 1
        if self._open[peer] <= 0:
            del self._open[peer]


async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, text: str) -> None:
    """Tells a refused client why with an `error` event and closes once it stops sending (at most
    REFUSAL_LINGER_S later)."""
    try:
        await async_write_event(Error(text=text, code="too_many_connections").event(), writer)
        writer.write_eof()
        async with asyncio.timeout(REFUSAL_LINGER_S):
            while await reader.read(1 << 16):
                pass
    except (ConnectionError, TimeoutError):
        pass
    finally:
        writer.close()


class EventClock:
    """When one connection has waited long enough for its next event (see the module docstring)."""

    def __init__(self, peer: str, idle_timeout: float, event_deadline: float, log: BurstLog) -> None:
        self.peer = peer
        self.idle_timeout = idle_timeout
        self.event_deadline = event_deadline
        self._log = log
        self._opened = self._last_event = time.monotonic()
        self._first = True

    def turn_ended(self) -> None:
        """A turn that ends counts as an event: the idle timeout starts again."""
        self._last_event = time.monotonic()

    async def next_event(self, reader: asyncio.StreamReader,
                         turn: asyncio.Task[None] | None) -> Event | ProtocolProblem | None:
        """The next event; None at end of stream or when the connection has waited too long."""
        head = await self._first_byte(reader, turn)
        if not head:
            return None
        first, self._first = self._first, False
        began = self._opened if first else time.monotonic()
        try:
            event = await asyncio.wait_for(read_event_checked(reader, head),
                                           began + self.event_deadline - time.monotonic())
        except TimeoutError:
            since = "it connected" if first else "its first byte"
            self._log.warning("slow", f"closing Wyoming connection from {self.peer}: an event was not complete "
                                      f"{self.event_deadline:g} s after {since}")
            return None
        self._last_event = time.monotonic()
        return event

    async def _first_byte(self, reader: asyncio.StreamReader, turn: asyncio.Task[None] | None) -> bytes:
        """The next event's first byte; b"" at end of stream or when none came in time."""
        read = asyncio.ensure_future(reader.read(1))
        try:
            while not read.done():
                if turn is not None and not turn.done():  # a running turn keeps the connection
                    await asyncio.wait({read, turn}, return_when=asyncio.FIRST_COMPLETED)
                    continue
                close_at = self._last_event + self.idle_timeout
                if self._first:
                    close_at = min(close_at, self._opened + self.event_deadline)
                if close_at <= time.monotonic():
                    if self._first:
                        self._log.warning("slow", f"closing Wyoming connection from {self.peer}: no event "
                                                  f"{min(self.idle_timeout, self.event_deadline):g} s after "
                                                  "it opened")
                    else:
                        _LOGGER.info("closing idle Wyoming connection from %s", self.peer)
                    return b""
                await asyncio.wait({read}, timeout=close_at - time.monotonic())
            return read.result()
        finally:
            read.cancel()
