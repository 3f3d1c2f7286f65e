"""SIGTERM mid-turn: a turn about to end is answered, longer ones end with the spoken "stopping"
reply, availability goes offline, exit 0 well within the 10 s before Docker's SIGKILL."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest

from hub.locales import phrase
from reliability.served_hub import MqttAsker, ServedHub, wyoming_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


async def test_sigterm_mid_turn_answers_the_running_turn_says_offline_and_exits_0(tmp_path: Path, gemma_path: Path) -> None:
    hub = ServedHub(tmp_path, gemma_path).start()
    asker = MqttAsker(hub.mqtt_port)
    try:
        asker.wait_connected()
        # a first turn warms the prompt cache, so the drained turns fit the 8 s drain on a busy box
        warm = await wyoming_turn(hub.ports["wyoming_port"], "say something nice", "model", "warm-up")
        assert warm.outcome == "handled", warm
        asker.ask("d1", "what is the capital of france", conversation_id="conv-d1")
        deadline = time.monotonic() + 60
        while not any(e.get("type") == "turn_started" and e.get("id") == "d1" for e in list(asker.events)):
            assert time.monotonic() < deadline, "the ask never started"
            await asyncio.sleep(0.02)
        assert asker.reply_for("d1") is None, "the turn ended before SIGTERM: nothing to drain"
        hub.process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(hub.process.wait, 30) == 0, hub.log()
        await asyncio.sleep(0.5)  # the last MQTT messages reach the asker
        offline_at = next((t for t, state in asker.availability if state == "offline"), None)
    finally:
        asker.close()
        hub.stop()
    assert offline_at is not None, asker.availability
    assert asker.availability[-1][1] == "offline"
    found = asker.reply_for("d1")
    assert found is not None, "d1 lost at shutdown"
    arrived, reply = found
    assert arrived <= offline_at, "d1 answered after offline"
    # a short turn is usually drained (answered within SHUTDOWN_GRACE_S); on a slow box it may
    # be cut instead, and then it says so
    assert (reply["ok"] and reply["text"].strip()) or reply["text"] == phrase("en", "error.stopping"), reply
    assert "Traceback" not in hub.log()


COUNTING = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,"  # the base 270M model goes on counting: a long generation


async def test_sigterm_with_two_long_turns_in_flight_answers_both_with_stopping_and_exits_0_within_8_s(
        tmp_path: Path, gemma_path: Path) -> None:
    # generations of minutes: only cutting them short can end the hub in time
    hub = ServedHub(tmp_path, gemma_path, {"max_tokens": 4096, "max_reply_chars": 4000, "n_ctx": 4096,
                                           "fast_path": "false"}).start()
    asker = MqttAsker(hub.mqtt_port)
    try:
        asker.wait_connected()
        payload = {"id": "long-de", "text": COUNTING, "conversation_id": "conv-long-de", "language": "de"}
        asker.client.publish(f"{asker.base}/ask", json.dumps(payload), qos=1)
        wyoming = asyncio.create_task(wyoming_turn(hub.ports["wyoming_port"], COUNTING, "model", "sat-long"))
        deadline = time.monotonic() + 60
        while sum(e.get("type") == "turn_started" for e in list(asker.events)) < 2:
            assert time.monotonic() < deadline, "the two turns never started"
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # one generates, the other waits for the model
        assert asker.reply_for("long-de") is None and not wyoming.done(), "a turn ended before SIGTERM"
        signalled = time.monotonic()
        hub.process.send_signal(signal.SIGTERM)
        returncode = await asyncio.to_thread(hub.process.wait, 30)
        took = time.monotonic() - signalled
        answer = await asyncio.wait_for(wyoming, 5)
        await asyncio.sleep(0.5)  # the last MQTT messages reach the asker
        offline_at = next((t for t, state in asker.availability if state == "offline"), None)
    finally:
        asker.close()
        hub.stop()
    assert returncode == 0, hub.log()
    print(f"SIGTERM to exit: {took:.2f} s")
    assert took < 8.0, f"exit took {took:.1f} s"
    assert answer.outcome == "not-handled:stopping" and answer.text == phrase("en", "error.stopping"), answer
    found = asker.reply_for("long-de")
    assert found is not None, "the MQTT ask got no reply at shutdown"
    arrived, reply = found
    assert reply["error"] == "stopping" and reply["text"] == phrase("de", "error.stopping"), reply
    assert offline_at is not None and arrived <= offline_at, (arrived, asker.availability)
    assert "Traceback" not in hub.log()
