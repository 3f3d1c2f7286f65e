"""`bolt-hub serve` on its embedded defaults, as a newcomer runs it: every interface answers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import paho.mqtt.client as mqtt
import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def hub(tmp_path: Path):
    ports = {"wyoming_port": free_port(), "http_port": free_port(), "mqtt_port": free_port()}
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOLT_HUB_") and k != "SUPERVISOR_TOKEN"}
    env.update({f"BOLT_HUB_{k.upper()}": str(v) for k, v in ports.items()})
    env.update(BOLT_HUB_DATA_DIR=str(tmp_path / "state"), BOLT_HUB_API_TOKEN="test-token",
               BOLT_HUB_ZEROCONF="false", BOLT_HUB_TURN_TIMEOUT="240")
    log = open(tmp_path / "hub.log", "wb")
    process = subprocess.Popen([sys.executable, "-m", "hub", "serve"], env=env, stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, (tmp_path / "hub.log").read_text()
        try:
            socket.create_connection(("127.0.0.1", ports["http_port"]), 0.5).close()
            break
        except OSError:
            time.sleep(0.3)
    yield process, ports, tmp_path / "hub.log"
    if process.poll() is None:
        process.kill()
    log.close()


async def test_serve_answers_on_wyoming_rest_and_mqtt_and_stops_cleanly(hub) -> None:
    process, ports, log_path = hub
    base = f"http://127.0.0.1:{ports['http_port']}"
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{base}/health") as response:
            assert response.status == 200
        async with session.post(f"{base}/api/ask", json={"text": "turn on the desk lamp"}) as response:
            assert response.status == 401
        async with session.post(f"{base}/api/ask", json={"text": "turn on the desk lamp"},
                                headers={"Authorization": "Bearer test-token"}) as response:
            result = await response.json()
        assert result["ok"] and result["tool_calls"][0]["arguments"] == {"entity_id": "light.desk_lamp"}
        assert result["tool_calls"][0]["result"]["state"] == "on"

    async with AsyncTcpClient("127.0.0.1", ports["wyoming_port"]) as client:
        await client.write_event(Describe().event())
        assert (await asyncio.wait_for(client.read_event(), 10)).type == "info"
    async with AsyncTcpClient("127.0.0.1", ports["wyoming_port"]) as client:
        await client.write_event(Transcript(text="turn off the desk lamp").event())
        while (event := await asyncio.wait_for(client.read_event(), 60)).type != "handled":
            assert event.type in ("handled-start", "handled-chunk"), event
        assert "Desk Lamp" in event.data["text"]

    # the embedded broker: an automation asks over MQTT and gets the reply with its id
    replies: list[dict] = []
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.on_message = lambda c, u, m: replies.append(json.loads(m.payload))
    client.connect("127.0.0.1", ports["mqtt_port"])
    client.subscribe("bolt_hub/+/reply")
    client.loop_start()
    try:
        await asyncio.sleep(0.5)
        client.publish("bolt_hub/bolt_hub/ask", json.dumps({"text": "turn on the kitchen light", "id": "a1"}))
        for _ in range(200):
            if any(r.get("id") == "a1" for r in replies):
                break
            await asyncio.sleep(0.1)
    finally:
        client.loop_stop()
        client.disconnect()
    reply = next(r for r in replies if r.get("id") == "a1")
    assert reply["ok"], reply

    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    assert "Traceback" not in log_path.read_text(errors="replace")
