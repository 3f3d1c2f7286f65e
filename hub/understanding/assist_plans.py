"""What the fast path does for Assist's intents beyond devices: timers (start, cancel one or all,
pause, resume, add or remove time, status), to-do and shopping lists (and what is on one), the
calendar, the weather and its forecast, a broadcast — as the tool call that carries each out;
the weather station asked about.

HA's handlers' semantics: a timer is meant by its name, area and starting duration (the tool
picks the asking device's, then its area's, of several); a list by its name (the shopping list:
`todo.shopping_list`, else the only list); the weather of the station named, else the first.
"""

from __future__ import annotations

from typing import Any

from hassil.recognize import RecognizeResult

from hub.home.entities import Entity, EntityStore
from hub.home.normalize import base_language, fold
from hub.home.question_words import question_words

_TIMER_TOOLS = {"HassStartTimer": "start_timer", "HassCancelTimer": "cancel_timer",
                "HassCancelAllTimers": "cancel_all_timers", "HassPauseTimer": "pause_timer",
                "HassUnpauseTimer": "resume_timer", "HassIncreaseTimer": "change_timer",
                "HassDecreaseTimer": "change_timer", "HassTimerStatus": "timer_status"}
TIMER_INTENTS = frozenset(_TIMER_TOOLS)
_LIST_TOOLS = {"HassListAddItem": "add_to_list", "HassShoppingListAddItem": "add_to_list",
               "HassListCompleteItem": "complete_on_list", "HassShoppingListCompleteItem": "complete_on_list",
               "HassListRemoveItem": "remove_from_list"}
LIST_INTENTS = frozenset(_LIST_TOOLS)
# the hub's own intents (hub/locales/sentences/): HA has no template for reading a list, the
# calendar or the forecast; `when` is a template's fixed slot (today | tomorrow | week)
READ_INTENTS = frozenset({"HubListItems", "HubCalendarEvents", "HubWeatherForecast"})
ASSIST_INTENTS = TIMER_INTENTS | LIST_INTENTS | READ_INTENTS | {"HassBroadcast"}
SHOPPING_LIST = "todo.shopping_list"
_UNITS = ("hours", "minutes", "seconds")
_MAX_TIMER_NAME_WORDS = 3


def assist_call(intent: str, slots: dict[str, Any], result: RecognizeResult, store: EntityStore,
                language: str) -> tuple[str, dict[str, Any], list[Entity]] | None:
    """(tool, arguments, targets: one call each, else one call with the arguments alone; a list
    meant by a name several lists answer to: each of them, for the planner to ask which)."""
    if intent in TIMER_INTENTS:
        args = _timer_args(intent, slots, result)
        return (_TIMER_TOOLS[intent], args, []) if args is not None else None
    if intent in LIST_INTENTS:
        todos = _lists(slots, store, shopping=intent.startswith("HassShoppingList"))
        item = _item(str(result.entities["item"].text if "item" in result.entities else ""), language)
        return (_LIST_TOOLS[intent], {"item": item}, todos) if todos and item else None
    if intent in READ_INTENTS:
        return _read_call(intent, slots, store)
    if intent == "HassBroadcast" and "message" in result.entities:
        message = str(result.entities["message"].text).strip()
        return ("broadcast", {"message": message}, []) if message else None
    return None


def _read_call(intent: str, slots: dict[str, Any], store: EntityStore) -> tuple[str, dict[str, Any], list[Entity]] | None:
    """What's on a list (the shopping list when the template says so; every list a name several
    answer to), the calendar (the one named, else every calendar: no target), the forecast (the
    station named, else the first)."""
    when = {"when": slots["when"]} if slots.get("when") in ("today", "tomorrow", "week") else {"when": "today"}
    if intent == "HubListItems":
        todos = _lists(slots, store, shopping=slots.get("list") == "shopping")
        # a name several lists answer to ("meine Liste"): each is read out, none asked about
        return ("list_items", {}, todos if len(todos) == 1 else []) if todos else None
    if intent == "HubCalendarEvents":
        return "calendar_events", when, [e for e in _named(slots, store) if e.domain == "calendar"][:1]
    station = weather_station(slots, store)
    return ("weather_forecast", when, [station]) if station is not None else None


def _item(said: str, language: str) -> str:
    """The item as said, without the words a template left at its end ("Milch zu meinen" of
    "Füge Milch zu meinen Aufgaben hinzu": the list's name took "Aufgaben" alone)."""
    words = said.strip(" .,!?").split()
    table = question_words(base_language(language))
    while len(words) > 1 and table is not None and table.says(f" {fold(words[-1], language)} ", "word.stop"):
        words.pop()
    return " ".join(words)


def _timer_args(intent: str, slots: dict[str, Any], result: RecognizeResult) -> dict[str, Any] | None:
    said = {unit: int(slots[unit]) for unit in _UNITS if isinstance(slots.get(unit), (int, float))}
    start = {f"start_{unit}": int(slots[f"start_{unit}"]) for unit in _UNITS
             if isinstance(slots.get(f"start_{unit}"), (int, float))}
    if intent == "HassStartTimer":
        seconds = sum(v * f for v, f in zip((said.get(u, 0) for u in _UNITS), (3600, 60, 1)))
        if seconds < 1:
            return None
        hours, rest = divmod(seconds, 3600)
        args: dict[str, Any] = {k: v for k, v in zip(_UNITS, (hours, *divmod(rest, 60))) if v}
    elif intent in ("HassIncreaseTimer", "HassDecreaseTimer"):
        if not said:
            return None
        args = {**said, **start, **({"remove": True} if intent == "HassDecreaseTimer" else {})}
    else:
        args = dict(start)
    command = result.entities.get("conversation_command")
    if intent == "HassStartTimer" and command is not None and str(command.text).strip():
        args["command"] = str(command.text).strip(" .,!?")  # a delayed command (HA's semantics)
    if isinstance(slots.get("area"), str) and intent != "HassStartTimer":
        args["area"] = slots["area"]
    name = result.entities.get("name")
    if name is not None and len(str(name.text).split()) <= _MAX_TIMER_NAME_WORDS and intent != "HassCancelAllTimers":
        args["name"] = str(name.text).strip()
    return args


def weather_station(slots: dict[str, Any], store: EntityStore) -> Entity | None:
    """The weather entity named, else the first (HA's handler takes the first match)."""
    stations = [e for e in _named(slots, store) if e.domain == "weather"] or \
        [e for e in store.all() if e.domain == "weather"]
    return stations[0] if stations else None


def _named(slots: dict[str, Any], store: EntityStore) -> list[Entity]:
    ids = slots.get("name")
    if not isinstance(ids, frozenset):
        return []
    return [e for e in map(store.get, sorted(ids)) if e is not None]


def _lists(slots: dict[str, Any], store: EntityStore, shopping: bool) -> list[Entity]:
    """The lists the name means (several: "my tasks" of two task lists, asked which), else the
    shopping list when the template says so."""
    named = [e for e in _named(slots, store) if e.domain == "todo"]
    if named or not shopping:
        return named
    lists = [e for e in store.all() if e.domain == "todo"]
    found = store.get(SHOPPING_LIST) or (lists[0] if len(lists) == 1 else None)
    return [found] if found is not None else []
