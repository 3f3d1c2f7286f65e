"""The hub's MQTT connection against a real mosquitto: messages, availability, reconnects."""

from __future__ import annotations

import asyncio

import pytest

from hub.transport.mqtt_broker import BrokerSettings, broker_from_options
from hub.transport.mqtt_client import MqttClient
from hub.transport.mqtt_subscriptions import MqttMessage
from hub.config import validate
from hub.options import hub_options
from mqtt.mqtt_helpers import Mosquitto, Sniffer, diagnose

pytestmark = pytest.mark.timeout(60)


def make_client(port: int, **kwargs) -> MqttClient:
    kwargs.setdefault("availability_topic", "hubtest/availability")
    return MqttClient(BrokerSettings("127.0.0.1", port), backoff_min=0.2, backoff_max=1.0, **kwargs)


async def test_round_trip_and_handler_errors_do_not_kill_the_client(mosquitto, sniffer_factory):
    sniffer = sniffer_factory(["hubtest/#"])
    client = make_client(mosquitto.port)
    received: list[MqttMessage] = []

    async def handler(message: MqttMessage) -> None:
        if message.payload == b"boom":
            raise RuntimeError("handler bug")
        received.append(message)

    await client.subscribe("hubtest/in/+", handler)
    await client.start()
    assert client.connected
    await sniffer.wait_for("hubtest/availability", lambda p: p == b"online")

    sniffer.publish("hubtest/in/a", "boom")
    sniffer.publish("hubtest/in/a", "one")
    sniffer.publish("hubtest/in/b", "two")
    for _ in range(100):
        if len(received) == 2:
            break
        await asyncio.sleep(0.05)
    assert [(m.topic, m.payload) for m in received] == [("hubtest/in/a", b"one"), ("hubtest/in/b", b"two")]

    client.publish("hubtest/out", {"x": 1}, qos=1)
    assert await sniffer.wait_for("hubtest/out") == b'{"x":1}'

    await client.stop()
    # a clean stop says offline itself (the broker does not send the will on a clean disconnect)
    await sniffer.wait_for("hubtest/availability", lambda p: p == b"offline")


async def test_unreachable_broker_at_start_then_it_comes_up(tmp_path):
    broker = Mosquitto(tmp_path)
    client = make_client(broker.port)
    client.publish("hubtest/early", "queued before any connection", qos=1, retain=True)
    await client.start(wait=0.5)
    assert not client.connected
    broker.start()
    try:
        assert await client.wait_connected(15)
        # the message queued before the first connection went out on connect (retained, so a
        # subscriber that comes later still sees it)
        sniffer = Sniffer(broker.port, ["hubtest/#"])
        assert await sniffer.wait_for("hubtest/early") == b"queued before any connection"
        await sniffer.wait_for("hubtest/availability", lambda p: p == b"online")
        sniffer.close()
    finally:
        await client.stop()
        broker.stop()


async def test_broker_restart_reconnects_resubscribes_and_flushes_the_outbox(mosquitto, sniffer_factory):
    client = make_client(mosquitto.port)
    received: list[bytes] = []

    async def handler(message: MqttMessage) -> None:
        received.append(message.payload)

    await client.subscribe("hubtest/cmd", handler)
    await client.start()
    assert client.connect_count == 1

    mosquitto.stop()
    for _ in range(100):
        if not client.connected:
            break
        await asyncio.sleep(0.05)
    assert not client.connected
    assert client.publish("hubtest/reply", "sent while the broker was down", qos=1)
    mosquitto.start()
    assert await client.wait_connected(20), diagnose(client, mosquitto)
    assert client.connect_count == 2

    sniffer = sniffer_factory(["hubtest/#"])
    # availability is retained, so a late subscriber sees the re-published "online"
    await sniffer.wait_for("hubtest/availability", lambda p: p == b"online")
    sniffer.publish("hubtest/cmd", "after restart")
    for _ in range(100):
        if received:
            break
        await asyncio.sleep(0.05)
    assert received == [b"after restart"]
    await client.stop()


async def test_announcers_run_on_connect_and_on_home_assistant_birth(mosquitto, sniffer_factory):
    client = make_client(mosquitto.port, birth_topic="hatest/status")
    calls: list[int] = []

    async def announce() -> None:
        calls.append(1)
        client.publish("hubtest/config", "announced", retain=True)

    client.add_announcer(announce)
    await client.start()
    sniffer = sniffer_factory(["hubtest/config"])
    await sniffer.wait_for("hubtest/config")
    assert len(calls) == 1
    sniffer.publish("hatest/status", "offline")
    sniffer.publish("hatest/status", "online")
    for _ in range(100):
        if len(calls) == 2:
            break
        await asyncio.sleep(0.05)
    assert len(calls) == 2
    await client.stop()


async def test_outbox_is_bounded_and_drops_the_oldest(tmp_path):
    client = MqttClient(BrokerSettings("127.0.0.1", 1), outbox_limit=3)
    for i in range(5):
        assert client.publish("t", str(i))
    assert [m[1] for m in client._outbox] == [b"2", b"3", b"4"]
    assert client.publish("t", "x", queue=False) is False


async def test_broker_from_options_and_none_without_options():
    config = validate({"mqtt_host": "broker.lan", "mqtt_port": 8883, "mqtt_username": "u", "mqtt_password": "s3cr3t-pw", "mqtt_tls": True})
    broker = await broker_from_options(hub_options(config).mqtt.broker, environ={})
    assert broker == BrokerSettings("broker.lan", 8883, "u", "s3cr3t-pw", True)
    assert "s3cr3t-pw" not in repr(broker)
    assert await broker_from_options(hub_options(validate({})).mqtt.broker, environ={}) is None


async def test_broker_from_the_supervisor_service(aiohttp_server=None):
    """In the add-on the broker comes from GET /services/mqtt (a local stand-in for the Supervisor)."""
    from aiohttp import web

    seen_tokens: list[str] = []

    async def services_mqtt(request: web.Request) -> web.Response:
        seen_tokens.append(request.headers.get("Authorization", ""))
        return web.json_response(
            {"result": "ok", "data": {"host": "core-mosquitto", "port": 1883, "ssl": False, "username": "addons", "password": "secret", "protocol": "3.1.1"}}
        )

    app = web.Application()
    app.router.add_get("/services/mqtt", services_mqtt)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        broker = await broker_from_options(hub_options(validate({})).mqtt.broker, environ={"SUPERVISOR_TOKEN": "tok"}, supervisor_url=f"http://127.0.0.1:{port}")
    finally:
        await runner.cleanup()
    assert broker == BrokerSettings("core-mosquitto", 1883, "addons", "secret", False)
    assert seen_tokens == ["Bearer tok"]
