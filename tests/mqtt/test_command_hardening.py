"""Commands over MQTT that must not act (issue #17 points 2 and 12), against a real mosquitto.

Retained messages on command topics replay at every subscribe, so at every hub start: a retained
"unlock the front door" plus a retained "yes" would open the door each time the hub starts.
Asks that are not usable JSON text get a bad-request reply, never silence.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path

import pytest

from hub.config import validate
from hub.options import hub_options
from hub.home.entities import EntityStore
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.transport.mqtt_client import BrokerSettings
from hub.mqtt_stack import MqttStack
from hub.settings import RuntimeSettings
from mqtt.fake_agent import FakeAgent
from mqtt.mqtt_helpers import Sniffer, json_with
from reliability.served_hub import ServedHub

pytestmark = pytest.mark.timeout(120)

BASE = "bolt_hub/bolt_hub"  # the served hub's topics (instance name "Bolt Hub")
DEEP = ("[" * 30_000 + "]" * 30_000).encode()


async def wait_until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


# the asker's secret and what its asks announce (issue #30 item 1: a "client" name anyone on the
# bus could read and copy confirmed an unlock)
KEY = "kitchen-panel-secret-7f3a"
KEY_SHA256 = hashlib.sha256(KEY.encode()).hexdigest()


@pytest.mark.timeout(300)
async def test_retained_commands_act_on_nothing_at_start_or_restart(mosquitto, tmp_path: Path, smollm_path: Path):
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port), travel_seconds=0.2)
    await demo.start()
    wire = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/reply", f"{BASE}/settings", f"{BASE}/availability"])
    hub = None
    try:
        # left behind by some automation while no hub ran: two asks and a settings command (from
        # one client, as a yes must be to count)
        wire.publish(f"{BASE}/ask", {"text": "unlock the front door", "conversation_id": "door", "id": "r1", "client": "door-automation"}, retain=True)
        wire.publish(f"{BASE}/ask/home", {"text": "yes", "conversation_id": "door", "id": "r2", "client": "door-automation"}, retain=True)
        wire.publish(f"{BASE}/settings/conversational_mode/set", "OFF", retain=True)
        for attempt in ("start", "restart"):
            wire.clear()
            hub = ServedHub(tmp_path, smollm_path, {"mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port}).start()
            await wire.wait_for(f"{BASE}/availability", lambda p: p == b"online", timeout=60)
            ignored = 3 * (1 if attempt == "start" else 2)  # the hub's log file goes on across restarts

            def answered() -> bool:
                return any(json.loads(p).get("id") == "r2" for p in wire.on(f"{BASE}/reply"))

            await wait_until(lambda: answered() or hub.log().count("ignored a retained message on command topic")
                             >= ignored, 60, f"the retained commands to be seen at the {attempt}")
            await asyncio.sleep(2)  # a command taken anyway would have acted by now (the demo lock moves in 0.2 s)
            assert demo.device("front_door").locked, f"the retained asks opened the lock at the {attempt}"
            assert not [p for p in wire.on(f"{BASE}/reply") if json.loads(p).get("id") in ("r1", "r2")]
            settings = json.loads(await wire.wait_for(f"{BASE}/settings", timeout=30))
            assert settings["conversational_mode"] is True, settings
            if attempt == "start":
                hub.stop()
        # the control, on the restarted hub: the same two asks, sent now, do open the lock
        wire.publish(f"{BASE}/ask", {"text": "unlock the front door", "conversation_id": "live", "id": "l1",
                                     "client_key_sha256": KEY_SHA256})
        await wire.wait_for(f"{BASE}/reply", json_with(id="l1"), timeout=60)
        # the probe's repro: a name in the ask is readable by all, so a yes naming it confirms nothing
        wire.publish(f"{BASE}/ask", {"id": "own1", "text": "unlock the front door", "conversation_id": "panel-x",
                                     "client": "kitchen-panel-secret"})
        await wire.wait_for(f"{BASE}/reply", json_with(id="own1"), timeout=60)
        wire.publish(f"{BASE}/ask", {"id": "own2", "text": "yes", "conversation_id": "panel-x", "client": "kitchen-panel-secret"})
        refused = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(id="own2"), timeout=60))
        assert refused["tool_calls"] == [], refused
        # a bystander on the bus read the keyed ask: its name and announced hash confirm nothing
        for n, copied in enumerate(({"client": "door-automation"}, {"client_key_sha256": KEY_SHA256})):
            wire.publish(f"{BASE}/ask", {"text": "yes", "conversation_id": "live", "id": f"b{n}", **copied})
            refused = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(id=f"b{n}"), timeout=60))
            assert refused["tool_calls"] == [], refused
        await asyncio.sleep(1)
        assert demo.device("front_door").locked, "a bystander's copied yes opened the lock"
        wire.publish(f"{BASE}/ask/home", {"text": "yes", "conversation_id": "live", "id": "l2", "client_key": KEY})
        await wire.wait_for(f"{BASE}/reply", json_with(id="l2"), timeout=60)
        await wait_until(lambda: not demo.device("front_door").locked, 30, "the live, confirmed unlock")
    finally:
        if hub is not None:
            hub.stop()
        await asyncio.to_thread(wire.close)
        await demo.stop()


def start_stack(port: int, tmp_path: Path) -> MqttStack:
    config = validate({"instance_name": "Test Hub", "mqtt_host": "127.0.0.1", "mqtt_port": port})
    settings = RuntimeSettings(hub_options(config).settings, tmp_path / "settings.json")
    store = EntityStore()
    stack = MqttStack(hub_options(config).mqtt, store=store, settings=settings, agent=FakeAgent(settings, store))
    stack.fake = stack.agent
    return stack


@pytest.fixture
async def stack(mosquitto, tmp_path: Path):
    stack = start_stack(mosquitto.port, tmp_path)
    await stack.start()
    yield stack
    await stack.stop()


@pytest.mark.parametrize("topic, payload, what", [
    ("ask", b'{"id": "deep", "text": "hi", "x": ' + DEEP + b"}", "nested too deeply"),
    ("greet", b'{"id": "deep", "persona": "home", "x": ' + DEEP + b"}", "nested too deeply"),
    ("ask", b'{"id": "deep", "text": "unlock the \\ud800 front door"}', "lone surrogate"),
    ("greet", b'{"id": "deep", "persona": "\\udfff"}', "lone surrogate"),
    ("tool/turn_on", b'{"id": "deep", "entity_id": "light.\\ud800"}', "lone surrogate"),
], ids=["ask-nested", "greet-nested", "ask-surrogate", "greet-surrogate", "tool-surrogate"])
async def test_unusable_json_gets_a_bad_request_reply(stack, sniffer_factory, topic: str, payload: bytes, what: str):
    base = "bolt_hub/test_hub"
    wire = sniffer_factory([f"{base}/reply", f"{base}/tool/+/result"])
    wire.publish(f"{base}/{topic}", payload)
    answer_topic = f"{base}/{topic}/result" if topic.startswith("tool/") else f"{base}/reply"
    answer = json.loads(await wire.wait_for(answer_topic, json_with(id="deep")))
    assert answer["ok"] is False and answer["error"] == "bad_request", answer
    assert what in answer.get("text", answer.get("message")), answer
    assert stack.fake.requests == []


async def test_retained_commands_are_dropped_with_a_log_line(mosquitto, sniffer_factory, tmp_path: Path, caplog):
    """In-process twin of the served test: a retained ask, greet, tool call and settings command
    waiting on the broker at start do nothing; a live ask right after runs."""
    base = "bolt_hub/test_hub"
    wire = sniffer_factory([f"{base}/reply", f"{base}/tool/+/result"])
    retained = {"ask": {"text": "retained ask", "id": "old"}, "ask/home": {"text": "yes", "id": "old"},
                "greet": {"persona": "home", "id": "old"}, "tool/turn_on": {"entity_id": "light.x", "id": "old"},
                "settings/conversational_mode/set": "OFF", "ask_text/set": "unlock the front door"}
    for topic, payload in retained.items():
        wire.publish(f"{base}/{topic}", payload, retain=True)
    stack = start_stack(mosquitto.port, tmp_path)
    await stack.start()
    try:
        await wait_until(lambda: caplog.text.count("ignored a retained message on command topic") >= len(retained),
                         10, "a log line per retained command")
        wire.publish(f"{base}/ask", {"text": "live ask", "id": "new"})
        await wire.wait_for(f"{base}/reply", json_with(id="new"))
        assert [r.text for r in stack.fake.requests] == ["live ask"]
        assert stack.settings.conversational_mode is True
        assert not [p for p in wire.on(f"{base}/#") if b'"old"' in p]
    finally:
        await stack.stop()
