"""What is on the calendar today, tomorrow, this week or next: HA's `calendar.get_events` (a
service that answers, hub.home.queries) on the calendar named, else on every calendar of the
home, read out in time order with their times in the request's language; only the events that
say the question's words ("who am I meeting for dinner?": "Dinner with Liza"), or that take place
somewhere (`away`: "am I leaving the house today?"), when it asks so.

The spans are those of HA's own LLM tool (`calendar_get_events`): today is from now to midnight,
this week from now to midnight six days on; tomorrow is the whole of tomorrow; next is the first
event of the coming four weeks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Callable

from hub.core.messages import ToolSpec
from hub.core.tools import ToolContext, ToolError, ToolResult
from hub.home.entities import BackendError, Entity, EntityStore
from hub.home.queries import service_response
from hub.home.question_words import WORDS_ARGUMENT, mentions
from hub.locales import join_list, phrase, template

WHEN = ("today", "tomorrow", "week", "next")
MAX_SPOKEN = 8  # events read out; the rest are counted
NEXT_DAYS = 28  # how far ahead "next" looks


@dataclass(frozen=True)
class Event:
    summary: str
    start: datetime | date  # a date: all day
    calendar: str
    location: str = ""
    description: str = ""

    @property
    def all_day(self) -> bool:
        return not isinstance(self.start, datetime)

    def sort_key(self) -> tuple[date, bool, str]:
        start = self.start
        day = start.date() if isinstance(start, datetime) else start
        return day, not self.all_day, start.strftime("%H:%M") if isinstance(start, datetime) else ""


def span(when: str, now: datetime) -> tuple[datetime, datetime]:
    """The start and end of `when` (today | tomorrow | week), in `now`'s time zone."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if when == "tomorrow":
        return midnight + timedelta(days=1), midnight + timedelta(days=2)
    return now, midnight + timedelta(days={"week": 7, "next": NEXT_DAYS}.get(when, 1))


class CalendarEvents:
    """A tool that only reads the home: the events of a span."""

    changes_home = False
    domains = frozenset({"calendar"})
    previews = True  # a plan reads the calendar as a turn does: nothing is changed
    spec = ToolSpec("calendar_events", "What is on the calendar today, tomorrow, this week or next.", {
        "type": "object", "additionalProperties": False, "required": ["when"],
        "properties": {"when": {"type": "string", "enum": list(WHEN)},
                       "entity_id": {"type": "string", "description": "one calendar; none: every calendar"},
                       "words": WORDS_ARGUMENT,
                       "away": {"type": "boolean", "description": "only the events that take place somewhere"}}},
        entity_args=("entity_id",))

    def __init__(self, store: EntityStore, clock: Callable[[], datetime] | None = None) -> None:
        self._store = store
        self._clock = clock or (lambda: datetime.now().astimezone())

    def offered(self) -> bool:
        return self._store.has_any(self.domains)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        calendars = self._calendars(args.get("entity_id"), ctx)
        now = self._clock()
        start, end = span(args["when"], now)
        events: list[Event] = []
        for calendar in calendars:
            try:
                answer = await service_response(self._store, calendar, "get_events", {
                    "start_date_time": start.isoformat(), "end_date_time": end.isoformat()})
            except BackendError as err:
                raise ToolError(phrase(ctx.language, "error.action_failed"), code="backend_unavailable",
                                entity_id=calendar.entity_id, detail=str(err)) from err
            events += [e for e in map(lambda raw: _event(raw, calendar, now), answer.get("events") or []) if e]
        events.sort(key=Event.sort_key)
        asked = Asked(args["when"], tuple(args.get("words") or ()), bool(args.get("away")))
        events = asked.chosen(events)
        return ToolResult(ok=True, speech=asked.spoken(events, ctx.language), data={
            "when": args["when"], "start": start.isoformat(), "end": end.isoformat(),
            "events": [{"summary": e.summary, "start": e.start.isoformat(), "all_day": e.all_day,
                        "calendar": e.calendar, **({"location": e.location} if e.location else {})}
                       for e in events]})

    def _calendars(self, entity_id: str | None, ctx: ToolContext) -> list[Entity]:
        if entity_id is None:
            found = [e for e in self._store.all() if e.domain == "calendar"]
        else:
            entity = self._store.get(entity_id)
            found = [entity] if entity is not None and entity.domain == "calendar" else []
        if not found:
            spoken = entity_id.split(".", 1)[-1].replace("_", " ") if entity_id else "calendar"
            raise ToolError(phrase(ctx.language, "entity.not_found", name=spoken), code="unknown_entity")
        return found


def _event(raw: Any, calendar: Entity, now: datetime) -> Event | None:
    """An event of HA's response ({summary, start, end, ...}; a start without a time: all day)."""
    if not isinstance(raw, dict) or not raw.get("summary") or not isinstance(raw.get("start"), str):
        return None
    try:
        if "T" in raw["start"]:
            start: datetime | date = datetime.fromisoformat(raw["start"]).astimezone(now.tzinfo)
        else:
            start = date.fromisoformat(raw["start"])
    except ValueError:
        return None
    return Event(_text(raw["summary"]), start, calendar.name, _text(raw.get("location")), _text(raw.get("description")))


def _text(value: Any) -> str:
    return " ".join(str(value or "").split())[:100]


@dataclass(frozen=True)
class Asked:
    """What a question asks of a span's events: those that say one of `words`, those that take
    place somewhere (`away`); the first alone for `when` "next"."""

    when: str
    words: tuple[str, ...] = ()
    away: bool = False

    def chosen(self, events: list[Event]) -> list[Event]:
        found = [e for e in events if (not self.away or e.location) and (not self.words or self._says(e))]
        return found[:1] if self.when == "next" else found

    def spoken(self, events: list[Event], language: str) -> str:
        """The events, or that none fits what was asked ("Nothing about dinner on the calendar today.")."""
        if events or not (self.words or self.away):
            return spoken_events(events, self.when, language, located=self.away)
        when = phrase(language, f"calendar.{self.when}")
        if self.away:
            return phrase(language, "calendar.nothing_away", when=when)
        return phrase(language, "calendar.nothing_about", when=when, words=join_list(list(self.words), language))

    def _says(self, event: Event) -> bool:
        return mentions(" ".join((event.summary, event.location, event.description)), self.words)


def spoken_events(events: list[Event], when: str, language: str, located: bool = False) -> str:
    """"Today: Dentist at 9:30 and Future Event at 14:30." — the first few, the rest counted;
    `located`: each with its place."""
    spoken_when = phrase(language, f"calendar.{when}")
    if not events:
        return phrase(language, "calendar.nothing", when=spoken_when)
    parts = [_spoken_event(e, when, language) for e in events[:MAX_SPOKEN]]
    if located:
        parts = [phrase(language, "calendar.located", event=part, location=e.location) if e.location else part
                 for part, e in zip(parts, events)]
    text = phrase(language, "calendar.events", when=spoken_when, events=join_list(parts, language))
    more = len(events) - MAX_SPOKEN
    return f"{text} {phrase(language, 'calendar.more', count=more)}" if more > 0 else text


def _spoken_event(event: Event, when: str, language: str) -> str:
    start = event.start
    time = f"{start.hour}:{start.minute:02d}" if isinstance(start, datetime) else None
    if when in ("today", "tomorrow"):
        return phrase(language, "calendar.at", summary=event.summary, time=time) if time else event.summary
    weekdays = template(language, "calendar.weekdays").split("|")
    day = weekdays[start.weekday()] if len(weekdays) == 7 else start.isoformat()[:10]
    if time is None:
        return phrase(language, "calendar.on", summary=event.summary, day=day)
    return phrase(language, "calendar.on_at", summary=event.summary, day=day, time=time)
