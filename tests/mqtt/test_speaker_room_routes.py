"""The speaker's room from every route into the real hub (HubApp: agent, fast path, tools): an MQTT
ask over a real mosquitto, a Wyoming transcript from the wyoming library's own client, a REST ask,
on the MQTT demo home. The room comes from a discovered satellite's `suggested_area` (its device's
identifier is the request's device_id), from the `satellites` option, or is said outright.

The model is scripted and never asked: every request here is the fast path's, and a request that
reached the model would fail the turn."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled

from hub.app import HubApp
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.config import validate
from hub.interfaces.http.rest_api import RestApi
from hub.interfaces.wyoming.server import WyomingServer
from hub.transport.mqtt_client import BrokerSettings
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import Sniffer, eventually, json_with

pytestmark = pytest.mark.timeout(180)

BASE = "bolt_hub/bolt_hub"
TOKEN = "room-test-token"
SATELLITE = "kitchen_voice_satellite"  # the discovered satellite's device identifier
SATELLITE_CONFIG = {  # an ESPHome-like satellite: one diagnostic sensor, its device in the kitchen
    "name": "Signal", "unique_id": "kitchen_satellite_signal", "state_topic": "satellite/kitchen/signal",
    "device": {"identifiers": [SATELLITE], "name": "Kitchen satellite", "suggested_area": "Kitchen"},
}


@pytest.fixture
async def hub(mosquitto, tmp_path):
    config = validate({"data_dir": str(tmp_path), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                       "api_token": TOKEN, "rate_limit_per_minute": 0,
                       "satellites": "assist_satellite.bedroom=Bedroom"})
    app = HubApp(config, engine=ScriptedEngine([]))
    await app.start(listeners=False)
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port))
    await demo.start()
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/reply"])
    await asyncio.to_thread(sniffer.publish, "homeassistant/sensor/kitchen_satellite/signal/config",
                            SATELLITE_CONFIG, retain=True)
    try:
        await eventually(lambda: app.store.get("light.kitchen_light") is not None
                         and app.store.get("cover.bedroom_blinds") is not None
                         and any(e.device_id == SATELLITE for e in app.store.all()), timeout=20)
        yield app, demo, sniffer
    finally:
        await asyncio.to_thread(sniffer.publish, "homeassistant/sensor/kitchen_satellite/signal/config", "", retain=True)
        await asyncio.to_thread(sniffer.close)
        await demo.stop()
        await app.stop()


async def test_an_mqtt_ask_from_a_discovered_satellite_acts_in_its_room(hub) -> None:
    app, demo, sniffer = hub
    ask = {"text": "turn on the lights", "id": "room", "language": "en", "device_id": SATELLITE}
    await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", ask)
    reply = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="room"), timeout=60))
    assert reply["ok"] and reply["path"] == "fast_path", reply
    assert [c["arguments"]["entity_id"] for c in reply["tool_calls"]] == ["light.kitchen_light"]
    await eventually(lambda: demo.device("kitchen_light").on, timeout=10)
    assert not demo.device("living_room_lamp").on and not demo.device("desk_lamp").on

    bad = {"text": "turn on the lights", "id": "bad", "area": 7}
    await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", bad)
    error = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="bad"), timeout=10))
    assert error["error"] == "bad_request" and "area" in error["text"]


async def test_a_wyoming_transcript_from_a_mapped_satellite_acts_in_its_room(hub) -> None:
    app, demo, _ = hub
    server = WyomingServer(app.agent, app.options.wyoming, host="127.0.0.1", port=0, discovery=False)
    await server.start()
    try:
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            context = {"conversation_id": "c-bedroom", "device_id": "0123abcd",
                       "satellite_id": "assist_satellite.bedroom"}
            await client.write_event(Transcript("close the blinds in here", language="en", context=context).event())
            while True:
                event = await asyncio.wait_for(client.read_event(), 60)
                assert event is not None
                if Handled.is_type(event.type):
                    break
        assert app.store.get("cover.bedroom_blinds").state in ("closing", "closed")
        assert app.store.get("cover.garage_door").state == "closed"
    finally:
        await server.stop()


async def test_a_rest_ask_with_an_area_acts_there(hub) -> None:
    app, demo, _ = hub
    api = RestApi(app, app.options.http, host="127.0.0.1", port=0)
    await api.start()
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
            body = {"text": "turn on the lights", "language": "en", "area": "Office"}
            async with session.post(f"http://127.0.0.1:{api.port}/api/ask", json=body) as response:
                result = await response.json()
            assert response.status == 200 and result["path"] == "fast_path", result
            assert [c["arguments"]["entity_id"] for c in result["tool_calls"]] == ["light.desk_lamp"]
            async with session.post(f"http://127.0.0.1:{api.port}/api/ask",
                                    json={"text": "turn on the lights", "device_id": ""}) as response:
                refused = await response.json()
            assert response.status == 400 and "device_id" in refused["message"], refused
        await eventually(lambda: demo.device("desk_lamp").on, timeout=10)
        assert not demo.device("kitchen_light").on
    finally:
        await api.stop()
