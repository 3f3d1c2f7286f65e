"""The weather forecast for today, tomorrow or the coming days: HA's `weather.get_forecasts`
(a service that answers, hub.home.queries), daily where the station gives it, else twice daily
or hourly gathered into days; each day said as its condition in Home Assistant's own words
(`forecast.<condition>` phrases) and its lowest and highest temperature.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, Callable

from hub.core.tools import ToolContext, ToolError, ToolResult
from hub.home.entity_tool import EntityTool, entity_schema
from hub.home.entities import BackendError, Entity, EntityStore
from hub.home.resolve import EntityResolver
from hub.home.queries import service_response
from hub.locales import format_number, phrase, phrase_keys, template

_DAILY, _HOURLY, _TWICE_DAILY = 1, 2, 4  # HA's WeatherEntityFeature
WEEK_DAYS = 5  # days said for "the coming days"
WHEN = ("today", "tomorrow", "week")


@dataclass
class Day:
    conditions: list[str] = field(default_factory=list)
    temperatures: list[float] = field(default_factory=list)
    rain_chances: list[float] = field(default_factory=list)  # precipitation_probability, percent

    def condition(self) -> str | None:
        return Counter(self.conditions).most_common(1)[0][0] if self.conditions else None


class WeatherForecast(EntityTool):
    name = "weather_forecast"
    description = "The weather forecast of a weather entity for today, tomorrow or the coming days."
    parameters = entity_schema(("entity_id", "when"), when={"type": "string", "enum": list(WHEN)})
    domains = frozenset({"weather"})
    changes_home = False

    def __init__(self, store: EntityStore, resolver: EntityResolver,
                 clock: Callable[[], datetime] | None = None) -> None:
        super().__init__(store, resolver)
        self._clock = clock or (lambda: datetime.now().astimezone())

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        features = int(entity.attributes.get("supported_features") or 0)
        kind = "daily" if features & _DAILY or not features & (_HOURLY | _TWICE_DAILY) else \
            "twice_daily" if features & _TWICE_DAILY else "hourly"
        try:
            answer = await service_response(self._store, entity, "get_forecasts", {"type": kind})
        except BackendError as err:
            raise ToolError(phrase(ctx.language, "error.action_failed"), code="backend_unavailable",
                            entity_id=entity.entity_id, detail=str(err)) from err
        now = self._clock()
        days = by_day(answer.get("forecast") or [], now.tzinfo)
        first = now.date() + timedelta(days=1 if args["when"] == "tomorrow" else 0)
        wanted = [first + timedelta(days=n) for n in range(WEEK_DAYS if args["when"] == "week" else 1)]
        said = [d for d in wanted if d in days]
        unit = str(entity.attributes.get("temperature_unit") or "")
        data = {"entity_id": entity.entity_id, "when": args["when"], "unit": unit, "days": [
            {"date": d.isoformat(), "condition": days[d].condition(), "high": max(days[d].temperatures, default=None),
             "low": min(days[d].temperatures, default=None),
             "rain_chance": max(days[d].rain_chances, default=None)} for d in said]}
        if not said:
            return ToolResult(ok=True, data=data, speech=phrase(
                ctx.language, "weather.no_forecast", when=phrase(ctx.language, f"calendar.{args['when']}")))
        sentences = [phrase(ctx.language, "weather.forecast", when=_day_name(d, now.date(), ctx.language),
                            weather=spoken_day(days[d], unit, ctx.language)) for d in said]
        return ToolResult(ok=True, data=data, speech=" ".join(s[:1].upper() + s[1:] for s in sentences))


def by_day(forecast: list[Any], zone: tzinfo | None) -> dict[date, Day]:
    """The forecast's entries gathered by their local day."""
    days: dict[date, Day] = {}
    for entry in forecast:
        if not isinstance(entry, dict) or not isinstance(entry.get("datetime"), str):
            continue
        try:
            when = datetime.fromisoformat(entry["datetime"]).astimezone(zone).date()
        except ValueError:
            continue
        day = days.setdefault(when, Day())
        if isinstance(entry.get("condition"), str) and entry.get("is_daytime", True):
            day.conditions.append(entry["condition"])
        day.temperatures += [float(entry[k]) for k in ("temperature", "templow") if _number(entry.get(k))]
        if _number(entry.get("precipitation_probability")):
            day.rain_chances.append(float(entry["precipitation_probability"]))
    return days


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def spoken_day(day: Day, unit: str, language: str) -> str:
    """"rainy, 15 to 22 °C": the condition in HA's words (left out where HA has none)."""
    temperatures = ""
    if day.temperatures:
        low, high = (f"{format_number(t, language)} {unit}".strip() for t in (min(day.temperatures), max(day.temperatures)))
        temperatures = phrase(language, "weather.range", low=format_number(min(day.temperatures), language),
                              high=high) if low != high else high
    if max(day.rain_chances, default=0) > 0:  # "15 to 22 °C, 80 percent chance of rain"
        chance = phrase(language, "weather.rain_chance", chance=phrase(
            language, "unit.percent", value=format_number(max(day.rain_chances), language)))
        temperatures = f"{temperatures}, {chance}" if temperatures else chance
    condition = day.condition()
    if condition is None or f"forecast.{condition}" not in phrase_keys():
        return temperatures
    word = phrase(language, f"forecast.{condition}")
    return phrase(language, "weather.condition", condition=word, temperatures=temperatures) if temperatures else word


def _day_name(day: date, today: date, language: str) -> str:
    if day == today:
        return phrase(language, "calendar.today")
    if day == today + timedelta(days=1):
        return phrase(language, "calendar.tomorrow")
    weekdays = template(language, "calendar.weekdays").split("|")
    return weekdays[day.weekday()] if len(weekdays) == 7 else day.isoformat()
