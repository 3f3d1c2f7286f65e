"""Delayed commands (HA's HassStartTimer with a `conversation_command`, issue #27): "turn on the
kitchen light in 2 seconds" through the real hub (HubApp: agent, fast path, timers) on a real
mosquitto with the MQTT demo home's devices. The reply says when; when the timer ends, the
command runs as a new turn of the same device and language through the agent (the policy
holds: a lock's command then asks for a yes and does nothing), and its reply is reported on
`<base>/report`. As in Home Assistant, such a timer is no timer to cancel or ask about.

The model is scripted and never asked: every request here is the fast path's."""

from __future__ import annotations

import asyncio
import json

import pytest

from hub.agent.types import TurnRequest
from hub.app import HubApp
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.config import validate
from hub.home.timers import spoken_duration
from hub.locales import phrase
from hub.transport.mqtt_client import BrokerSettings
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import Sniffer, eventually, json_with

pytestmark = pytest.mark.timeout(120)

BASE = "bolt_hub/bolt_hub"


@pytest.fixture
async def hub(mosquitto, tmp_path):
    config = validate({"data_dir": str(tmp_path), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                       "rate_limit_per_minute": 0})
    app = HubApp(config, engine=ScriptedEngine([]))
    await app.start(listeners=False)
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port))
    await demo.start()
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/report"])
    try:
        await eventually(lambda: app.store.get("light.kitchen_light") is not None
                         and getattr(app.store.get("lock.front_door"), "state", None) == "locked", timeout=20)
        yield app, demo, sniffer
    finally:
        await asyncio.to_thread(sniffer.close)
        await demo.stop()
        await app.stop()


async def ask(app: HubApp, text: str, language: str = "en") -> str:
    assert app.agent is not None
    result = await app.agent.ask(TurnRequest(text, language=language, device_id="kitchen-satellite"))
    assert result.path == "fast_path", (text, result)
    return result.reply


@pytest.mark.parametrize("text, language", [
    ("turn on the kitchen light in 2 seconds", "en"),
    ("Allume la lumière de la cuisine dans 2 secondes", "fr"),
])
async def test_a_delayed_command_runs_when_its_timer_ends(hub, text, language) -> None:
    app, demo, sniffer = hub
    assert not demo.device("kitchen_light").on
    reply = await ask(app, text, language)
    assert reply == phrase(language, "timer.command_set", duration=spoken_duration(2, language))
    assert await ask(app, "cancel all timers") == phrase("en", "timer.cancelled_all", count=0)  # none to cancel
    await asyncio.sleep(0.5)
    assert not demo.device("kitchen_light").on, "not before its time"
    await eventually(lambda: demo.device("kitchen_light").on, timeout=10)
    report = json.loads(await sniffer.wait_for(f"{BASE}/report", json_with(kind="command"), timeout=10))
    assert report["device_id"] == "kitchen-satellite" and report["language"] == language
    assert report["data"]["command"].lower().startswith(("turn on", "allume"))
    assert "Kitchen Light" in report["text"]


async def test_a_delayed_command_is_held_by_the_policy_when_it_runs(hub) -> None:
    app, demo, sniffer = hub
    await ask(app, "unlock the front door in 1 second")
    report = json.loads(await sniffer.wait_for(f"{BASE}/report", json_with(kind="command"), timeout=10))
    assert report["text"].endswith("?") and "Front Door" in report["text"], report  # "Do you really want me to …?"
    assert app.store.get("lock.front_door").state == "locked"
    await asyncio.sleep(0.5)
    assert app.store.get("lock.front_door").state == "locked", "a lock waits for a yes"
