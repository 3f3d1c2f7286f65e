"""SIGTERM mid-turn: running turns are drained (bounded), availability goes offline, exit 0."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from reliability.served_hub import MqttAsker, ServedHub, wyoming_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


async def test_sigterm_mid_turn_answers_the_running_turns_says_offline_and_exits_0(tmp_path: Path, gemma_path: Path) -> None:
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
    # the running turn was drained (bounded by SHUTDOWN_DRAIN_S), not cut: it was answered
    assert reply["ok"] and reply["text"].strip(), reply
    assert "Traceback" not in hub.log()
