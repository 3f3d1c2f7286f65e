"""paho's socket on the asyncio event loop, as paho documents it (and Home Assistant's MQTT client
does it): paho's socket callbacks register the socket with `loop.add_reader/add_writer`, a 1 s
timer drives `loop_misc` (keepalive), and the callbacks that come from the connect's worker thread
hop back to the loop first, so nothing else ever touches paho from another thread.
"""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import ssl
import threading
from typing import Any, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import MQTTErrorCode

_LOGGER = logging.getLogger(__name__)

READ_BURST = 500  # packets read per wake-up at most, so a flood cannot hold the event loop


def _has_more(sock: Any) -> bool:
    """Whether the socket has more to read now (TLS may hold decrypted bytes already)."""
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


class PahoSocket:
    """Reads, writes and keeps alive one paho client's socket from the event loop.

    `on_closed` runs on the loop once the socket has closed (and the loop has let go of it).
    """

    def __init__(self, on_closed: Callable[[], None]) -> None:
        self._on_closed = on_closed
        self._client: paho.Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self.fd: int | None = None  # the open socket's, while the loop watches it
        self._write_fd: int | None = None
        self._misc_timer: asyncio.TimerHandle | None = None

    def attach(self, client: paho.Client) -> None:
        """Drive `client`'s socket from now on (a fresh client replaces the one before)."""
        self._client = client
        client.on_socket_open = self._on_socket_open
        client.on_socket_close = self._on_socket_close
        client.on_socket_register_write = self._on_socket_register_write
        client.on_socket_unregister_write = self._on_socket_unregister_write

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop to drive the socket from; call on that loop's thread."""
        self._loop = loop
        self._loop_thread = threading.get_ident()

    def drop(self) -> None:
        """Stop watching the socket (it closed, or the client stops)."""
        self._unwatch_writes()
        if self.fd is not None and self._loop is not None:
            self._loop.remove_reader(self.fd)
        self.fd = None
        if self._misc_timer is not None:
            self._misc_timer.cancel()
            self._misc_timer = None

    # --- paho's socket callbacks: the connect in the worker thread hops back to the loop ------

    def _in_loop(self, fn: Callable[..., None], *args: Any) -> None:
        if self._loop is None:
            return
        if threading.get_ident() == self._loop_thread:
            fn(*args)
        else:
            self._loop.call_soon_threadsafe(fn, *args)

    def _on_socket_open(self, client: paho.Client, _userdata: Any, sock: Any) -> None:
        try:  # small packets (replies, commands) go out at once instead of waiting on Nagle
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, AttributeError):
            pass
        self._in_loop(self._watch_socket, sock.fileno())

    def _on_socket_close(self, client: paho.Client, _userdata: Any, sock: Any) -> None:
        self._in_loop(self._socket_closed)

    def _on_socket_register_write(self, client: paho.Client, _userdata: Any, sock: Any) -> None:
        self._in_loop(self._watch_writes, sock.fileno())

    def _on_socket_unregister_write(self, client: paho.Client, _userdata: Any, sock: Any) -> None:
        self._in_loop(self._unwatch_writes)

    # --- on the loop -----------------------------------------------------------------------

    def _watch_socket(self, fd: int) -> None:
        _LOGGER.debug("MQTT socket %d open", fd)
        if fd < 0 or self._loop is None:
            return
        self.drop()
        self.fd = fd
        self._loop.add_reader(fd, self._read)
        self._misc_timer = self._loop.call_later(1, self._misc)
        self._read()  # data may already be waiting

    def _watch_writes(self, fd: int) -> None:
        if fd < 0 or self._loop is None or fd != self.fd:
            return
        if self._write_fd is None:
            self._write_fd = fd
            self._loop.add_writer(fd, self._write)

    def _unwatch_writes(self) -> None:
        if self._write_fd is not None and self._loop is not None:
            self._loop.remove_writer(self._write_fd)
        self._write_fd = None

    def _socket_closed(self) -> None:
        _LOGGER.debug("MQTT socket %s closed", self.fd)
        self.drop()
        self._on_closed()

    def _read(self) -> None:
        """Read what has arrived, up to READ_BURST packets: paho reads one packet per call, so one
        per turn of the event loop fell behind a flood (thousands of retained discovery configs)
        and the broker's wait for their PUBACKs timed out."""
        assert self._client is not None
        for _ in range(READ_BURST):
            if self._client.loop_read() != MQTTErrorCode.MQTT_ERR_SUCCESS:
                return
            sock = self._client.socket()
            if sock is None or not _has_more(sock):
                return

    def _write(self) -> None:
        assert self._client is not None
        self._client.loop_write()

    def _misc(self) -> None:
        self._misc_timer = None
        assert self._client is not None
        if self._client.loop_misc() == MQTTErrorCode.MQTT_ERR_SUCCESS and self.fd is not None and self._loop:
            self._misc_timer = self._loop.call_later(1, self._misc)
