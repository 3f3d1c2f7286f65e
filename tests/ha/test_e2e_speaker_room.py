"""End to end through a real Home Assistant 2025.4.4: the speaker's room and the home as it is now.

HA 2025.4.4 drops the transcript's context, so the transcript goes to the hub from the wyoming
library's own client, as newer HA sends it: `device_id` the id of a device HA has in the kitchen
(an MQTT-discovered voice satellite; nothing of it is exposed to Assist). Then, while the hub
(`python -m hub serve`, SmolLM2 stand-in) runs, an entity is renamed, moved to another area,
and exposed to Assist in HA: each takes effect without a restart. The exposed one is a YAML lock
without a `unique_id`, outside HA's entity registry: HA fires no event when it is exposed.

Then the appliances HA 2025.4's demo cannot place in an area (its vacuums and valves have no
unique id): the hub's own simulated MQTT robot vacuum (Hallway), irrigation valve (Garden) and
thermostat with fan modes (Living Room), discovered by HA's MQTT integration, started, sent back
to their base, opened by the area's name and set to a fan mode, in en, de and fr, over Wyoming,
through HA's services, checked on HA's own states; and a lawn mower of HA's MQTT integration,
started and docked in en, de and fr.

This module runs its own HA (the shared one has no MQTT and no such lock).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Iterator

import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled, NotHandled

import ha.ha_harness as harness
from ha.ha_harness import HomeAssistantInstance, ensure_installed
from ha.test_e2e_wyoming import HubProcess
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.transport.mqtt_broker import BrokerSettings
from mqtt.mqtt_helpers import Mosquitto, Sniffer
from mqtt.test_with_home_assistant import _add_mqtt_integration, ensure_mqtt_requirements

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PORCH_LOCK_YAML = """
input_text:
  porch_lock_state: {{name: Porch lock state, initial: unlocked}}

lock:
  - platform: template
    name: Porch Lock
    value_template: "{{{{ is_state('input_text.porch_lock_state', 'locked') }}}}"
    lock: {{action: input_text.set_value, target: {{entity_id: input_text.porch_lock_state}}, data: {{value: locked}}}}
    unlock: {{action: input_text.set_value, target: {{entity_id: input_text.porch_lock_state}}, data: {{value: unlocked}}}}
"""  # appended to the harness's configuration (a str.format template: braces doubled)
SATELLITE_TOPIC = "homeassistant/sensor/kitchen_satellite/signal/config"
SATELLITE_CONFIG = {"name": "Signal", "unique_id": "kitchen_satellite_signal", "state_topic": "satellite/kitchen/signal",
                    "device": {"identifiers": ["kitchen_voice_satellite"], "name": "Kitchen satellite",
                               "suggested_area": "Kitchen"}}
CHANGE_WAIT_S = 30.0  # a registry event reloads within ~1 s; exposure outside the registry is polled every 10 s


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, broker: Mosquitto) -> Iterator[tuple[HomeAssistantInstance, str]]:
    """Its own HA with the porch lock and MQTT; a voice satellite device in the kitchen. Yields HA
    and the satellite's device id."""
    ensure_installed()
    ensure_mqtt_requirements()
    instance = HomeAssistantInstance(tmp_path_factory.mktemp("home-assistant"))
    original = harness.CONFIGURATION_YAML
    harness.CONFIGURATION_YAML = original + PORCH_LOCK_YAML
    try:
        instance.start()
    finally:
        harness.CONFIGURATION_YAML = original
    try:
        flow = asyncio.run(_add_mqtt_integration(instance, broker.port))
        assert flow["type"] == "create_entry", flow
        sniffer = Sniffer(broker.port, ["satellite/#"])
        try:
            sniffer.publish(SATELLITE_TOPIC, SATELLITE_CONFIG, retain=True)
            device_id = asyncio.run(_satellite_in_the_kitchen(instance))
        finally:
            sniffer.close()
        yield instance, device_id
    finally:
        instance.stop()


async def _satellite_in_the_kitchen(ha: HomeAssistantInstance) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        devices = [d for d in await ha.ws("config/device_registry/list") if d.get("name") == "Kitchen satellite"]
        if devices:
            await ha.ws("config/device_registry/update", device_id=devices[0]["id"], area_id=ha.area_ids["Kitchen"])
            return str(devices[0]["id"])
        await asyncio.sleep(0.5)
    raise ha.failure("HA created no device for the MQTT satellite")


@pytest.fixture(scope="module")
def hub(home: tuple[HomeAssistantInstance, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path_factory.mktemp("hub-room"), home[0], language="en")
    process.start()
    try:
        yield process
    finally:
        process.stop()


async def say(hub: HubProcess, text: str, language: str = "en", **context: Any) -> str:
    """One transcript to the hub as newer HA sends it; the text it answers with."""
    async with AsyncTcpClient("127.0.0.1", hub.wyoming_port) as client:
        await client.write_event(Transcript(text, language=language, context=context).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), 240)
            assert event is not None, "the hub closed the connection"
            if Handled.is_type(event.type) or NotHandled.is_type(event.type):
                return str((event.data or {}).get("text", ""))


async def state(ha: HomeAssistantInstance, entity_id: str) -> str:
    return str((await ha.state(entity_id))["state"])


async def until_done(ha: HomeAssistantInstance, hub: HubProcess, text: str, entity_id: str, wanted: str,
                     **context: Any) -> float:
    """Say `text` until `entity_id` is `wanted` in HA (the hub learns a change in the background);
    the seconds it took."""
    started = time.monotonic()
    while True:
        await say(hub, text, **context)
        if await state(ha, entity_id) == wanted:
            return time.monotonic() - started
        if time.monotonic() - started > CHANGE_WAIT_S:
            raise hub.failure(f"{text!r} did not make {entity_id} {wanted} within {CHANGE_WAIT_S:.0f} s")
        await asyncio.sleep(1.0)


async def test_the_satellites_room_and_the_home_as_it_is_now(home, hub: HubProcess) -> None:
    ha, satellite = home
    kitchen = {"conversation_id": "room-e2e", "device_id": satellite}
    assert await state(ha, "light.kitchen_light") == "off"

    # "turn on the lights" said at the kitchen satellite: the kitchen's light, no other
    await say(hub, "turn on the lights", **kitchen)
    await ha.wait_for_state("light.kitchen_light", "on")
    assert await state(ha, "light.living_room_light") == "off" and await state(ha, "light.bedroom_lamp") == "off"
    await say(hub, "turn on the lights")  # no satellite, no room said: nothing is guessed
    assert await state(ha, "light.living_room_light") == "off" and await state(ha, "light.bedroom_lamp") == "off"

    # renamed in HA while the hub runs
    await ha.ws("config/entity_registry/update", entity_id="light.bedroom_lamp", name="Reading Lamp")
    renamed = await until_done(ha, hub, "turn on the reading lamp", "light.bedroom_lamp", "on")

    # moved to the kitchen: "turn off the lights" there now takes it too
    await ha.ws("config/entity_registry/update", entity_id="light.bedroom_lamp", area_id=ha.area_ids["Kitchen"])
    started = time.monotonic()
    while await state(ha, "light.bedroom_lamp") != "off":
        await say(hub, "turn off the lights", **kitchen)
        assert time.monotonic() - started < CHANGE_WAIT_S, hub.failure("the moved lamp stayed out of the kitchen")
    assert await state(ha, "light.kitchen_light") == "off"

    # a lock outside HA's entity registry, exposed to Assist while the hub runs
    await say(hub, "lock the porch lock")  # not exposed: not there for the hub
    assert await state(ha, "lock.porch_lock") == "unlocked"
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], entity_ids=["lock.porch_lock"],
                should_expose=True)
    exposed = await until_done(ha, hub, "lock the porch lock", "lock.porch_lock", "locked")
    print(f"\n[room e2e] rename took effect after {renamed:.1f} s, exposure after {exposed:.1f} s")


APPLIANCES = ("robot_vacuum", "irrigation_valve", "thermostat")  # of the hub's MQTT demo home
VACUUM, VALVE, THERMOSTAT = "vacuum.robot_vacuum", "valve.irrigation_valve", "climate.thermostat"
APPLIANCE_SENTENCES = {  # start, back to its base, the valve by its area, the fan mode (None: no template)
    "en": ("start the robot vacuum", "return the robot vacuum to base", "open the irrigation valve in the garden",
           "set the living room fan mode to high"),
    "de": ("Aktiviere Robot Vacuum", "Schicke Robot Vacuum zurück zur Ladestation",
           "Öffne das Irrigation Valve im Garten", "Setze den Lüftermodus im Wohnzimmer auf gering"),
    "fr": ("Démarre Robot Vacuum", "Renvoie Robot Vacuum à sa base", "Ouvre Irrigation Valve dans le jardin", None),
}


async def _appliances_in_home_assistant(ha: HomeAssistantInstance, broker: Mosquitto) -> MqttDemoHome:
    """The demo vacuum, valve and thermostat on the broker, as HA's MQTT integration has them, in
    their suggested areas; the valve exposed to Assist (HA does not expose valves by default)."""
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", broker.port), travel_seconds=1.0)
    demo.devices = {key: device for key, device in demo.devices.items() if key in APPLIANCES}
    await demo.start()
    deadline = time.monotonic() + 60
    while {s["entity_id"]: s["state"] for s in await ha.states()}.get(VALVE) in (None, "unavailable"):
        if time.monotonic() > deadline:
            raise ha.failure("HA's MQTT integration did not take the demo appliances")
        await asyncio.sleep(0.5)
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], entity_ids=[VALVE, VACUUM, THERMOSTAT],
                should_expose=True)
    registry = {e["entity_id"]: e for e in await ha.ws("config/entity_registry/list")}
    devices = {d["id"]: d.get("area_id") for d in await ha.ws("config/device_registry/list")}
    placed = {i: registry[i].get("area_id") or devices.get(registry[i].get("device_id"))
              for i in (VACUUM, VALVE, THERMOSTAT)}
    assert all(placed.values()), f"the appliances are in no area: {placed}"
    return demo


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_vacuum_valve_and_fan_mode_through_home_assistant(home, hub: HubProcess, broker: Mosquitto,
                                                                 language: str) -> None:
    ha, _ = home
    start, dock, valve, fan_mode = APPLIANCE_SENTENCES[language]
    demo = await _appliances_in_home_assistant(ha, broker)
    try:
        await ha.call_service("valve", "close_valve", entity_id=VALVE)
        await ha.wait_for_state(VALVE, "closed")
        await ha.wait_for_state(VACUUM, "docked")
        heard = {}
        started = time.monotonic()
        while await state(ha, VACUUM) != "cleaning":  # the hub learns of HA's new entities in the background
            heard["start"] = await say(hub, start, language, conversation_id=f"appliances-{language}")
            assert time.monotonic() - started < CHANGE_WAIT_S, hub.failure(f"{start!r} did not start the vacuum")
            await asyncio.sleep(0.5)
        heard["dock"] = await say(hub, dock, language)
        await ha.wait_for_state(VACUUM, "docked")  # after its trip back (1 s)
        heard["valve"] = await say(hub, valve, language)
        await ha.wait_for_state(VALVE, "open")
        assert demo.device("irrigation_valve").open
        if fan_mode is not None:
            wanted = "high" if language == "en" else "low"
            heard["fan_mode"] = await say(hub, fan_mode, language)
            for _ in range(50):
                if (await ha.state(THERMOSTAT))["attributes"].get("fan_mode") == wanted:
                    break
                await asyncio.sleep(0.2)
            assert (await ha.state(THERMOSTAT))["attributes"].get("fan_mode") == wanted, heard
            assert demo.device("thermostat").fan_mode == wanted
        assert "Robot Vacuum" in heard["start"] and "Irrigation Valve" in heard["valve"], heard
        print(f"\n[appliances e2e] {language}: {heard}")
    finally:
        await demo.stop()


MOWER = "lawn_mower.lawn_mower"
MOWER_TOPIC = "homeassistant/lawn_mower/e2e_lawn_mower/config"
# HA's MQTT lawn mower, optimistic (HA sets its activity on each command: no state topic needed)
MOWER_CONFIG = {"name": None, "unique_id": "e2e_lawn_mower", "optimistic": True,
                "start_mowing_command_topic": "e2e/mower/start", "dock_command_topic": "e2e/mower/dock",
                "pause_command_topic": "e2e/mower/pause",
                "device": {"identifiers": ["e2e_lawn_mower"], "name": "Lawn Mower", "suggested_area": "Garden"}}
MOWER_SENTENCES = {  # start mowing, back to its dock: HA's templates, no name (the home's one mower)
    "en": ("start mowing", "dock the lawn mower"),
    "de": ("Mähe den Rasen", "Schicke den Rasenmäher zurück"),
    "fr": ("Tonds la pelouse", "Arrête la tonte"),
}


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_lawn_mower_of_home_assistants_mqtt_integration(home, hub: HubProcess, broker: Mosquitto,
                                                              language: str) -> None:
    """HA's MQTT integration gives the lawn mower (HA's demo has none): started and docked by
    HA's templates in en, de and fr, through HA's services, each command on the mower's topic."""
    ha, _ = home
    start, dock = MOWER_SENTENCES[language]
    sniffer = Sniffer(broker.port, ["e2e/mower/#"])
    try:
        sniffer.publish(MOWER_TOPIC, MOWER_CONFIG, retain=True)
        deadline = time.monotonic() + 60
        while {s["entity_id"] for s in await ha.states()}.isdisjoint({MOWER}):
            assert time.monotonic() < deadline, ha.failure("HA's MQTT integration did not take the lawn mower")
            await asyncio.sleep(0.5)
        await ha.ws("homeassistant/expose_entity", assistants=["conversation"], entity_ids=[MOWER], should_expose=True)
        await ha.call_service("lawn_mower", "dock", entity_id=MOWER)
        await ha.wait_for_state(MOWER, "docked")
        heard, started = {}, time.monotonic()
        while await state(ha, MOWER) != "mowing":  # the hub learns of HA's new entity in the background
            heard["start"] = await say(hub, start, language, conversation_id=f"mower-{language}")
            assert time.monotonic() - started < CHANGE_WAIT_S, hub.failure(f"{start!r} did not start the mower")
            await asyncio.sleep(0.5)
        heard["dock"] = await say(hub, dock, language, conversation_id=f"mower-{language}")
        await ha.wait_for_state(MOWER, "docked")
        commands = [topic for topic, _, _ in sniffer.messages if topic.startswith("e2e/mower/")]
        assert commands[-2:] == ["e2e/mower/start", "e2e/mower/dock"], commands
        print(f"\n[mower e2e] {language}: {heard}")
    finally:
        sniffer.close()
