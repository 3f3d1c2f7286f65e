"""The hub's home tools (the same ToolRegistry the agent uses) driving MQTT-discovered devices."""

from __future__ import annotations

import json

import pytest

from hub.home.catalogue import build_home_tools
from hub.home.entities import EntityStore
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.backends.mqtt.devices import MqttDevices
from hub.home.resolve import EntityResolver
from hub.core.tools import ToolContext, ToolRegistry
from hub.transport.mqtt_client import BrokerSettings, MqttClient
from hub.core.messages import ToolCall
from mqtt.mqtt_helpers import eventually

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def home(mosquitto):
    broker = BrokerSettings("127.0.0.1", mosquitto.port)
    client = MqttClient(broker)
    store = EntityStore()
    devices = MqttDevices(client, store)
    await devices.start()
    await client.start()
    demo = MqttDemoHome.on_broker(broker, travel_seconds=1.0)
    await demo.start()
    registry = ToolRegistry()
    for tool in build_home_tools(store, EntityResolver(store)):
        registry.register(tool)
    await eventually(lambda: (e := store.get("climate.thermostat")) and e.state == "heat")
    yield store, registry, demo
    await demo.stop()
    await devices.stop()
    await client.stop()


async def call(registry: ToolRegistry, name: str, **arguments):
    return await registry.call(ToolCall(name, arguments), ToolContext(conversation_id="t", language="en"))


async def test_turn_on_tool_switches_the_desk_lamp_on_over_mqtt(home, sniffer_factory):
    store, registry, demo = home
    sniffer = sniffer_factory(["bolt_demo/desk_lamp/set"])
    await eventually(lambda: store.get("light.desk_lamp").state == "off")
    result = await call(registry, "turn_on", entity_id="light.desk_lamp")
    assert result.ok, result.data
    assert await sniffer.wait_for("bolt_demo/desk_lamp/set") == b"ON"
    await eventually(lambda: store.get("light.desk_lamp").state == "on")
    assert demo.device("desk_lamp").on


async def test_set_light_set_position_set_temperature_and_turn_on_a_cover(home, sniffer_factory):
    store, registry, demo = home
    sniffer = sniffer_factory(["bolt_demo/#"])
    result = await call(registry, "set_light", entity_id="light.kitchen_light", brightness=50, color="red")
    assert result.ok, result.data
    command = json.loads(await sniffer.wait_for("bolt_demo/kitchen_light/set"))
    assert command == {"state": "ON", "brightness": 128, "color": {"r": 255, "g": 0, "b": 0}, "color_mode": "rgb"}

    # the desk lamp has no color topic: the tool refuses before anything is sent
    result = await call(registry, "set_light", entity_id="light.desk_lamp", color="blue")
    assert not result.ok and result.data["error"] == "unsupported"

    result = await call(registry, "set_position", entity_id="cover.bedroom_blinds", position=40)
    assert result.ok, result.data
    assert await sniffer.wait_for("bolt_demo/bedroom_blinds/position/set") == b"40"
    await eventually(lambda: store.get("cover.bedroom_blinds").attributes.get("current_position") == 40)

    result = await call(registry, "set_temperature", entity_id="climate.thermostat", temperature=23)
    assert result.ok, result.data
    await eventually(lambda: store.get("climate.thermostat").attributes.get("temperature") == 23)

    result = await call(registry, "set_temperature", entity_id="climate.thermostat", temperature=45)
    assert not result.ok  # outside the thermostat's 10–28 °C: refused, nothing sent
    assert b"45" not in b"".join(sniffer.on("bolt_demo/thermostat/target/set"))

    result = await call(registry, "turn_on", entity_id="cover.garage_door")
    assert result.ok, result.data
    assert await sniffer.wait_for("bolt_demo/garage_door/set") == b"OPEN"
    await eventually(lambda: store.get("cover.garage_door").state == "open")
