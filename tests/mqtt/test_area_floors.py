"""Floors for a home without Home Assistant (issue #27): the `area_floors` option puts the MQTT
demo home's areas on two floors, over a real mosquitto, through the real hub (HubApp: agent,
fast path, tools). "The lights upstairs" are the first floor's; a name two rooms share means the
one on the speaker's floor. The option's areas are written in another case than the devices'.

The model is scripted and never asked: every request here is the fast path's."""

from __future__ import annotations

import asyncio
import json

import pytest

from hub.app import HubApp
from hub.backends.demo.mqtt_devices import BasicLight
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.config import ConfigError, validate
from hub.home.entities import Entity, EntityStore
from hub.home.places import ConfiguredFloors, parse_area_floors
from hub.transport.mqtt_client import BrokerSettings
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import Sniffer, eventually, json_with

pytestmark = pytest.mark.timeout(180)

BASE = "bolt_hub/bolt_hub"
FLOORS = "office=First floor|upstairs, bedroom=First floor; KITCHEN=Ground floor|downstairs\nliving room=Ground floor"


def test_area_floors_pairs_aliases_and_mistakes() -> None:
    assert parse_area_floors(FLOORS) == {
        "First floor": (["office", "bedroom"], ["upstairs"]),
        "Ground floor": (["KITCHEN", "living room"], ["downstairs"])}
    assert parse_area_floors(None) == {} and parse_area_floors(" ") == {}
    for bad in ("Kitchen", "=Ground floor", "Kitchen=", "Kitchen=|downstairs"):
        with pytest.raises(ValueError, match="area=floor|one floor"):
            parse_area_floors(bad)
    with pytest.raises(ValueError, match="one floor"):
        parse_area_floors("Kitchen=Ground floor,kitchen=First floor")
    with pytest.raises(ConfigError, match="area_floors"):
        HubApp(validate({"area_floors": "Kitchen"}))


def test_the_options_areas_are_spelled_as_the_devices_spell_them() -> None:
    store = EntityStore()
    ConfiguredFloors(store, parse_area_floors(FLOORS))
    assert store.floors()["First floor"].areas == ("office", "bedroom")  # no device yet: as written
    store.upsert(Entity("light.desk", "Desk", "off", area="Office", source="mqtt"))
    store.upsert(Entity("light.kitchen", "Kitchen light", "off", area="Kitchen", source="mqtt"))
    assert store.floors()["First floor"].areas == ("Office", "bedroom")
    assert store.floors()["Ground floor"].areas == ("Kitchen", "living room")
    assert store.floors()["First floor"].aliases == ("upstairs",)


@pytest.fixture
async def hub(mosquitto, tmp_path):
    config = validate({"data_dir": str(tmp_path), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                       "api_token": "floors", "rate_limit_per_minute": 0, "area_floors": FLOORS})
    app = HubApp(config, engine=ScriptedEngine([]))
    await app.start(listeners=False)
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port))
    for key, area in (("office_night_light", "Office"), ("kitchen_night_light", "Kitchen")):
        demo.devices[key] = BasicLight(demo, key, "Night Light", area)
    await demo.start()
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/reply"])
    try:
        await eventually(lambda: len([e for e in app.store.all() if e.domain == "light"]) == 5
                         and app.store.get("cover.bedroom_blinds") is not None, timeout=20)
        yield app, demo, sniffer
    finally:
        await asyncio.to_thread(sniffer.close)
        await demo.stop()
        await app.stop()


async def ask(sniffer: Sniffer, request_id: str, text: str, **fields) -> dict:
    await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", {"id": request_id, "text": text, "language": "en", **fields})
    reply = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id=request_id), timeout=60))
    assert reply["ok"] and reply["path"] == "fast_path", reply
    return reply


def acted_on(reply: dict) -> list[str]:
    return sorted(c["arguments"]["entity_id"] for c in reply["tool_calls"])


async def test_the_lights_upstairs_and_the_speakers_floor_over_mqtt(hub) -> None:
    app, demo, sniffer = hub
    assert app.store.floors()["First floor"].areas == ("Office", "Bedroom")  # as discovered
    lights = {e.area: e.entity_id for e in app.store.all() if e.name == "Night Light"}

    upstairs = await ask(sniffer, "up", "turn on the lights upstairs")
    assert acted_on(upstairs) == sorted(["light.desk_lamp", lights["Office"]])
    await eventually(lambda: demo.device("desk_lamp").on and demo.device("office_night_light").on, timeout=10)
    assert not demo.device("kitchen_light").on and not demo.device("living_room_lamp").on

    floor = await ask(sniffer, "floor", "turn off the lights on the first floor")
    assert acted_on(floor) == sorted(["light.desk_lamp", lights["Office"]])
    await eventually(lambda: not demo.device("desk_lamp").on, timeout=10)

    # the bedroom has no night light: the one on its floor (the office's), not the kitchen's
    bedroom = await ask(sniffer, "bedroom", "turn on the night light", area="bedroom")
    assert acted_on(bedroom) == [lights["Office"]]
    living_room = await ask(sniffer, "living", "turn on the night light", area="Living Room")
    assert acted_on(living_room) == [lights["Kitchen"]]
    await eventually(lambda: demo.device("kitchen_night_light").on, timeout=10)
    asked = await ask(sniffer, "nowhere", "turn off the night light")  # no room: which one?
    assert not asked["tool_calls"] and "Night Light" in asked["text"]
