"""No broker, no Home Assistant: the hub brings its own broker (amqtt) and the demo home."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from hub.config import validate
from hub.home.entities import EntityStore
from hub.interfaces.embedded_broker import EmbeddedBroker, EmbeddedBrokerError
from hub.interfaces.mqtt_stack import MqttStack
from hub.settings import RuntimeSettings
from mqtt.mqtt_helpers import Sniffer, eventually, free_port, json_with
from mqtt.fake_agent import FakeAgent

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def not_in_an_addon(monkeypatch):
    monkeypatch.delenv("SUPERVISOR_TOKEN", raising=False)


async def test_bare_hub_serves_mqtt_and_drives_the_demo_home_end_to_end(tmp_path):
    port = free_port()
    config = validate({"mqtt_port": port, "data_dir": str(tmp_path)})
    settings = RuntimeSettings(config, tmp_path / "settings.json")
    store = EntityStore()
    agent = FakeAgent(settings, store)
    stack = MqttStack(config, store=store, settings=settings, agent=agent, demo_travel_seconds=0.5)
    await stack.start()
    sniffer = None
    try:
        assert stack.embedded is not None and stack.demo is not None and stack.client.connected
        await eventually(lambda: (e := store.get("light.desk_lamp")) and e.state == "off")
        assert len([e for e in store.all() if e.source == "mqtt"]) == 12

        # the broker runs on this loop: the (blocking, threaded) test client must not block it
        sniffer = await asyncio.to_thread(Sniffer, port, ["bolt_hub/bolt_hub/#"])
        await asyncio.to_thread(sniffer.publish, "bolt_hub/bolt_hub/ask", {"text": "turn on light.desk_lamp", "id": "e2e"})
        reply = json.loads(await sniffer.wait_for("bolt_hub/bolt_hub/reply", json_with(id="e2e")))
        assert reply["ok"] and reply["tool_calls"][0]["ok"]
        await eventually(lambda: store.get("light.desk_lamp").state == "on")
        assert stack.demo.device("desk_lamp").on
    finally:
        if sniffer:
            await asyncio.to_thread(sniffer.close)
        await stack.stop()
    # the port is free again
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


async def test_taken_port_is_a_clear_error_and_the_hub_goes_on_without_mqtt(tmp_path, caplog):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        with pytest.raises(EmbeddedBrokerError, match="taken"):
            await EmbeddedBroker(port).start()
        config = validate({"mqtt_port": port})
        stack = MqttStack(config, store=EntityStore(), settings=RuntimeSettings(config), agent=FakeAgent())
        await stack.start()
        assert not stack.enabled
        assert "MQTT is off" in caplog.text
        await stack.stop()


async def test_with_home_assistant_but_no_broker_mqtt_is_off(tmp_path):
    config = validate({"ha_url": "http://127.0.0.1:1", "ha_token": "x"})
    stack = MqttStack(config, store=EntityStore(), settings=RuntimeSettings(config), agent=FakeAgent())
    await stack.start()
    assert not stack.enabled and stack.embedded is None
    await stack.stop()


async def test_embedded_broker_sends_retained_messages_only_for_own_subscriptions():
    """Guards the workaround for amqtt 0.12.1, which sent every connecting client the retained
    messages of all topics anyone had subscribed to."""
    broker = EmbeddedBroker(0)
    await broker.start()
    sniffer = None
    try:
        owner = await asyncio.to_thread(Sniffer, broker.port, ["private/#"])
        await asyncio.to_thread(owner.publish, "private/secret", "retained", True)
        await owner.wait_for("private/secret")
        sniffer = await asyncio.to_thread(Sniffer, broker.port, ["public/#"])
        await asyncio.to_thread(sniffer.publish, "public/marker", "m")
        await sniffer.wait_for("public/marker")
        assert [t for t, _, _ in sniffer.messages] == ["public/marker"]
        await asyncio.to_thread(owner.close)
    finally:
        if sniffer:
            await asyncio.to_thread(sniffer.close)
        await broker.stop()
