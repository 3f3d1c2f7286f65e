"""A home whose services answer, for the readings' tests (issue #39): BigHome's devices plus a
motion sensor device with battery, power and signal siblings (one device id), a smart plug with a
binary battery and a power reading, a weather station with a daily forecast, a personal calendar
with events today, tomorrow and this week (one somewhere else), and the hub's own to-do lists
("Personal Tasks" and the shopping list by default, hub.home.local_lists). The calendar and the weather
answer as HA's `calendar.get_events` and `weather.get_forecasts` do (their response objects);
the fast path and the reading tools are the real ones, on a fixed clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hub.backends.demo.home import DemoBackend
from hub.core.tools import ToolContext
from hub.home.calendar_tools import CalendarEvents
from hub.home.entities import BackendError, Entity
from hub.home.forecast import WeatherForecast
from hub.home.list_tools import build_list_tools
from hub.home.local_lists import LocalLists
from hub.understanding.fast_path import FastPath
from tests.home.test_fast_path_understanding import BigHome

NOW = datetime(2026, 12, 1, 14, 5, tzinfo=timezone.utc)  # a Tuesday
WEATHER = "weather.home"
CALENDAR = "calendar.personal"


def _at(days: int, hour: int, minute: int = 0) -> str:
    return (NOW.replace(hour=hour, minute=minute) + timedelta(days=days)).isoformat()


EVENTS = [  # as HA's local_calendar answers them
    {"summary": "Dinner with Liza", "start": _at(0, 19), "end": _at(0, 21), "location": ""},
    {"summary": "Dentist", "start": _at(0, 16, 30), "end": _at(0, 17), "location": "Main Street 5"},
    {"summary": "Yoga class", "start": _at(1, 8), "end": _at(1, 9), "location": ""},
    {"summary": "Grandma visits", "start": _at(3, 15), "end": _at(3, 18), "location": ""},
    {"summary": "Morning run", "start": _at(0, 7), "end": _at(0, 8), "location": ""},  # over by now
]
FORECAST = [  # daily, as weather.get_forecasts answers
    {"datetime": _at(days, 12), "condition": condition, "temperature": high, "templow": low,
     "precipitation_probability": rain}
    for days, condition, high, low, rain in ((0, "cloudy", 15.0, 9.0, 10), (1, "rainy", 12.0, 7.0, 80),
                                             (2, "sunny", 17.0, 8.0, 0), (3, "partlycloudy", 16.0, 9.0, 20),
                                             (4, "sunny", 18.0, 10.0, 0))]


class AnsweringBackend(DemoBackend):
    """The demo backend with a calendar and a weather station that answer."""

    def __init__(self, home: BigHome) -> None:
        super().__init__(home.store)
        self.asked: list[tuple[str, str, dict[str, Any]]] = []

    async def service_response(self, entity: Entity, service: str, data: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((entity.entity_id, service, dict(data)))
        if service == "get_events":
            start = datetime.fromisoformat(data["start_date_time"])
            end = datetime.fromisoformat(data["end_date_time"])
            events = [e for e in EVENTS if datetime.fromisoformat(e["start"]) < end
                      and datetime.fromisoformat(e["end"]) > start]
            return {entity.entity_id: {"events": events}}
        if service == "get_forecasts":
            return {entity.entity_id: {"forecast": FORECAST}}
        raise BackendError(f"{entity.domain}.{service} answers nothing here")


class AnsweringHome(BigHome):
    """BigHome with devices of several entities, a weather station, a calendar and lists."""

    def __init__(self, state_dir: Path, lists: tuple[str, ...] = ("Personal Tasks",)) -> None:
        super().__init__(state_dir)
        add = self.store.upsert
        self.services = AnsweringBackend(self)
        self.store.register_backend("answers", self.services)
        for entity in (
            Entity("binary_sensor.motion_sensor", "Motion Sensor", "on", area="Hallway", device_class="motion",
                   device_id="motion"),
            Entity("sensor.motion_sensor_battery", "Motion Sensor Battery", "55", {"unit_of_measurement": "%"},
                   device_class="battery", device_id="motion"),
            Entity("binary_sensor.motion_sensor_battery_low", "Motion Sensor Battery Low", "off",
                   device_class="battery", device_id="motion"),
            Entity("sensor.motion_sensor_signal", "Motion Sensor Signal", "-61", {"unit_of_measurement": "dBm"},
                   device_class="signal_strength", device_id="motion"),
            Entity("switch.washer_plug", "Washer Plug", "on", area="Kitchen", device_id="plug"),
            Entity("sensor.washer_plug_power", "Washer Plug Power", "412", {"unit_of_measurement": "W"},
                   device_class="power", device_id="plug"),
            Entity("binary_sensor.washer_plug_battery", "Washer Plug Battery", "off", device_class="battery",
                   device_id="plug"),
            Entity("media_player.kitchen_radio", "Kitchen radio", "idle", area="Kitchen"),
        ):
            add(entity)
        add(Entity(WEATHER, "Home", "cloudy", {"temperature": 14.0, "temperature_unit": "°C",
                                                "supported_features": 1}, source="answers"))
        add(Entity(CALENDAR, "Personal", "off", source="answers"))
        self.lists = LocalLists(state_dir / "lists.json", self.store, "Shopping list", lists)
        tools = [*build_list_tools(self.store, self.resolver), CalendarEvents(self.store, clock=lambda: NOW),
                 WeatherForecast(self.store, self.resolver, clock=lambda: NOW)]
        for tool in tools:
            self.registry.register(tool)
        self.fast_path = FastPath(self.store, self.registry, self.resolver, clock=lambda: NOW)

    async def start(self, items: dict[str, list[str]] | None = None) -> None:
        await self.timers.start()
        await self.lists.start()
        for entity_id, summaries in (items or {}).items():
            for summary in summaries:
                await self.lists.call_service(self.store.get(entity_id), "add_item", {"item": summary})

    async def stop(self) -> None:
        await self.timers.stop()

    async def ask(self, text: str, language: str = "en"):
        return await self.fast_path.try_handle(text, language, ToolContext("t", language=language))
