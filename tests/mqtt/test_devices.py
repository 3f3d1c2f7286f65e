"""MQTT-discovered devices as hub entities, driven through the backend, against a real mosquitto."""

from __future__ import annotations

import json
import logging

import pytest

from hub.home.entities import BackendError, Entity, EntityStore
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.backends.mqtt.devices import MqttDevices
from hub.transport.mqtt_client import BrokerSettings, MqttClient
from mqtt.mqtt_helpers import eventually

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def hub_side(mosquitto):
    """The hub's view: its own client, a store and MqttDevices (nothing else)."""
    client = MqttClient(BrokerSettings("127.0.0.1", mosquitto.port), backoff_min=0.2, backoff_max=1.0)
    store = EntityStore()
    devices = MqttDevices(client, store, ignore_node_ids=["bolt_hub_bolt_hub"])
    await devices.start()
    await client.start()
    yield store, devices, client
    await devices.stop()
    await client.stop()


@pytest.fixture
async def demo_home(mosquitto):
    home = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port), travel_seconds=1.0)
    await home.start()
    yield home
    await home.stop()


DEMO_ENTITIES = {
    "light.desk_lamp": ("Desk Lamp", "Office"),
    "light.living_room_lamp": ("Living Room Lamp", "Living Room"),
    "light.kitchen_light": ("Kitchen Light", "Kitchen"),
    "switch.coffee_maker": ("Coffee Maker", "Kitchen"),
    "fan.bedroom_fan": ("Bedroom Fan", "Bedroom"),
    "cover.garage_door": ("Garage Door", "Garage"),
    "cover.bedroom_blinds": ("Bedroom Blinds", "Bedroom"),
    "lock.front_door": ("Front Door", "Hallway"),
    "climate.thermostat": ("Thermostat", "Living Room"),
    "sensor.thermostat_humidity": ("Thermostat Humidity", "Living Room"),
    "sensor.weather_station_temperature": ("Weather Station Temperature", "Garden"),
    "binary_sensor.weather_station_rain": ("Weather Station Rain", "Garden"),
}


async def test_demo_home_is_discovered_with_names_areas_and_states(hub_side, demo_home):
    store, devices, _ = hub_side
    await eventually(lambda: all(
        (e := store.get(i)) is not None and e.state not in ("unknown", "unavailable") for i in DEMO_ENTITIES
    ))
    for entity_id, (name, area) in DEMO_ENTITIES.items():
        entity = store.get(entity_id)
        assert (entity.name, entity.area, entity.source) == (name, area, "mqtt"), entity_id
    assert store.get("light.desk_lamp").device_id == "bolt_demo_desk_lamp"
    assert store.get("climate.thermostat").state == "heat"
    assert store.get("climate.thermostat").attributes["temperature"] == 21.0
    assert store.get("sensor.thermostat_humidity").state == "45"
    assert store.get("sensor.weather_station_temperature").attributes["unit_of_measurement"] == "°C"
    assert store.get("binary_sensor.weather_station_rain").state == "off"
    assert store.get("lock.front_door").state == "locked"
    assert store.get("cover.garage_door").state == "closed"


async def test_turn_on_the_desk_lamp_through_the_backend(hub_side, demo_home, sniffer_factory):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["bolt_demo/desk_lamp/#"])
    lamp = await eventually(lambda: (e := store.get("light.desk_lamp")) and e.state == "off" and e)
    sniffer.clear()

    await store.backend_for(lamp).call_service(lamp, "turn_on", {"brightness_pct": 40})

    # on the wire: brightness scaled to the device's 0–100 scale, then ON (on_command_type last)
    assert await sniffer.wait_for("bolt_demo/desk_lamp/brightness/set") == b"40"
    assert await sniffer.wait_for("bolt_demo/desk_lamp/set") == b"ON"
    # the device obeyed and reported; the store follows its state topics
    lamp = await eventually(lambda: (e := store.get("light.desk_lamp")) and e.state == "on" and e)
    await eventually(lambda: store.get("light.desk_lamp").attributes.get("brightness") == round(40 * 255 / 100))
    assert demo_home.device("desk_lamp").on

    await store.backend_for(lamp).call_service(lamp, "turn_off", {})
    await eventually(lambda: store.get("light.desk_lamp").state == "off")


async def test_json_light_rgb_light_fan_lock_climate_and_switch_commands(hub_side, demo_home, sniffer_factory):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["bolt_demo/#"])
    await eventually(lambda: all(store.get(i) and store.get(i).state not in ("unknown", "unavailable") for i in DEMO_ENTITIES))

    async def call(entity_id: str, service: str, data: dict) -> None:
        entity = store.get(entity_id)
        await store.backend_for(entity).call_service(entity, service, data)

    await call("light.kitchen_light", "turn_on", {"brightness": 128, "rgb_color": [255, 0, 0]})
    command = json.loads(await sniffer.wait_for("bolt_demo/kitchen_light/set"))
    assert command == {"state": "ON", "brightness": 128, "color": {"r": 255, "g": 0, "b": 0}, "color_mode": "rgb"}
    await eventually(lambda: store.get("light.kitchen_light").attributes.get("rgb_color") == [255, 0, 0])

    await call("light.living_room_lamp", "turn_on", {"rgb_color": [0, 0, 255], "brightness": 255})
    assert await sniffer.wait_for("bolt_demo/living_room_lamp/rgb/set") == b"0,0,255"
    await eventually(lambda: store.get("light.living_room_lamp").attributes.get("rgb_color") == [0, 0, 255])

    await call("fan.bedroom_fan", "turn_on", {"percentage": 50})
    assert await sniffer.wait_for("bolt_demo/bedroom_fan/speed/set") == b"2"  # 50 % of speeds 1–3
    await eventually(lambda: store.get("fan.bedroom_fan").attributes.get("percentage") == 67)

    await call("lock.front_door", "unlock", {})
    assert await sniffer.wait_for("bolt_demo/front_door/set") == b"UNLOCK"
    await eventually(lambda: store.get("lock.front_door").state == "unlocked")

    await call("climate.thermostat", "set_temperature", {"temperature": 22.3})
    assert await sniffer.wait_for("bolt_demo/thermostat/target/set") == b"22.5"  # temp_step 0.5
    await eventually(lambda: store.get("climate.thermostat").attributes.get("temperature") == 22.5)
    await call("climate.thermostat", "turn_off", {})
    await eventually(lambda: store.get("climate.thermostat").state == "off")

    await call("switch.coffee_maker", "turn_on", {})
    await eventually(lambda: store.get("switch.coffee_maker").state == "on")


async def test_bad_service_data_is_refused_and_nothing_is_sent(hub_side, demo_home, sniffer_factory):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["bolt_demo/+/+/set", "bolt_demo/+/set"])
    await eventually(lambda: store.get("climate.thermostat") and store.get("climate.thermostat").state == "heat")
    sniffer.clear()
    thermostat = store.get("climate.thermostat")
    backend = store.backend_for(thermostat)
    with pytest.raises(BackendError, match="between 10 and 28"):
        await backend.call_service(thermostat, "set_temperature", {"temperature": 90})
    with pytest.raises(BackendError, match="no mode"):
        await backend.call_service(thermostat, "set_hvac_mode", {"hvac_mode": "turbo"})
    lamp = store.get("light.desk_lamp")
    with pytest.raises(BackendError, match="brightness"):
        await backend.call_service(lamp, "turn_on", {"brightness_pct": "lots"})
    with pytest.raises(BackendError, match="does not support"):
        await backend.call_service(store.get("sensor.thermostat_humidity"), "turn_on", {})
    with pytest.raises(BackendError, match="does not support"):
        await backend.call_service(lamp, "open_cover", {})
    with pytest.raises(BackendError, match="does not support"):  # a helper's name is no service
        await backend.call_service(lamp, "optimistic", {"brightness": 10})
    with pytest.raises(BackendError, match="not an MQTT device"):
        await backend.call_service(Entity("light.nowhere", "Nowhere", source="mqtt"), "turn_on", {})
    # a probe message proves the sniffer is live, and that nothing was published before it
    sniffer.publish("bolt_demo/probe/set", "probe")
    await sniffer.wait_for("bolt_demo/probe/set")
    assert [t for t, _, _ in sniffer.messages] == ["bolt_demo/probe/set"]


async def test_the_garage_door_takes_its_time_to_close(hub_side, demo_home):
    store, devices, _ = hub_side
    door = await eventually(lambda: (e := store.get("cover.garage_door")) and e.state == "closed" and e)
    await store.backend_for(door).call_service(door, "open_cover", {})
    await eventually(lambda: store.get("cover.garage_door").state == "opening")
    await eventually(lambda: store.get("cover.garage_door").state == "open", timeout=10)
    assert store.get("cover.garage_door").attributes["current_position"] == 100
    await store.backend_for(door).call_service(door, "turn_off", {})  # HassTurnOff on a cover closes it
    await eventually(lambda: store.get("cover.garage_door").state == "closing")
    positions = set()
    await eventually(lambda: positions.add(store.get("cover.garage_door").attributes["current_position"]) or store.get("cover.garage_door").state == "closed", timeout=10, interval=0.01)
    assert len(positions) > 3  # it passed through intermediate positions

    blinds = store.get("cover.bedroom_blinds")
    await store.backend_for(blinds).call_service(blinds, "set_cover_position", {"position": 30})
    await eventually(lambda: store.get("cover.bedroom_blinds").attributes.get("current_position") == 30 and store.get("cover.bedroom_blinds").state == "open")


async def test_a_light_announced_by_the_test_with_abbreviations_and_base_topic(hub_side, sniffer_factory):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["lab/porch/#"])
    sniffer.publish(
        "homeassistant/light/lab/porch/config",
        {
            "~": "lab/porch",
            "name": "Porch Light",
            "uniq_id": "lab-porch-1",
            "cmd_t": "~/cmd",
            "stat_t": "~/status",
            "stat_val_tpl": "{{ value_json.power }}",
            "pl_on": "1",
            "pl_off": "0",
            "bri_cmd_t": "~/dim",
            "bri_cmd_tpl": "{\"level\": {{ value }}}",
            "bri_scl": 1000,
            "dev": {"ids": "lab-porch", "sa": "Porch"},
        },
        retain=True,
    )
    porch = await eventually(lambda: store.get("light.porch_light"))
    assert (porch.name, porch.area, porch.state) == ("Porch Light", "Porch", "unknown")
    await store.backend_for(porch).call_service(porch, "turn_on", {"brightness": 51})
    assert json.loads(await sniffer.wait_for("lab/porch/dim")) == {"level": 200}
    assert await sniffer.wait_for("lab/porch/cmd") == b"1"
    sniffer.publish("lab/porch/status", {"power": "1"})
    await eventually(lambda: store.get("light.porch_light").state == "on")
    sniffer.publish("lab/porch/status", {"power": "0"})
    await eventually(lambda: store.get("light.porch_light").state == "off")
    # a state the config does not define is ignored, with the last good state kept
    sniffer.publish("lab/porch/status", {"power": "sideways"})
    sniffer.publish("lab/porch/status", "not json")
    sniffer.publish("lab/porch/status", {"power": "1"})
    await eventually(lambda: store.get("light.porch_light").state == "on")

    # an empty retained config removes the entity
    sniffer.publish("homeassistant/light/lab/porch/config", "", retain=True)
    await eventually(lambda: store.get("light.porch_light") is None)


MALFORMED = [
    ("homeassistant/light/bad/notjson/config", b"{not json"),
    ("homeassistant/light/bad/array/config", b"[1, 2, 3]"),
    ("homeassistant/switch/bad/nocommand/config", json.dumps({"name": "No Command", "stat_t": "x/state"}).encode()),
    ("homeassistant/light/bad/wrongtype/config", json.dumps({"name": "Wrong", "cmd_t": 42, "bri_scl": "big"}).encode()),
    ("homeassistant/light/bad/wildcard/config", json.dumps({"name": "Wild", "cmd_t": "a/+/set"}).encode()),
    ("homeassistant/light/bad/badtemplate/config", json.dumps({"name": "Tpl", "cmd_t": "a/set", "stat_t": "a/s", "stat_val_tpl": "{{ value_json. }"}).encode()),
    ("homeassistant/sensor/bad/huge/config", json.dumps({"name": "Huge", "stat_t": "a/s", "pad": "x" * 300_000}).encode()),
    ("homeassistant/device/bad_device/config", json.dumps({"dev": {"ids": ["d"]}, "cmps": "nope"}).encode()),
    ("homeassistant/light/bad/template_schema/config", json.dumps({"schema": "template", "name": "T", "cmd_t": "a"}).encode()),
]


async def test_malformed_discovery_is_rejected_with_a_warning_and_changes_nothing(hub_side, sniffer_factory, caplog):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["lab/#"])
    good = {"name": "Good Switch", "uniq_id": "good", "cmd_t": "lab/good/set", "stat_t": "lab/good/state"}
    sniffer.publish("homeassistant/switch/lab/good/config", good, retain=True)
    sniffer.publish("lab/good/state", "ON", retain=True)
    await eventually(lambda: store.get("switch.good_switch") and store.get("switch.good_switch").state == "on")
    before = list(store.all())
    version = store.version

    caplog.set_level(logging.WARNING, logger="hub.backends.mqtt.devices")
    for topic, payload in MALFORMED:
        sniffer.publish(topic, payload)
    # an invalid update of the good switch keeps the good one as it was
    sniffer.publish("homeassistant/switch/lab/good/config", {"name": "Good Switch", "cmd_t": ["not", "a", "topic"]})
    await eventually(lambda: len([r for r in caplog.records if "rejected MQTT" in r.getMessage()]) >= len(MALFORMED) + 1)
    assert list(store.all()) == before
    assert store.version == version
    messages = " ".join(r.getMessage() for r in caplog.records)
    for needle in ("not JSON", "not a JSON object", "command_topic", "exceeds", "template-schema", "wildcards"):
        assert needle in messages, needle

    # the good switch still works
    switch = store.get("switch.good_switch")
    await store.backend_for(switch).call_service(switch, "turn_off", {})
    assert await sniffer.wait_for("lab/good/set") == b"OFF"


async def test_device_based_discovery_updates_and_removal(hub_side, sniffer_factory):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["lab/#"])
    config = {
        "dev": {"ids": ["multi-1"], "name": "Multi", "sa": "Lab"},
        "o": {"name": "test"},
        "stat_t": "lab/multi/state",
        "cmps": {
            "relay": {"p": "switch", "name": "Relay", "uniq_id": "multi-relay", "cmd_t": "lab/multi/relay/set", "val_tpl": "{{ value_json.relay }}"},
            "temp": {"p": "sensor", "name": "Temp", "uniq_id": "multi-temp", "val_tpl": "{{ value_json.temp }}"},
            "cam": {"p": "camera", "name": "Cam", "uniq_id": "multi-cam", "t": "lab/multi/cam"},
        },
    }
    sniffer.publish("homeassistant/device/multi-1/config", config, retain=True)
    sniffer.publish("lab/multi/state", {"relay": "ON", "temp": 21.5}, retain=True)
    await eventually(lambda: store.get("switch.multi_relay") and store.get("switch.multi_relay").state == "on")
    await eventually(lambda: store.get("sensor.multi_temp") and store.get("sensor.multi_temp").state == "21.5")
    assert store.get("switch.multi_relay").area == "Lab"
    assert not any(e.entity_id.startswith("camera.") for e in store.all())

    # dropping a component from `cmps` removes just that entity
    del config["cmps"]["temp"]
    sniffer.publish("homeassistant/device/multi-1/config", config, retain=True)
    await eventually(lambda: store.get("sensor.multi_temp") is None)
    assert store.get("switch.multi_relay") is not None
    # an empty payload removes the whole device
    sniffer.publish("homeassistant/device/multi-1/config", "", retain=True)
    await eventually(lambda: store.get("switch.multi_relay") is None)


async def test_the_hub_ignores_its_own_discovery(hub_side, sniffer_factory):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["lab/#"])
    sniffer.publish(
        "homeassistant/device/bolt_hub_bolt_hub/config",
        {"dev": {"ids": ["bolt_hub_bolt_hub"], "name": "Bolt Hub"}, "o": {"name": "bolt-hub"},
         "cmps": {"conv": {"p": "switch", "name": "Conversational mode", "uniq_id": "c", "cmd_t": "bolt_hub/x/set"}}},
    )
    sniffer.publish("homeassistant/switch/lab/marker/config", {"name": "Marker", "cmd_t": "lab/marker/set"})
    await eventually(lambda: store.get("switch.marker"))
    assert store.get("switch.bolt_hub_conversational_mode") is None


async def test_one_device_one_entity_home_assistant_wins(hub_side, sniffer_factory):
    store, devices, _ = hub_side
    sniffer = sniffer_factory(["lab/#"])
    # HA already has the porch light (same entity id): the MQTT one is not added
    store.upsert(Entity("light.porch", "Porch", state="off", source="ha"))
    sniffer.publish("homeassistant/light/lab/porch/config", {"name": "Porch", "cmd_t": "lab/porch/set", "dev": {"ids": ["porch-dev"], "name": None}})
    # HA learns of the hall light's device later: the MQTT entity is withdrawn then
    sniffer.publish("homeassistant/light/lab/hall/config", {"name": "Hall Lamp", "cmd_t": "lab/hall/set", "dev": {"ids": ["hall-dev"]}})
    await eventually(lambda: store.get("light.hall_lamp"))
    assert store.get("light.porch").source == "ha"
    store.upsert(Entity("light.hallway_ceiling", "Hallway ceiling", state="off", source="ha", device_id="hall-dev"))
    await eventually(lambda: store.get("light.hall_lamp") is None)
    # an entity id renamed in HA: same domain and name still make it the same light
    store.upsert(Entity("light.renamed_in_ha", "Garden Spot", state="off", source="ha"))
    sniffer.publish("homeassistant/light/lab/spot/config", {"name": "garden spot", "cmd_t": "lab/spot/set"})
    sniffer.publish("homeassistant/switch/lab/marker/config", {"name": "Marker", "cmd_t": "lab/marker/set"})
    await eventually(lambda: store.get("switch.marker"))
    assert store.get("light.garden_spot") is None
    assert {e.entity_id for e in store.all()} == {"light.porch", "light.hallway_ceiling", "light.renamed_in_ha", "switch.marker"}
    entity = Entity("light.hall_lamp", "Hall Lamp", source="mqtt")
    with pytest.raises(BackendError):
        await devices.backend.call_service(entity, "turn_on", {})


async def test_include_and_exclude_globs_limit_what_the_hub_may_touch(mosquitto, sniffer_factory):
    client = MqttClient(BrokerSettings("127.0.0.1", mosquitto.port))
    store = EntityStore()
    devices = MqttDevices(client, store, include_entities="light.*, lock.*", exclude_entities="lock.front_door")
    await devices.start()
    await client.start()
    home = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port))
    await home.start()
    try:
        await eventually(lambda: store.get("light.desk_lamp") and store.get("light.kitchen_light"))
        assert {e.domain for e in store.all()} == {"light"}
        assert store.get("lock.front_door") is None
    finally:
        await home.stop()
        await devices.stop()
        await client.stop()


async def test_unavailable_devices_and_commands_without_a_broker(hub_side, demo_home, mosquitto):
    store, devices, client = hub_side
    lamp = await eventually(lambda: (e := store.get("light.desk_lamp")) and e.state == "off" and e)
    # the demo home goes away cleanly: it says offline, the entities become unavailable
    await demo_home.stop()
    await eventually(lambda: store.get("light.desk_lamp").state == "unavailable")
    with pytest.raises(BackendError, match="unavailable"):
        await store.backend_for(lamp).call_service(lamp, "turn_on", {})
    await demo_home.start()
    await eventually(lambda: store.get("light.desk_lamp").state == "off")
    # no broker: a command fails at once instead of waiting to surprise someone later
    mosquitto.stop()
    await eventually(lambda: not client.connected)
    with pytest.raises(BackendError, match="not connected"):
        await store.backend_for(lamp).call_service(lamp, "turn_on", {})
    mosquitto.start()
