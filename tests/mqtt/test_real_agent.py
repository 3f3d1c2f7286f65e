"""The real hub (HubApp: Agent, fast path, tools, SmolLM2) answering over MQTT and driving the
MQTT demo home on a real mosquitto."""

from __future__ import annotations

import asyncio
import json

import pytest

from hub.app import HubApp
from hub.config import validate
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.transport.mqtt_client import BrokerSettings
from mqtt.mqtt_helpers import Sniffer, eventually, json_with

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

BASE = "bolt_hub/bolt_hub"


async def test_real_agent_over_mqtt_turns_on_the_desk_lamp_and_answers(mosquitto, tmp_path):
    config = validate({
        "data_dir": str(tmp_path), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
        "n_ctx": 4096, "max_tokens": 24, "turn_timeout": 240,
    })
    app = HubApp(config)
    await app.start(listeners=False)  # the app's own MQTT stack serves the API on the broker
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port))
    await demo.start()
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/#"])
    try:
        await eventually(lambda: (e := app.store.get("light.desk_lamp")) is not None and e.state == "off", timeout=20)

        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", {"text": "Turn on the desk lamp", "id": "lamp", "language": "en"})
        reply = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="lamp"), timeout=240))
        assert reply["ok"], reply
        assert [c["name"] for c in reply["tool_calls"]] == ["turn_on"]
        assert reply["tool_calls"][0]["arguments"]["entity_id"] == "light.desk_lamp"
        await eventually(lambda: app.store.get("light.desk_lamp").state == "on", timeout=20)
        assert demo.device("desk_lamp").on
        await sniffer.wait_for(f"{BASE}/event", json_with(id="lamp", type="reply"))  # its own topic, own pace
        events = [json.loads(p) for p in sniffer.on(f"{BASE}/event")]
        assert [e["type"] for e in events if e.get("id") == "lamp"] == ["turn_started", "tool_started", "tool_finished", "reply"]

        # a model turn (SmolLM2): whatever it says, the mechanics hold — one reply with our id
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", {"text": "Say hello.", "id": "chat", "conversation_id": "c1"})
        chat = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="chat"), timeout=240))
        assert chat["conversation_id"] == "c1" and chat["path"] == "model"
        assert chat["text"].strip(), chat  # the reply, or the spoken error when the tiny model fails
        assert chat["ok"] or chat["error"], chat
        assert chat["timings"]["model_rounds"] >= 1
        assert len([p for p in sniffer.on(f"{BASE}/reply") if json.loads(p).get("id") == "chat"]) == 1
    finally:
        await asyncio.to_thread(sniffer.close)
        await demo.stop()
        await app.stop()
