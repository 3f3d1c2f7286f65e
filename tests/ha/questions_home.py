"""A Home Assistant 2025.4.4 home built like a real one, for the end-to-end questions (issue #39):
devices of several entities discovered over MQTT with their diagnostics (a motion sensor with a
battery percentage, a binary battery-low and a signal sensor; a washer plug with its power; a
guest room thermostat and window), HA's own local_calendar ("Personal": events today, tomorrow
and this week, one somewhere else) and local_todo ("Personal Tasks", "Groceries"), a template
weather station with a daily forecast and an outside temperature sensor beside it, HA's demo
media player paused, two floors. Exposed to Assist: what a user would expose, nothing else.
"""

from __future__ import annotations

import asyncio
import time
from datetime import date, datetime, timedelta, timezone
from typing import Any

from ha.ha_harness import HomeAssistantInstance
from mqtt.mqtt_helpers import Sniffer

WEATHER, OUTSIDE, PLAYER = "weather.home_forecast", "sensor.outside_temperature", "media_player.walkman"
CALENDAR, TASKS, GROCERIES = "calendar.personal", "todo.personal_tasks", "todo.groceries"
MOTION, BATTERY, BATTERY_LOW = "binary_sensor.motion_sensor", "sensor.motion_sensor_battery", \
    "binary_sensor.motion_sensor_battery_low"
SIGNAL, PLUG, POWER = "sensor.motion_sensor_signal_strength", "switch.washer_plug", "sensor.washer_plug_power"
THERMOSTAT, WINDOW = "climate.guest_room_thermostat", "binary_sensor.guest_room_window"
FORECAST = ((0, "cloudy", 15, 9, 10), (1, "rainy", 12, 7, 80), (2, "sunny", 17, 8, 0), (3, "partlycloudy", 16, 9, 20),
            (4, "sunny", 18, 10, 0))  # days from today, condition, high, low, chance of rain

EXTRA_CONFIG = """
demo:

weather:
  - platform: template
    name: Home Forecast
    unique_id: bolt_home_forecast
    condition_template: "cloudy"
    temperature_template: "{{ 14.0 }}"
    temperature_unit: "°C"
    humidity_template: "{{ 60 }}"
    forecast_daily_template: >-
      {% set d = now().replace(hour=12, minute=0, second=0, microsecond=0) %}
      {{ FORECAST }}

sensor:
  - platform: template
    sensors:
      outside_temperature:
        unique_id: bolt_outside_temperature
        friendly_name: Outside Temperature
        device_class: temperature
        unit_of_measurement: "°C"
        value_template: "{{ 12.5 }}"
""".replace("FORECAST", "[%s]" % ", ".join(
    f"{{'datetime': (d + timedelta(days={days})).isoformat(), 'condition': '{condition}', 'temperature': {high}, "
    f"'templow': {low}, 'precipitation_probability': {rain}}}" for days, condition, high, low, rain in FORECAST))


def _device(key: str, name: str, area: str) -> dict[str, Any]:
    return {"identifiers": [f"bolt_{key}"], "name": name, "suggested_area": area, "manufacturer": "Bolt tests"}


MOTION_DEVICE = _device("motion", "Motion Sensor", "Kitchen")
PLUG_DEVICE = _device("plug", "Washer Plug", "Kitchen")
GUEST_DEVICE = _device("guest", "Guest Room Thermostat", "Guest Room")
DISCOVERY: dict[str, dict[str, Any]] = {  # discovery topic → config (MQTT discovery's device blocks)
    "homeassistant/binary_sensor/bolt_motion/motion/config": {
        "name": None, "unique_id": "bolt_motion", "device_class": "motion", "state_topic": "bolt/motion",
        "device": MOTION_DEVICE},
    "homeassistant/sensor/bolt_motion/battery/config": {
        "name": "Battery", "unique_id": "bolt_motion_battery", "device_class": "battery", "unit_of_measurement": "%",
        "entity_category": "diagnostic", "state_topic": "bolt/motion/battery", "device": MOTION_DEVICE},
    "homeassistant/binary_sensor/bolt_motion/battery_low/config": {
        "name": "Battery low", "unique_id": "bolt_motion_battery_low", "device_class": "battery",
        "entity_category": "diagnostic", "state_topic": "bolt/motion/battery_low", "device": MOTION_DEVICE},
    "homeassistant/sensor/bolt_motion/signal/config": {
        "name": "Signal strength", "unique_id": "bolt_motion_signal", "device_class": "signal_strength",
        "unit_of_measurement": "dBm", "entity_category": "diagnostic", "state_topic": "bolt/motion/signal",
        "device": MOTION_DEVICE},
    "homeassistant/switch/bolt_plug/switch/config": {
        "name": None, "unique_id": "bolt_plug", "command_topic": "bolt/plug/set", "state_topic": "bolt/plug",
        "device": PLUG_DEVICE},
    "homeassistant/sensor/bolt_plug/power/config": {
        "name": "Power", "unique_id": "bolt_plug_power", "device_class": "power", "unit_of_measurement": "W",
        "state_topic": "bolt/plug/power", "device": PLUG_DEVICE},
    "homeassistant/climate/bolt_guest/thermostat/config": {
        "name": None, "unique_id": "bolt_guest", "modes": ["off", "heat"], "mode_command_topic": "bolt/guest/mode/set",
        "temperature_command_topic": "bolt/guest/temperature/set", "current_temperature_topic": "bolt/guest/current",
        "min_temp": 7, "max_temp": 30, "temp_step": 0.5, "device": GUEST_DEVICE},
    "homeassistant/binary_sensor/bolt_guest/window/config": {
        "name": "Window", "unique_id": "bolt_guest_window", "device_class": "window", "state_topic": "bolt/guest/window",
        "device": {**GUEST_DEVICE, "identifiers": ["bolt_guest_window"], "name": "Guest Room"}},
}
READINGS = {"bolt/motion": "ON", "bolt/motion/battery": "55", "bolt/motion/battery_low": "OFF",
            "bolt/motion/signal": "-61", "bolt/plug": "ON", "bolt/plug/power": "412", "bolt/guest/current": "24.5",
            "bolt/guest/window": "ON"}
DISCOVERED = (MOTION, BATTERY, BATTERY_LOW, SIGNAL, PLUG, POWER, THERMOSTAT, WINDOW)
EXPOSED = (*DISCOVERED, WEATHER, OUTSIDE, PLAYER, CALENDAR, TASKS, GROCERIES,
           "light.living_room_light", "light.kitchen_light", "light.bedroom_lamp")
ITEMS = {TASKS: ["Call Liza", "Pay rent", "Water the plants"], GROCERIES: ["Oat milk", "Bread"]}


async def build(ha: HomeAssistantInstance, broker_port: int) -> None:
    """Floors and areas, the MQTT devices, HA's calendar and lists, exposure."""
    floors = {name: (await ha.ws("config/floor_registry/create", name=name, aliases=aliases, level=level))["floor_id"]
              for name, aliases, level in (("Upstairs", ["upstairs", "oben", "étage", "l'étage"], 1),
                                           ("Ground Floor", ["downstairs", "unten"], 0))}
    guest = await ha.ws("config/area_registry/create", name="Guest Room", aliases=["Gästezimmer", "chambre d'amis"])
    ha.area_ids["Guest Room"] = guest["area_id"]
    for area, floor in (("Guest Room", "Upstairs"), ("Bedroom", "Upstairs"), ("Kitchen", "Ground Floor"),
                        ("Living Room", "Ground Floor")):
        await ha.ws("config/area_registry/update", area_id=ha.area_ids[area], floor_id=floors[floor])
    sniffer = Sniffer(broker_port, ["bolt/#"])
    try:
        for topic, config in DISCOVERY.items():
            sniffer.publish(topic, config, retain=True)
        for topic, value in READINGS.items():
            sniffer.publish(topic, value, retain=True)
        await _until(ha, set(DISCOVERED), "the MQTT devices")
    finally:
        sniffer.close()
    for handler, data in (("local_todo", {"todo_list_name": "Personal Tasks"}),
                          ("local_todo", {"todo_list_name": "Groceries"}),
                          ("local_calendar", {"calendar_name": "Personal"})):
        flow = await ha.rest("POST", "/api/config/config_entries/flow", {"handler": handler})
        result = await ha.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", data)
        assert result.get("type") == "create_entry", result
    await _until(ha, {WEATHER, OUTSIDE, PLAYER, CALENDAR, TASKS, GROCERIES}, "HA's own entities")
    for entity_id, items in ITEMS.items():
        for item in items:
            await ha.call_service("todo", "add_item", entity_id=entity_id, item=item)
    for event in events(datetime.now(timezone.utc)):
        await ha.call_service("calendar", "create_event", entity_id=CALENDAR, **event)
    await ha.call_service("media_player", "media_play", entity_id=PLAYER)
    await ha.call_service("media_player", "media_pause", entity_id=PLAYER)
    states = {s["entity_id"] for s in await ha.states()}
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], should_expose=False,
                entity_ids=sorted(states - set(EXPOSED)))
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], should_expose=True,
                entity_ids=sorted(EXPOSED))


def events(now: datetime) -> list[dict[str, Any]]:
    """Today's two (one somewhere else) while today lasts (all day after 21:00), tomorrow's and
    one in three days."""
    today: list[dict[str, Any]] = []
    if now.hour < 21:
        soon = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
        today = [{"summary": "Dentist", "location": "Main Street 5", "start_date_time": soon.isoformat(),
                  "end_date_time": (soon + timedelta(minutes=30)).isoformat()},
                 {"summary": "Dinner with Liza", "start_date_time": (soon + timedelta(hours=1)).isoformat(),
                  "end_date_time": (soon + timedelta(hours=2)).isoformat()}]
    else:
        day = now.date()
        today = [{"summary": s, "start_date": day.isoformat(), "end_date": (day + timedelta(days=1)).isoformat(),
                  **({"location": "Main Street 5"} if s == "Dentist" else {})} for s in ("Dentist", "Dinner with Liza")]
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    later = [(midnight + timedelta(days=1, hours=8), "Yoga class"), (midnight + timedelta(days=3, hours=15), "Grandma visits")]
    return today + [{"summary": s, "start_date_time": t.isoformat(), "end_date_time": (t + timedelta(hours=1)).isoformat()}
                    for t, s in later]


async def answered(ha: HomeAssistantInstance, domain: str, service: str, entity_id: str, **data: Any) -> dict[str, Any]:
    """HA's own response to a service that answers, for the entity."""
    result = await ha.rest("POST", f"/api/services/{domain}/{service}?return_response", {"entity_id": entity_id, **data})
    return result["service_response"][entity_id]


async def events_between(ha: HomeAssistantInstance, start: datetime, end: datetime) -> list[str]:
    found = await answered(ha, "calendar", "get_events", CALENDAR, start_date_time=start.isoformat(),
                           end_date_time=end.isoformat())
    return [e["summary"] for e in found["events"]]


def day_of(entry: dict[str, Any]) -> date:
    return datetime.fromisoformat(entry["datetime"]).astimezone().date()


async def _until(ha: HomeAssistantInstance, wanted: set[str], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if wanted <= {s["entity_id"] for s in await ha.states()}:
            return
        await asyncio.sleep(0.3)
    raise ha.failure(f"{what} did not appear: {sorted(wanted - {s['entity_id'] for s in await ha.states()})}")
