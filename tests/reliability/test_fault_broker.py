"""The MQTT broker stopped, or killed, and restarted on the same port while a served hub uses it.

The hub's client promises: reconnect with backoff, re-subscribe, re-announce (discovery and
availability `online`), and keep what it published while the broker was away in its outbox,
sending it after the reconnect. Wyoming does not depend on the broker and keeps answering.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from mqtt.mqtt_helpers import Mosquitto, Sniffer, json_with
from reliability.served_hub import ServedHub, wyoming_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

BASE = "bolt_hub/bolt_hub"
DISCOVERY = "homeassistant/device/bolt_hub_bolt_hub/config"


def kill(broker: Mosquitto) -> None:
    """SIGKILL: no clean shutdown, nothing saved; the broker comes back empty."""
    assert broker.process is not None
    broker.process.kill()
    broker.process.wait(10)
    broker.process = None


async def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)
    return value


def hub_sent(broker: Mosquitto, since: int, topic: str) -> bool:
    """The broker's log (its own record) shows the hub publishing on `topic` after line `since`."""
    return any("Received PUBLISH from bolt-hub-" in line and f"'{topic}'" in line
               for line in broker.log().splitlines()[since:])


def ask(client: Sniffer, ask_id: str, text: str, conversation_id: str) -> None:
    client.publish(f"{BASE}/ask", {"id": ask_id, "text": text, "conversation_id": conversation_id})


def replies(client: Sniffer) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for payload in client.on(f"{BASE}/reply"):
        reply = json.loads(payload)
        found.setdefault(str(reply.get("id")), []).append(reply)
    return found


def started(client: Sniffer, ask_id: str) -> bool:
    return any(json_with(type="turn_started", id=ask_id)(p) for p in client.on(f"{BASE}/event"))


async def test_broker_restarted_mid_turn_and_killed_between_asks_hub_reconnects_and_delivers_its_outbox(
        tmp_path: Path, gemma_path: Path) -> None:
    broker = Mosquitto(tmp_path)
    broker.start()
    hub = ServedHub(tmp_path, gemma_path, {"mqtt_host": "127.0.0.1", "mqtt_port": broker.port}).start()
    asker = None
    try:
        # a persistent session, as an automation's client has: the broker keeps its subscription
        # and the messages for it across a broker restart and while the asker reconnects
        asker = Sniffer(broker.port, [f"{BASE}/reply", f"{BASE}/event", f"{BASE}/availability"],
                        client_id="fault-asker", clean=False)
        asker.client.reconnect_delay_set(0.5, 2)  # paho's default backoff reaches 2 minutes
        await asker.wait_for(f"{BASE}/availability", lambda p: p == b"online", timeout=60)
        ask(asker, "before", "what is the capital of france", "broker")
        await wait_until(lambda: "before" in replies(asker), 180, "a reply before any fault")

        # 1. the broker goes down (stopped, as for an update) while asks are in flight: one
        # running, two queued behind it in its conversation
        inflight = ["inflight-1", "inflight-2", "inflight-3"]
        for ask_id in inflight:
            ask(asker, ask_id, "tell me a short joke", "inflight")
        await wait_until(lambda: started(asker, "inflight-1"), 120, "inflight-1 to start")
        broker.stop()
        # Wyoming keeps answering while the broker is away; those replies wait in the hub's outbox
        during = [await wyoming_turn(hub.ports["wyoming_port"], "what day comes after monday", "x", "sat-1", timeout=300)]
        assert [a.outcome for a in during] == ["handled"], during
        assert all(a.text.strip() for a in during), during
        log_lines = len(broker.log().splitlines())
        broker.start()  # same port, same persistence folder

        # re-announced: availability online and its discovery, sent again after the restart
        await wait_until(lambda: hub_sent(broker, log_lines, f"{BASE}/availability"), 120, "availability online")
        await wait_until(lambda: hub_sent(broker, log_lines, DISCOVERY), 60, "discovery re-announced")
        # every ask received before the stop is answered, those finished meanwhile from the outbox
        await wait_until(lambda: set(inflight) <= set(replies(asker)), 240, "the in-flight asks' replies")
        for ask_id in inflight:
            reply = replies(asker)[ask_id][0]
            assert reply["ok"] and reply["text"].strip(), reply
        wyoming_texts = {r["text"] for r in replies(asker).get("None", []) if r.get("source") == "wyoming"}
        assert {a.text for a in during} <= wyoming_texts, "Wyoming replies made while the broker was away were lost"

        # asks after the restart are answered (the hub subscribed again)
        ask(asker, "after-1", "say something nice", "after")
        await wait_until(lambda: "after-1" in replies(asker), 180, "a reply to an ask after the restart")

        # 2. the broker killed (SIGKILL, nothing saved) between asks, and restarted empty
        kill(broker)
        answer = await wyoming_turn(hub.ports["wyoming_port"], "say something nice", "x", "sat-9", timeout=300)
        assert answer.outcome == "handled", answer
        log_lines = len(broker.log().splitlines())
        broker.start()
        await wait_until(lambda: hub_sent(broker, log_lines, f"{BASE}/availability"), 120, "availability online")
        await wait_until(lambda: hub_sent(broker, log_lines, DISCOVERY), 60, "discovery re-announced")
        await wait_until(lambda: asker.client.is_connected(), 120, "the asker to reconnect")
        deadline = time.monotonic() + 300
        attempt = 0
        while not any(k.startswith("again-") for k in replies(asker)):
            # an ask published before the hub's subscription is back is not heard: ask again
            assert time.monotonic() < deadline, "no ask answered after the second restart"
            attempt += 1
            ask(asker, f"again-{attempt}", "what is the capital of france", "again")
            try:
                await wait_until(lambda: f"again-{attempt}" in replies(asker), 60, "")
            except AssertionError:
                pass
        reply = next(r[0] for k, r in replies(asker).items() if k.startswith("again-"))
        assert reply["ok"] and reply["text"].strip(), reply
        assert hub.process.poll() is None
    finally:
        if asker is not None:
            asker.close()
        hub.stop()
        broker.stop()
    assert "Traceback" not in hub.log()
