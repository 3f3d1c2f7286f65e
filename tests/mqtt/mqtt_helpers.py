"""MQTT test helpers: a real mosquitto (loopback, free port, temp config), a wire sniffer, waits."""

from __future__ import annotations

import asyncio
import getpass
import json
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

MOSQUITTO = "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


class Mosquitto:
    """One mosquitto process; `stop()` + `start()` restarts it on the same port.

    Persistence is on, so persistent sessions (clean_session=False) survive a restart, as
    they do on a real installation.
    """

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.conf = workdir / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {workdir}/\n"
            f"log_dest file {workdir}/mosquitto.log\n"
            "log_type all\n"
            # mosquitto started as root drops to user "mosquitto", who cannot write the temp dir
            f"user {getpass.getuser()}\n"
        )
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_for_port(self.port)
        except TimeoutError:
            self.stop()
            raise

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None

    def log(self) -> str:
        path = self.workdir / "mosquitto.log"
        return path.read_text(errors="replace") if path.exists() else ""


class Sniffer:
    """A separate paho client (own thread) that records what goes over the wire."""

    def __init__(self, port: int, topics: list[str], client_id: str | None = None, clean: bool = True) -> None:
        self.messages: list[tuple[str, bytes, bool]] = []
        self._cond = threading.Condition()
        self._topics = topics
        self.client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"sniffer-{time.monotonic_ns()}",
            clean_session=clean,
        )
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self._subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.connect("127.0.0.1", port, keepalive=10)
        self.client.loop_start()
        if not self._subscribed.wait(10):
            raise TimeoutError("sniffer did not subscribe")

    def _on_connect(self, client, userdata, flags, reason, properties) -> None:
        client.subscribe([(t, 1) for t in self._topics])

    def _on_message(self, client, userdata, msg) -> None:
        with self._cond:
            self.messages.append((msg.topic, bytes(msg.payload), bool(msg.retain)))
            self._cond.notify_all()

    def publish(self, topic: str, payload: Any, retain: bool = False, qos: int = 1) -> None:
        if isinstance(payload, (dict, list)):
            payload = json.dumps(payload)
        self.client.publish(topic, payload, qos=qos, retain=retain).wait_for_publish(10)

    def on(self, topic: str) -> list[bytes]:
        with self._cond:
            return [p for t, p, _ in self.messages if paho.topic_matches_sub(topic, t)]

    async def wait_for(self, topic: str, predicate=lambda payload: True, timeout: float = 10.0) -> bytes:
        """The first message on `topic` (filter) whose payload satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for payload in self.on(topic):
                if predicate(payload):
                    return payload
            await asyncio.sleep(0.02)
        raise TimeoutError(f"no matching message on {topic}; saw {self.messages[-10:]}")

    def clear(self) -> None:
        with self._cond:
            self.messages.clear()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def json_with(**fields: Any):
    """A predicate: the payload is JSON holding these field values."""

    def check(payload: bytes) -> bool:
        try:
            data = json.loads(payload)
        except ValueError:
            return False
        return isinstance(data, dict) and all(data.get(k) == v for k, v in fields.items())

    return check


async def eventually(predicate, timeout: float = 10.0, interval: float = 0.02):
    """Wait until `predicate()` is truthy; return its value (fails the test on timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)


def diagnose(client: Any, broker: Mosquitto) -> str:
    """What a failed reconnect assertion should show: the client's state and the broker's log."""
    task = client._reconnect_task
    task_state = "none" if task is None else ("done" if task.done() else "running")
    if task is not None and task.done() and not task.cancelled() and task.exception():
        task_state += f" with {task.exception()!r}"
    log_tail = "\n".join(broker.log().splitlines()[-40:])
    return (f"connected={client.connected} connects={client.connect_count} socket={client._socket.fd} "
            f"reconnect task {task_state}; outbox {len(client._outbox)}\n--- mosquitto log ---\n{log_tail}")
