"""No broker, no Home Assistant: the hub brings its own broker (amqtt) and the demo home."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from hub.config import ConfigError, validate
from hub.options import hub_options
from hub.home.entities import EntityStore
from hub.transport import embedded_broker
from hub.transport.embedded_broker import EmbeddedBroker, EmbeddedBrokerError
from hub.mqtt_stack import MqttStack
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
    settings = RuntimeSettings(hub_options(config).settings, tmp_path / "settings.json")
    store = EntityStore()
    agent = FakeAgent(settings, store)
    stack = MqttStack(hub_options(config).mqtt, store=store, settings=settings, agent=agent, demo_travel_seconds=0.5)
    await stack.start()
    sniffer = None
    try:
        assert stack.embedded is not None and stack.demo is not None and stack.client.connected
        await eventually(lambda: (e := store.get("light.desk_lamp")) and e.state == "off")
        assert len([e for e in store.all() if e.source == "mqtt"]) == 14

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
    # the listener is gone: a hub started again binds the port (with SO_REUSEADDR, as asyncio's
    # listeners do: the broker's closed connections may sit in TIME_WAIT on it for a minute)
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()


async def test_a_port_held_by_another_program_is_waited_for_then_a_clear_error(tmp_path, monkeypatch):
    """The hub never goes on with another home than the one asked for (issue #17 point 11)."""
    monkeypatch.setattr(embedded_broker, "BIND_WAIT_S", 1.0)
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(EmbeddedBrokerError, match="taken"):
            await EmbeddedBroker(port).start()
        assert time.monotonic() - started >= 1.0, "it waited for the port first"
        config = validate({"mqtt_port": port})
        stack = MqttStack(hub_options(config).mqtt, store=EntityStore(), settings=RuntimeSettings(hub_options(config).settings), agent=FakeAgent())
        with pytest.raises(ConfigError, match=f"mqtt_port: the embedded MQTT broker cannot start: port 127.0.0.1:{port} is taken"):
            await stack.start()
        await stack.stop()


async def test_a_port_freed_while_waiting_is_taken(tmp_path, monkeypatch):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    port = blocker.getsockname()[1]
    asyncio.get_running_loop().call_later(0.8, blocker.close)  # a previous hub that finishes stopping
    broker = EmbeddedBroker(port, bind_wait_s=10)
    await broker.start()
    try:
        sniffer = await asyncio.to_thread(Sniffer, port, ["x/#"])
        await asyncio.to_thread(sniffer.close)
    finally:
        await broker.stop()


async def test_with_home_assistant_but_no_broker_mqtt_is_off(tmp_path):
    config = validate({"ha_url": "http://127.0.0.1:1", "ha_token": "x"})
    stack = MqttStack(hub_options(config).mqtt, store=EntityStore(), settings=RuntimeSettings(hub_options(config).settings), agent=FakeAgent())
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
