"""A real `python -m hub serve` subprocess on free loopback ports, plus the load it is put under.

Shared by the reliability tests and `bench/bench_load.py`: Wyoming clients send transcripts,
MQTT askers publish asks with ids, and a describe poller checks the hub stays responsive.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe

FAST_PATH_TEXTS = ["turn on the desk lamp", "turn off the desk lamp", "turn on the kitchen light",
                   "turn off the kitchen light"]
MODEL_TEXTS = ["what is the capital of france", "tell me a short joke", "how are you today",
               "what day comes after monday", "say something nice"]
# the same in other languages: a request is answered in the language its text is in, whatever
# language the client names (hub.understanding.language)
MODEL_TEXTS_IN = {
    "de": ["was ist die Hauptstadt von Frankreich", "erzähl mir einen kurzen Witz", "wie geht es dir heute",
           "welcher Tag kommt nach Montag", "sag etwas Nettes"],
    "fr": ["quelle est la capitale de la France", "raconte-moi une blague courte", "comment vas-tu aujourd'hui",
           "quel jour vient après lundi", "dis quelque chose de gentil"],
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen | None, timeout: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the hub exited with {process.returncode}:\n"
                               + (log.read_text(errors="replace") if log else ""))
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class ServedHub:
    """`python -m hub serve` with the embedded broker (or `mqtt_host`) on free ports."""

    workdir: Path
    model_path: Path
    options: dict[str, Any] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    @property
    def log_path(self) -> Path:
        return self.workdir / "hub.log"

    @property
    def mqtt_port(self) -> int:
        return int(self.options.get("mqtt_port") or self.ports["mqtt_port"])

    def start(self, wait: bool = True, timeout: float = 180) -> "ServedHub":
        self.ports = {"wyoming_port": free_port(), "http_port": free_port(), "mqtt_port": free_port()}
        options = {**self.ports, "model_path": str(self.model_path), "data_dir": str(self.workdir / "state"),
                   "n_ctx": 4096, "max_tokens": 16, "turn_timeout": 240, "zeroconf": "false",
                   "rate_limit_per_minute": 0, **self.options}
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOLT_HUB_") and k != "SUPERVISOR_TOKEN"}
        env.update({f"BOLT_HUB_{k.upper()}": str(v) for k, v in options.items()})
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "hub", "serve"], env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if wait:  # the Wyoming server opens last, once the model, MQTT and the home are up
            wait_for_port(self.ports["wyoming_port"], self.process, timeout, self.log_path)
        return self

    def rss_kb(self) -> int:
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        if getattr(self, "_log", None):
            self._log.close()


# --- load ---------------------------------------------------------------------------------------


@dataclass
class Answer:
    kind: str  # "fast" | "model"
    channel: str  # "wyoming" | "mqtt"
    outcome: str  # handled | reply | busy | not-handled:<code> | error:<code> | lost
    text: str
    latency_s: float


async def wyoming_turn(port: int, text: str, kind: str, satellite: str, timeout: float = 300) -> Answer:
    """One transcript from its own satellite (satellites of one host otherwise share a conversation)."""
    started = time.monotonic()
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcript(text=text, context={"satellite_id": satellite}).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout)
            if event is None:
                return Answer(kind, "wyoming", "lost", "", time.monotonic() - started)
            if event.type == "handled":
                return Answer(kind, "wyoming", "handled", event.data.get("text", ""), time.monotonic() - started)
            if event.type == "error":  # refused (the port's caps): told, not lost
                return Answer(kind, "wyoming", f"error:{event.data.get('code')}", event.data.get("text", ""),
                              time.monotonic() - started)
            if event.type == "not-handled":
                code = (event.data.get("context") or {}).get("error")
                outcome = "busy" if code == "busy" else f"not-handled:{code}"
                return Answer(kind, "wyoming", outcome, event.data.get("text", ""), time.monotonic() - started)


class MqttAsker:
    """One paho client that publishes asks and collects replies by id, in arrival order."""

    def __init__(self, port: int, base: str = "bolt_hub/bolt_hub") -> None:
        self.base = base
        self.replies: list[tuple[float, dict]] = []
        self.availability: list[tuple[float, str]] = []
        self.events: list[dict] = []
        self._arrived = threading.Condition()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(
            [(f"{base}/reply", 1), (f"{base}/availability", 1), (f"{base}/event", 1)])
        self.client.connect_async("127.0.0.1", port)
        self.client.loop_start()

    def _on_message(self, client, userdata, message) -> None:
        with self._arrived:
            if message.topic.endswith("/availability"):
                self.availability.append((time.monotonic(), message.payload.decode()))
            elif message.topic.endswith("/event"):
                self.events.append(json.loads(message.payload))
            else:
                self.replies.append((time.monotonic(), json.loads(message.payload)))
            self._arrived.notify_all()

    def wait_connected(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.client.is_connected():
            if time.monotonic() > deadline:
                raise TimeoutError("MQTT asker not connected")
            time.sleep(0.1)
        time.sleep(0.3)  # the subscription

    def ask(self, ask_id: str, text: str, conversation_id: str | None = None) -> float:
        payload = {"text": text, "id": ask_id}
        if conversation_id:
            payload["conversation_id"] = conversation_id
        self.client.publish(f"{self.base}/ask", json.dumps(payload), qos=1)
        return time.monotonic()

    def reply_for(self, ask_id: str) -> tuple[float, dict] | None:
        with self._arrived:
            return next(((t, r) for t, r in self.replies if r.get("id") == ask_id), None)

    async def wait_for(self, ask_ids: list[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while any(self.reply_for(i) is None for i in ask_ids) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


async def poll_describe(port: int, stop: asyncio.Event, gaps: list[float], limit_s: float = 5.0) -> None:
    """Describe after describe on fresh connections; each answer's wait goes into `gaps`.

    The next poll is sent only after the answer arrived, or after `limit_s` without one (or with
    another event than `info`): recorded as inf."""
    while not stop.is_set():
        started = time.monotonic()
        try:
            async with AsyncTcpClient("127.0.0.1", port) as client:
                await client.write_event(Describe().event())
                event = await asyncio.wait_for(client.read_event(), limit_s)
                gaps.append(time.monotonic() - started if event is not None and event.type == "info" else float("inf"))
        except (TimeoutError, OSError):
            gaps.append(float("inf"))
        await asyncio.sleep(0.05)


@dataclass
class LoadRound:
    answers: list[Answer]
    conversation_orders: dict[str, list[str]]  # conversation → ask ids in reply order
    expected_orders: dict[str, list[str]]
    describe_gaps: list[float]
    missing: list[str]
    seconds: float


async def run_load(hub: ServedHub, asker: MqttAsker, round_name: str, clients: int = 20, askers: int = 20,
                   timeout: float = 300) -> LoadRound:
    """`clients` Wyoming transcripts and `askers` MQTT asks at once (every third one a model turn).

    MQTT asks come in pairs sharing a conversation, so the replies' order can be checked."""
    started = time.monotonic()
    stop = asyncio.Event()
    gaps: list[float] = []
    poller = asyncio.create_task(poll_describe(hub.ports["wyoming_port"], stop, gaps))

    def pick(i: int) -> tuple[str, str]:
        return ("model", MODEL_TEXTS[i % len(MODEL_TEXTS)]) if i % 3 == 0 else ("fast", FAST_PATH_TEXTS[i % len(FAST_PATH_TEXTS)])

    wyoming = [asyncio.create_task(wyoming_turn(hub.ports["wyoming_port"], text, kind, f"satellite-{i}", timeout))
               for i, (kind, text) in enumerate(map(pick, range(clients)))]
    sent: dict[str, tuple[str, float]] = {}
    expected: dict[str, list[str]] = {}
    for i in range(askers):
        kind, text = pick(i + 1)
        ask_id, conversation = f"{round_name}-{i}", f"{round_name}-conv-{i // 2}"
        sent[ask_id] = (kind, asker.ask(ask_id, text, conversation))
        expected.setdefault(conversation, []).append(ask_id)
    try:
        answers = list(await asyncio.wait_for(asyncio.gather(*wyoming), timeout))
        await asker.wait_for(list(sent), timeout - (time.monotonic() - started))
    finally:
        stop.set()
        await poller
    missing = []
    for ask_id, (kind, sent_at) in sent.items():
        found = asker.reply_for(ask_id)
        if found is None:
            missing.append(ask_id)
            continue
        arrived, reply = found
        error = reply.get("error")
        outcome = "busy" if error == "busy" else f"error:{error}" if error else "reply"
        answers.append(Answer(kind, "mqtt", outcome, reply.get("text") or "", arrived - sent_at))
    orders = {}
    for conversation, ids in expected.items():
        arrivals = sorted((asker.reply_for(i)[0], i) for i in ids if asker.reply_for(i) is not None)
        orders[conversation] = [i for _, i in arrivals]
    return LoadRound(answers, orders, expected, gaps, missing, time.monotonic() - started)
