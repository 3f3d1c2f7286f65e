"""A simulated device/game on the real broker: answers requests on a topic, in its own thread."""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

# request payload → the replies to send, as (topic, payload), in order (none: stay silent)
Answer = Callable[[dict[str, Any]], list[tuple[str, Any]]]


class Responder:
    def __init__(self, port: int, request_topic: str, answer: Answer, delay: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.delay = delay
        self._answer = answer
        self._subscribed = threading.Event()
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"responder-{time.monotonic_ns()}")
        self.client.on_connect = lambda c, *a: c.subscribe(request_topic, 1)
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, keepalive=10)
        self.client.loop_start()
        if not self._subscribed.wait(10):
            raise TimeoutError("responder did not subscribe")

    def _on_message(self, client, userdata, msg) -> None:
        request = json.loads(msg.payload)
        self.requests.append(request)
        replies = self._answer(request)

        def send() -> None:
            for topic, payload in replies:
                client.publish(topic, json.dumps(payload), qos=1)

        if self.delay:
            threading.Timer(self.delay, send).start()
        else:
            send()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
