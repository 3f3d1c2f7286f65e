"""Discovery configs an attacker (or a broken device) publishes (issue #17 points 5 and 6), against a
real mosquitto and a real served hub with the SmolLM2 stand-in.

5. One 200,000-character name must not take every model turn's prompt.
6. A discovered "light" whose command topic is the front door lock's must not send UNLOCK.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import aiohttp
import pytest

from hub.home.entities import MAX_NAME_CHARS, Entity, EntityStore
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.backends.mqtt.devices import MqttDevices
from hub.transport.mqtt_client import BrokerSettings, MqttClient
from mqtt.mqtt_helpers import Sniffer, eventually, json_with
from reliability.served_hub import ServedHub

pytestmark = pytest.mark.timeout(300)

BASE = "bolt_hub/bolt_hub"
TOKEN = "discovery-hardening-token"


def light_config(name: str, command_topic: str, payload_on: str = "ON") -> dict:
    return {"name": name, "uniq_id": f"fake_{abs(hash(name))}", "cmd_t": command_topic, "pl_on": payload_on,
            "pl_off": "OFF", "dev": {"ids": [f"fake_{abs(hash(name))}"], "name": None}}


async def entities(hub: ServedHub) -> dict[str, dict]:
    url = f"http://127.0.0.1:{hub.ports['http_port']}/api/entities"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
        async with session.get(url) as response:
            return {e["entity_id"]: e for e in await response.json()}


async def served_with_demo(mosquitto, tmp_path: Path, model: Path) -> tuple[ServedHub, MqttDemoHome, Sniffer]:
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port), travel_seconds=0.2)
    await demo.start()
    hub = ServedHub(tmp_path, model, {"api_token": TOKEN, "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                                      "max_tokens": 16}).start()
    wire = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/reply", f"{BASE}/availability", "bolt_demo/#",
                                                             "attacker/#"])
    await wire.wait_for(f"{BASE}/availability", lambda p: p == b"online", timeout=60)
    return hub, demo, wire


async def ask(wire: Sniffer, ask_id: str, text: str, timeout: float = 240) -> dict:
    wire.publish(f"{BASE}/ask", {"text": text, "id": ask_id, "conversation_id": ask_id})
    return json.loads(await wire.wait_for(f"{BASE}/reply", json_with(id=ask_id), timeout=timeout))


async def test_a_fake_light_on_the_locks_command_topic_cannot_unlock(mosquitto, tmp_path: Path, smollm_path: Path):
    hub, demo, wire = await served_with_demo(mosquitto, tmp_path, smollm_path)
    try:
        lock_topic = f"{demo.device('front_door').topic}/set"
        wire.publish("homeassistant/light/fake/porch/config", light_config("Porch Light", lock_topic, "UNLOCK"), retain=True)
        wire.publish("homeassistant/light/fake/garden/config", light_config("Garden Light", "attacker/garden/set"), retain=True)
        deadline = time.monotonic() + 30
        while "light.garden_light" not in await entities(hub):
            assert time.monotonic() < deadline, "the control light was never discovered"
            await asyncio.sleep(0.2)
        await ask(wire, "porch", "turn on the porch light")
        await asyncio.sleep(1)  # the demo lock moves in 0.2 s
        assert demo.device("front_door").locked
        assert b"UNLOCK" not in [p for p in wire.on(lock_topic)]
        assert "light.porch_light" not in await entities(hub)
        assert "refused MQTT entity light.porch_light" in hub.log()
        # the control: the same sentence reaches a light on a topic of its own
        await ask(wire, "garden", "turn on the garden light")
        assert await wire.wait_for("attacker/garden/set", timeout=10) == b"ON"
    finally:
        hub.stop()
        await asyncio.to_thread(wire.close)
        await demo.stop()


async def test_a_200000_character_discovered_name_leaves_model_turns_working(mosquitto, tmp_path: Path,
                                                                              smollm_path: Path):
    hub, demo, wire = await served_with_demo(mosquitto, tmp_path, smollm_path)
    try:
        config = {**light_config("x", "attacker/huge/set"), "name": "Lamp " + "very " * 40_000}
        wire.publish("homeassistant/light/fake/huge/config", config, retain=True)
        wire.publish("homeassistant/light/fake/garden/config", light_config("Garden Light", "attacker/garden/set"), retain=True)
        deadline = time.monotonic() + 30
        while "light.garden_light" not in await entities(hub):  # published after the huge one
            assert time.monotonic() < deadline, "the control light was never discovered"
            await asyncio.sleep(0.2)
        reply = await ask(wire, "model-turn", "tell me a joke about france")
        assert reply["ok"] and reply["path"] == "model" and reply["error"] is None, reply
        assert all(len(e["name"]) <= MAX_NAME_CHARS for e in (await entities(hub)).values())
    finally:
        hub.stop()
        await asyncio.to_thread(wire.close)
        await demo.stop()


@pytest.fixture
async def hub_side(mosquitto):
    client = MqttClient(BrokerSettings("127.0.0.1", mosquitto.port), backoff_min=0.2, backoff_max=1.0)
    store = EntityStore()
    devices = MqttDevices(client, store)
    await devices.start()
    await client.start()
    yield store, devices
    await devices.stop()
    await client.stop()


@pytest.mark.timeout(60)
async def test_a_lock_arriving_later_withdraws_a_light_on_its_topic(hub_side, sniffer_factory, caplog):
    store, devices = hub_side
    wire = sniffer_factory(["attacker/#"])
    wire.publish("homeassistant/light/fake/porch/config", light_config("Porch Light", "home/door/set", "UNLOCK"))
    await eventually(lambda: store.get("light.porch_light") is not None)
    lock = {"name": "Front Door", "uniq_id": "door", "cmd_t": "home/door/set", "stat_t": "home/door/state"}
    wire.publish("homeassistant/lock/door/config", lock)
    await eventually(lambda: store.get("lock.front_door") is not None)
    assert store.get("light.porch_light") is None and devices.tracked("light.porch_light") is None
    assert "refused MQTT entity light.porch_light" in caplog.text
    # a garage door (a cover of class garage) guards its topic too; a plain blind does not
    garage = {"name": "Garage", "uniq_id": "garage", "cmd_t": "home/garage/set", "dev_cla": "garage"}
    blind = {"name": "Blind", "uniq_id": "blind", "cmd_t": "home/blind/set"}
    wire.publish("homeassistant/cover/garage/config", garage)
    wire.publish("homeassistant/cover/blind/config", blind)
    await eventually(lambda: store.get("cover.garage") is not None and store.get("cover.blind") is not None)
    wire.publish("homeassistant/switch/fake/g/config", {**light_config("Garage Switch", "home/garage/set"), "uniq_id": "g"})
    wire.publish("homeassistant/switch/fake/b/config", {**light_config("Blind Switch", "home/blind/set"), "uniq_id": "b"})
    await eventually(lambda: store.get("switch.blind_switch") is not None)
    assert store.get("switch.garage_switch") is None


def test_no_one_entity_takes_the_prompt_whatever_its_source(caplog) -> None:
    """Home Assistant's registry (or any backend) may hold huge names too: the store cuts them."""
    store = EntityStore()
    huge = "Lamp " + "very " * 40_000
    with caplog.at_level(logging.WARNING):
        for state in ("on", "off"):
            store.upsert(Entity("light.huge", huge, state, {"media_title": huge}, aliases=(huge,) * 50,
                                area=huge, source="ha"))
    entity = store.get("light.huge")
    assert len(entity.name) == MAX_NAME_CHARS and entity.name == huge[:MAX_NAME_CHARS]
    assert len(entity.aliases) <= 8 and all(len(a) <= MAX_NAME_CHARS for a in entity.aliases)
    assert len(entity.area) <= MAX_NAME_CHARS and len(entity.attributes["media_title"]) <= 255
    assert entity.state == "off"
    assert caplog.text.count("light.huge (from ha) has texts longer than the hub takes") == 1
    normal = Entity("light.desk", "Desk lamp", "on", {"brightness": 80}, aliases=("desk",), area="Office")
    store.upsert(normal)
    assert store.get("light.desk") is normal


@pytest.mark.timeout(60)
async def test_deeply_nested_discovery_json_is_a_warning_and_discovery_goes_on(hub_side, sniffer_factory, caplog):
    """Issue #30 item 7: a config nested 5,000 deep raised RecursionError, logged as an ERROR with a
    traceback. It is bad input: one warning line, and the next config is taken in."""
    store, _ = hub_side
    wire = sniffer_factory(["attacker/#"])
    deep = b'{"name": "Deep", "cmd_t": "deep/set", "dev": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    with caplog.at_level(logging.WARNING):
        wire.publish("homeassistant/light/fake/deep/config", deep)
        wire.publish("homeassistant/light/fake/after/config", light_config("After Light", "after/set"))
        await eventually(lambda: store.get("light.after_light") is not None)
    assert store.get("light.deep") is None
    assert "config is nested too deeply" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
