"""Startup with the MQTT broker not up yet: the hub keeps retrying and serves once it is."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from mqtt.mqtt_helpers import Mosquitto
from reliability.served_hub import MqttAsker, ServedHub, wyoming_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


async def test_hub_started_before_its_broker_answers_mqtt_once_the_broker_is_up(tmp_path: Path, gemma_path: Path) -> None:
    broker = Mosquitto(tmp_path)  # a free port, nothing listening on it yet
    hub = ServedHub(tmp_path, gemma_path, {"mqtt_host": "127.0.0.1", "mqtt_port": broker.port})
    asker = None
    try:
        hub.start()  # returns once HTTP listens: the hub came up without its broker
        async with asyncio.timeout(60):  # and serves meanwhile
            answer = await wyoming_turn(hub.ports["wyoming_port"], "what is the capital of france", "model", "hall")
        assert answer.outcome == "handled", answer
        broker.start()
        asker = MqttAsker(broker.port)
        asker.wait_connected()
        deadline = time.monotonic() + 120
        attempt = 0
        # the hub reconnects on its own schedule: ask again (new id) until a reply comes back
        def late_replies() -> list[dict]:
            return [r for _, r in list(asker.replies) if str(r.get("id")).startswith("late-")]

        while time.monotonic() < deadline and not late_replies():
            attempt += 1
            asker.ask(f"late-{attempt}", "what is the capital of france", conversation_id="late")
            await asker.wait_for([f"late-{attempt}"], 5)
        replies = late_replies()
        assert replies and replies[0]["ok"] and replies[0]["text"].strip(), asker.replies
        # the Wyoming turn answered while the broker was away was kept and published too
        assert any(r.get("source") == "wyoming" for _, r in asker.replies), asker.replies
        assert any(state == "online" for _, state in asker.availability)
        assert hub.process.poll() is None
    finally:
        if asker is not None:
            asker.close()
        hub.stop()
        broker.stop()
    assert "Traceback" not in hub.log()
