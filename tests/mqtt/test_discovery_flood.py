"""A flood of 5,000 retained MQTT discovery configs into a served hub, on the embedded broker and
on mosquitto (issue #30 item 2): the hub takes them all in within 30 s, MQTT asks sent during and
after it get their replies, deleting them is as quick, and the log stays small and has no
tracebacks. On 0.6.0 the embedded broker took 163 s, logged 11.8 MB of PUBACK tracebacks and lost
the reply to an ask sent after the flood."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.transport.mqtt_client import BrokerSettings
from reliability.served_hub import MqttAsker, ServedHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

FLOOD = 5000
TAKE_IN_S = 30  # the bound for taking the flood in
TOKEN = "flood-token"


def entity_count(port: int) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/entities", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return len(json.load(response))


def wait_for_count(port: int, done, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not done(count := entity_count(port)):
        assert time.monotonic() - started < timeout, f"{what}: {count} entities after {timeout} s"
        time.sleep(0.5)
    return time.monotonic() - started


def wait_for_state(port: int, entity_id: str, state: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/entities?domain={entity_id.split('.')[0]}",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
    while time.monotonic() < deadline:
        with urllib.request.urlopen(request, timeout=30) as response:
            if any(e["entity_id"] == entity_id and e["state"] == state for e in json.load(response)):
                return
        time.sleep(0.2)
    raise AssertionError(f"{entity_id} not {state} within {timeout} s")


def reply_to(asker: MqttAsker, ask_id: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _, reply in list(asker.replies):
            if reply.get("id") == ask_id:
                return reply
        time.sleep(0.1)
    raise AssertionError(f"no reply to {ask_id} within {timeout} s")


@pytest.mark.parametrize("broker", ["embedded", "mosquitto"])
async def test_five_thousand_discovered_devices_are_taken_in_while_asks_get_their_replies(
        broker: str, request: pytest.FixtureRequest, tmp_path: Path, smollm_path: Path) -> None:
    demo, options = None, {"api_token": TOKEN}
    if broker == "mosquitto":
        port = request.getfixturevalue("mosquitto").port
        demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", port), travel_seconds=0.2)
        await demo.start()
        options.update({"mqtt_host": "127.0.0.1", "mqtt_port": port})
    hub = ServedHub(tmp_path, smollm_path, options).start()
    asker = publisher = None
    try:
        http = hub.ports["http_port"]
        before = await asyncio.to_thread(wait_for_count, http, lambda n: n > 0, 60, "the demo home")
        before = entity_count(http)
        asker = MqttAsker(hub.mqtt_port)
        await asyncio.to_thread(asker.wait_connected)
        publisher = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        publisher.connect("127.0.0.1", hub.mqtt_port)
        publisher.loop_start()
        for i in range(FLOOD):
            config = {"name": f"Flood Switch {i}", "unique_id": f"flood_{i}", "command_topic": f"flood/{i}/set",
                      "state_topic": f"flood/{i}/state"}
            publisher.publish(f"homeassistant/switch/flood_{i}/config", json.dumps(config), qos=1, retain=True)
            if i == FLOOD // 2:
                asker.ask("during", "turn on the kitchen light")
        took = await asyncio.to_thread(wait_for_count, http, lambda n: n >= before + FLOOD, TAKE_IN_S, "the flood")
        during = await asyncio.to_thread(reply_to, asker, "during", 30)
        assert during["ok"] and [c["name"] for c in during["tool_calls"]] == ["turn_on"], during
        lit = during["tool_calls"][0]["arguments"]["entity_id"]
        # the light has to be on before it is turned off (the demo's lights take travel_seconds)
        await asyncio.to_thread(wait_for_state, http, lit, "on", 30)
        asker.ask("after", "turn off the kitchen light")
        after = await asyncio.to_thread(reply_to, asker, "after", 30)
        assert after["ok"], after
        assert [c["name"] for c in after["tool_calls"]] == ["turn_off"], after
        for i in range(FLOOD):
            publisher.publish(f"homeassistant/switch/flood_{i}/config", b"", qos=1, retain=True)
        removed = await asyncio.to_thread(wait_for_count, http, lambda n: n <= before, TAKE_IN_S, "the deletion")
        print(f"{broker}: {FLOOD} configs taken in in {took:.1f} s, deleted in {removed:.1f} s, "
              f"log {hub.log_path.stat().st_size} bytes")
    finally:
        for client in (publisher, asker.client if asker else None):
            if client is not None:
                client.loop_stop()
                client.disconnect()
        hub.stop()
        if demo is not None:
            await demo.stop()
    log = hub.log()
    assert len(log.encode()) < 1_000_000, f"the log grew to {len(log.encode())} bytes"
    assert "Traceback" not in log, log[-3000:]
