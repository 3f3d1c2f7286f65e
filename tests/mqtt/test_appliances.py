"""The appliances over real MQTT (issue #27 point 3): discovery of valve, vacuum, lawn_mower, scene,
humidifier, water_heater and button configs as Home Assistant's MQTT integration reads them,
their states, and the commands the hub publishes for them, on a real mosquitto; then the new
device intents said in en, de and fr through the fast path, driving the demo home's valve,
vacuum, fan and colour-temperature light as separate MQTT clients."""

from __future__ import annotations

import json

import pytest

from hub.core.tools import ToolContext, ToolRegistry
from hub.core.messages import ToolCall
from hub.home.catalogue import build_home_tools
from hub.home.entities import BackendError, EntityStore
from hub.home.resolve import EntityResolver
from hub.understanding.fast_path import FastPath
from hub.backends.mqtt.devices import MqttDevices
from hub.transport.mqtt_client import BrokerSettings, MqttClient
from mqtt.mqtt_helpers import eventually
from mqtt.test_ha_schemas import run_validator
from mqtt.test_tools_on_mqtt import home as mqtt_home  # noqa: F401  (the MQTT demo home, tools on it)

pytestmark = pytest.mark.timeout(90)

DEVICE = {"ids": ["lab_appliances"], "name": "Lab", "sa": "Utility Room"}
APPLIANCES = {
    "dev": DEVICE, "o": {"name": "tests"},
    "cmps": {
        "valve": {"p": "valve", "name": "Water Main", "uniq_id": "lab_valve", "cmd_t": "lab/valve/set",
                  "stat_t": "lab/valve/state", "pos": True, "pos_open": 255, "pos_clsd": 0},
        "vacuum": {"p": "vacuum", "name": "Robo", "uniq_id": "lab_vacuum", "cmd_t": "lab/vacuum/cmd",
                   "stat_t": "lab/vacuum/state", "send_cmd_t": "lab/vacuum/send",
                   "sup_feat": ["start", "return_home", "status", "battery", "send_command"]},
        "mower": {"p": "lawn_mower", "name": "Mower", "uniq_id": "lab_mower",
                  "act_stat_t": "lab/mower/activity", "strt_mw_cmd_t": "lab/mower/start",
                  "dock_cmd_t": "lab/mower/dock", "dock_cmd_tpl": '{"action": "{{ value }}"}'},
        "scene": {"p": "scene", "name": "Evening", "uniq_id": "lab_scene", "cmd_t": "lab/scene/set",
                  "pl_on": "GO"},
        "button": {"p": "button", "name": "Doorbell Test", "uniq_id": "lab_button", "cmd_t": "lab/button/press"},
        "humidifier": {"p": "humidifier", "name": "Humidifier", "uniq_id": "lab_humidifier",
                       "cmd_t": "lab/hum/power", "stat_t": "lab/hum/power/state", "hum_cmd_t": "lab/hum/target",
                       "hum_stat_t": "lab/hum/target/state", "mode_cmd_t": "lab/hum/mode",
                       "mode_stat_t": "lab/hum/mode/state", "modes": ["normal", "eco"], "min_hum": 30,
                       "max_hum": 80},
        "heater": {"p": "water_heater", "name": "Boiler", "uniq_id": "lab_heater",
                   "mode_cmd_t": "lab/boiler/mode", "mode_stat_t": "lab/boiler/mode/state",
                   "modes": ["off", "eco", "performance"], "temp_cmd_t": "lab/boiler/target",
                   "temp_stat_t": "lab/boiler/target/state", "curr_temp_t": "lab/boiler/current"},
    },
}
STATES = {"lab/valve/state": "128", "lab/vacuum/state": json.dumps({"state": "docked", "battery_level": 90}),
          "lab/mower/activity": "docked", "lab/hum/power/state": "OFF", "lab/hum/target/state": "45",
          "lab/hum/mode/state": "eco", "lab/boiler/mode/state": "eco", "lab/boiler/target/state": "50",
          "lab/boiler/current": "47.5"}
EXPECTED = {
    "valve.lab_water_main": ("open", {"current_position": 50}),
    "vacuum.lab_robo": ("docked", {"battery_level": 90}),
    "lawn_mower.lab_mower": ("docked", {}),
    "scene.lab_evening": ("unknown", {}),
    "button.lab_doorbell_test": ("unknown", {}),
    "humidifier.lab_humidifier": ("off", {"humidity": 45.0, "mode": "eco", "available_modes": ["normal", "eco"]}),
    "water_heater.lab_boiler": ("eco", {"temperature": 50.0, "current_temperature": 47.5,
                                        "operation_list": ["off", "eco", "performance"], "min_temp": 43.3}),
}


@pytest.mark.timeout(900)
def test_the_appliance_configs_pass_home_assistants_schemas() -> None:
    """The configs these tests discover are ones Home Assistant 2025.4's MQTT integration takes."""
    result = run_validator({"discovery": [("homeassistant/device/lab_appliances/config", APPLIANCES)]})
    assert result["errors"] == [] and len(result["checked"]) == len(APPLIANCES["cmps"]), result


@pytest.fixture
async def lab(mosquitto, sniffer_factory):
    client = MqttClient(BrokerSettings("127.0.0.1", mosquitto.port), backoff_min=0.2, backoff_max=1.0)
    store = EntityStore()
    devices = MqttDevices(client, store)
    await devices.start()
    await client.start()
    device = sniffer_factory(["lab/#"])
    device.publish("homeassistant/device/lab_appliances/config", json.dumps(APPLIANCES), retain=True)
    for topic, payload in STATES.items():
        device.publish(topic, payload, retain=True)
    yield store, device
    await devices.stop()
    await client.stop()


async def test_appliances_are_discovered_with_their_states(lab) -> None:
    store, _ = lab

    def arrived() -> bool:
        return all((e := store.get(i)) is not None and e.state == state
                   and all(e.attributes.get(k) == v for k, v in attributes.items())
                   for i, (state, attributes) in EXPECTED.items())

    await eventually(arrived)
    assert all(store.get(i).area == "Utility Room" for i in EXPECTED)


@pytest.mark.parametrize("entity_id, service, data, topic, payload", [
    ("valve.lab_water_main", "set_valve_position", {"position": 20}, "lab/valve/set", b"51"),
    ("valve.lab_water_main", "open_valve", {}, "lab/valve/set", b"255"),  # a positional valve opens to 100 %
    ("vacuum.lab_robo", "start", {}, "lab/vacuum/cmd", b"start"),
    ("vacuum.lab_robo", "return_to_base", {}, "lab/vacuum/cmd", b"return_to_base"),
    ("vacuum.lab_robo", "clean_area", {"cleaning_area_id": "Kitchen"}, "lab/vacuum/send",
     b'{"command": "clean_area", "area": "Kitchen"}'),
    ("lawn_mower.lab_mower", "start_mowing", {}, "lab/mower/start", b"start_mowing"),
    ("lawn_mower.lab_mower", "dock", {}, "lab/mower/dock", b'{"action": "dock"}'),
    ("scene.lab_evening", "turn_on", {}, "lab/scene/set", b"GO"),
    ("button.lab_doorbell_test", "press", {}, "lab/button/press", b"PRESS"),
    ("humidifier.lab_humidifier", "turn_on", {}, "lab/hum/power", b"ON"),
    ("humidifier.lab_humidifier", "set_humidity", {"humidity": 60}, "lab/hum/target", b"60"),
    ("humidifier.lab_humidifier", "set_mode", {"mode": "normal"}, "lab/hum/mode", b"normal"),
    ("water_heater.lab_boiler", "set_temperature", {"temperature": 55}, "lab/boiler/target", b"55.0"),
    ("water_heater.lab_boiler", "set_operation_mode", {"operation_mode": "performance"}, "lab/boiler/mode",
     b"performance"),
])
async def test_each_appliance_service_publishes_home_assistants_command(lab, entity_id, service, data, topic,
                                                                         payload) -> None:
    store, device = lab
    await eventually(lambda: all(store.get(i) is not None for i in EXPECTED))
    entity = store.get(entity_id)
    await store.backend_for(entity).call_service(entity, service, data)
    assert await device.wait_for(topic) == payload


@pytest.mark.parametrize("entity_id, service, data, why", [
    ("humidifier.lab_humidifier", "set_humidity", {"humidity": 95}, "between 30 and 80"),
    ("humidifier.lab_humidifier", "set_mode", {"mode": "turbo"}, "no mode"),
    ("water_heater.lab_boiler", "set_temperature", {"temperature": 90}, "between 43.3 and 60"),
    ("lawn_mower.lab_mower", "pause", {}, "pause_command_topic"),  # the config gives no pause topic
])
async def test_what_an_appliance_cannot_take_is_refused_and_nothing_is_sent(lab, entity_id, service, data,
                                                                           why) -> None:
    store, device = lab
    await eventually(lambda: all(store.get(i) is not None for i in EXPECTED))
    entity = store.get(entity_id)
    before = len(device.messages)
    with pytest.raises(BackendError, match=why):
        await store.backend_for(entity).call_service(entity, service, data)
    assert len(device.messages) == before


def fast_path_on(store: EntityStore, registry: ToolRegistry) -> FastPath:
    return FastPath(store, registry, EntityResolver(store))


@pytest.mark.parametrize("text, language", [
    ("open the irrigation valve in the garden", "en"),
    ("Öffne das Irrigation Valve im Garten", "de"),
    ("Ouvre Irrigation Valve dans le jardin", "fr"),
])
async def test_the_valve_named_by_its_area_opens_over_mqtt(mqtt_home, sniffer_factory, text, language) -> None:
    store, registry, demo = mqtt_home
    await eventually(lambda: (e := store.get("valve.irrigation_valve")) is not None and e.state == "closed")
    sniffer = sniffer_factory(["bolt_demo/#"])
    outcome = await fast_path_on(store, registry).try_handle(text, language, ToolContext("t", language=language))
    assert outcome is not None and [c.arguments["entity_id"] for c in outcome.calls] == ["valve.irrigation_valve"]
    assert await sniffer.wait_for("bolt_demo/irrigation_valve/set") == b"OPEN"
    await eventually(lambda: store.get("valve.irrigation_valve").state == "open")
    assert demo.device("irrigation_valve").open and "Irrigation Valve" in outcome.reply


@pytest.mark.parametrize("start, dock, clean, language", [
    ("start the robot vacuum", "return the robot vacuum to base", "clean the kitchen", "en"),
    ("Aktiviere Robot Vacuum", "Schicke Robot Vacuum zurück zur Ladestation", "Küche saugen", "de"),
    ("Démarre Robot Vacuum", "Renvoie Robot Vacuum à sa base", "Nettoie la cuisine", "fr"),
])
async def test_the_vacuum_starts_docks_and_cleans_an_area_over_mqtt(mqtt_home, sniffer_factory, start, dock,
                                                                      clean, language) -> None:
    store, registry, demo = mqtt_home
    await eventually(lambda: (e := store.get("vacuum.robot_vacuum")) is not None and e.state == "docked")
    fast_path, ctx = fast_path_on(store, registry), ToolContext("t", language=language)
    sniffer = sniffer_factory(["bolt_demo/robot_vacuum/#"])
    outcome = await fast_path.try_handle(start, language, ctx)
    assert outcome is not None and outcome.intent == "HassVacuumStart", start
    assert await sniffer.wait_for("bolt_demo/robot_vacuum/command") == b"start"
    await eventually(lambda: store.get("vacuum.robot_vacuum").state == "cleaning")
    outcome = await fast_path.try_handle(dock, language, ctx)
    assert outcome is not None and outcome.intent == "HassVacuumReturnToBase", dock
    await eventually(lambda: store.get("vacuum.robot_vacuum").state == "docked")  # after its trip back
    outcome = await fast_path.try_handle(clean, language, ctx)
    assert outcome is not None and outcome.intent == "HassVacuumCleanArea", clean
    assert json.loads(await sniffer.wait_for("bolt_demo/robot_vacuum/send")) == {"command": "clean_area",
                                                                                 "area": "Kitchen"}
    assert demo.device("robot_vacuum").cleaning_area == "Kitchen"
    assert "Robot Vacuum" in outcome.reply


@pytest.mark.parametrize("fan, kelvin, language", [
    ("set the bedroom fan speed to 66%", "set the kitchen light color temperature to 2700 kelvin", "en"),
    ("Setze die Geschwindigkeit von Bedroom Fan auf 66 Prozent", "Setze Kitchen Light auf 2700 Kelvin", "de"),
    ("Règle la vitesse de Bedroom Fan à 66 %", "Règle Kitchen Light à 2700 kelvins", "fr"),
])
async def test_fan_speed_and_colour_temperature_over_mqtt(mqtt_home, sniffer_factory, fan, kelvin,
                                                          language) -> None:
    store, registry, demo = mqtt_home
    await eventually(lambda: store.get("fan.bedroom_fan") is not None and store.get("light.kitchen_light") is not None)
    fast_path, ctx = fast_path_on(store, registry), ToolContext("t", language=language)
    sniffer = sniffer_factory(["bolt_demo/#"])
    outcome = await fast_path.try_handle(fan, language, ctx)
    assert outcome is not None and [c.name for c in outcome.calls] == ["set_fan_speed"], fan
    assert await sniffer.wait_for("bolt_demo/bedroom_fan/speed/set") == b"2"  # 66 % of speeds 1–3
    await eventually(lambda: demo.device("bedroom_fan").on and demo.device("bedroom_fan").speed == 2)
    outcome = await fast_path.try_handle(kelvin, language, ctx)
    assert outcome is not None and outcome.calls[0].arguments == {"entity_id": "light.kitchen_light",
                                                                  "color_temp": 2700}, kelvin
    command = json.loads(await sniffer.wait_for("bolt_demo/kitchen_light/set"))
    assert command == {"state": "ON", "color_temp": 370}  # HA's JSON schema: mireds
    await eventually(lambda: store.get("light.kitchen_light").attributes.get("color_temp_kelvin") == 2703)
    assert "2700" in outcome.reply


async def test_tools_refuse_what_the_mqtt_devices_cannot_do(mqtt_home, sniffer_factory) -> None:
    store, registry, _ = mqtt_home
    await eventually(lambda: store.get("light.desk_lamp") is not None)
    sniffer = sniffer_factory(["bolt_demo/+/set", "bolt_demo/+/+/set"])
    ctx = ToolContext("t", language="en")
    result = await registry.call(ToolCall("set_light", {"entity_id": "light.desk_lamp", "color_temp": 3000}), ctx)
    assert not result.ok and result.data["error"] == "unsupported"  # a dimmable white lamp, no colours
    result = await registry.call(ToolCall("set_fan_speed", {"entity_id": "light.desk_lamp", "percentage": 50}), ctx)
    assert not result.ok and result.data["error"] == "unsupported"
    assert not sniffer.messages
