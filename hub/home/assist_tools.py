"""The tools of Assist's intents beyond devices, built together for the composition root: to-do
and shopping lists, the calendar, the weather forecast and broadcast (the timers are
`hub.home.later`'s)."""

from __future__ import annotations

from hub.core.tools import Tool
from hub.home.broadcast import Broadcast
from hub.home.calendar_tools import CalendarEvents
from hub.home.forecast import WeatherForecast
from hub.home.entities import EntityStore
from hub.home.list_tools import build_list_tools
from hub.home.policy import ActionPolicy
from hub.home.resolve import EntityResolver
from hub.home.watches import ActionTracker


def build_assist_tools(store: EntityStore, resolver: EntityResolver, policy: ActionPolicy | None = None,
                       tracker: ActionTracker | None = None) -> list[Tool]:
    return [*build_list_tools(store, resolver, policy, tracker), CalendarEvents(store),
            WeatherForecast(store, resolver), Broadcast(store, policy)]
