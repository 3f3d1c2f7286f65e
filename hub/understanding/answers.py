"""Answers to questions, from the entities' current state, in the request's language. Never acts.

The forms are those of HA's HassGetState responses: one ("what is …"), one_yesno ("is the front
door locked"), any ("are any windows open"), all ("are all the lights off"), which ("which lights
are on") and how_many ("how many lights are on"); plus a thermostat's temperature and the time
and date; and the hub's readings (hub.understanding.home_questions): a device's other reading,
what media players play, the temperature outside, what the home lacks.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from hub.home.state_speech import number_value, spoken_state
from hub.home.entities import Entity
from hub.understanding.assist_responses import assist_answer
from hub.understanding.plans import Question
from hub.locales import format_number, join_list, phrase, template
from hub.locales.states import StateWord, state_word

_MAX_LISTED = 8  # entities named in one answer; more would not be listened to
_NOT_ON = frozenset({"off", "unavailable", "unknown", "standby"})
# Release 2025.6 names some responses in its language ("welches") or by a kind ("any_doors",
# "bs_yesno", "which_bs"): the form each stands for
_FORMS = ("one_yesno", "how_many", "which", "all", "any", "one")
_NAMED_FORMS = {"einzeln": "one", "einzeln_janein": "one_yesno", "irgendeins": "any", "alle": "all",
                "wie_viele": "how_many", "welches": "which", "bs_yesno": "one_yesno", "bs_all": "all"}
# a binary sensor answers "open", "closed", "unlocked", "locked" asked of covers and locks by on/off
_BINARY_STATES = {"open": "on", "closed": "off", "unlocked": "on", "locked": "off"}


def answer(question: Question, language: str, now: datetime) -> str:
    text = _answer(question, language, now)
    return text[:1].upper() + text[1:]  # "On: Desk lamp." when the state comes first


def _answer(question: Question, language: str, now: datetime) -> str:
    if question.intent in ("HassRespond", "HassGetWeather"):
        return assist_answer(question, language)
    if question.intent == "HassGetCurrentTime":
        return phrase(language, "answer.time", time=f"{now.hour}:{now.minute:02d}")
    if question.intent == "HassGetCurrentDate":
        return phrase(language, "answer.date", date=spoken_date(now, language))
    if question.intent in _READINGS:
        return _READINGS[question.intent](question, language)
    targets = question.targets
    form = _response_form(question.response)
    if question.state is None or form == "one":
        return " ".join(spoken_state(e, language) for e in targets[:_MAX_LISTED])
    matching = [e for e in targets if in_state(e, question.state)]
    word = _spoken_word(question, language)
    state = word.text
    # "Nothing is open." / "Opening: none." (a label cannot follow "is")
    none_key = "answer.which_none" if word.predicate else "answer.which_none_label"
    if form == "how_many":
        return phrase(language, "answer.count", state=state, count=len(matching), total=len(targets))
    if form == "which":
        if not matching:
            return phrase(language, none_key, state=state)
        return phrase(language, "answer.which", state=state, items=_names(matching, language))
    if form == "all":
        others = [e for e in targets if e not in matching]
        if not others:
            return phrase(language, "answer.yes")
        return f"{phrase(language, 'answer.no')} {_states(others, language)}"
    # one_yesno, any
    if matching:
        return f"{phrase(language, 'answer.yes')} {_states(matching, language)}"
    return f"{phrase(language, 'answer.no')} {_states(targets, language)}" if len(targets) == 1 \
        else phrase(language, none_key, state=state)


def _device_reading(question: Question, language: str) -> str:
    """"Motion Sensor Battery is 55 percent.", or that the device has no such reading."""
    if question.targets:
        return _states(question.targets, language)
    return phrase(language, "reading.none", part=phrase(language, f"part.{question.response}"),
                  name=question.slots.get("name", ""))


def _media(question: Question, language: str) -> str:
    """The players named, as they are; else those playing, or that nothing is (and what is paused)."""
    if question.response == "named":
        return _states(question.targets, language)
    playing = [e for e in question.targets if e.state in ("playing", "buffering")]
    if playing:
        return _states(playing, language)
    paused = [e for e in question.targets if e.state == "paused"]
    return " ".join([phrase(language, "media.nothing_playing"), *([_states(paused, language)] if paused else [])])


def _outside(question: Question, language: str) -> str:
    """The weather service's temperature outside, then any outside sensor's."""
    said = []
    for entity in question.targets:
        temperature = number_value(entity.attributes.get("temperature")) if entity.domain == "weather" else None
        if temperature is not None:
            unit = str(entity.attributes.get("temperature_unit") or "")
            value = f"{format_number(temperature, language)} {unit}".strip()
            said.append(phrase(language, "weather.outside", name=entity.name, temperature=value))
        elif entity.domain != "weather":
            said.append(spoken_state(entity, language))
    return " ".join(said) or phrase(language, "missing.weather")


_READINGS: dict[str, Callable[[Question, str], str]] = {
    "HubDeviceReading": _device_reading, "HubMediaState": _media, "HubOutside": _outside,
    "HubMissing": lambda question, language: phrase(language, f"missing.{question.response}"),
}


def _response_form(response: str) -> str:
    """The HassGetState form a template's response name stands for ("any_doors" → "any")."""
    if response in _NAMED_FORMS:
        return _NAMED_FORMS[response]
    for form in _FORMS:
        if response == form or response.startswith(f"{form}_") or response.endswith(f"_{form}"):
            return form
    return response


def in_state(entity: Entity, state: str) -> bool:
    """Whether the entity is in the state asked about ("on" for a heating thermostat too, "open"
    for a door sensor that is on)."""
    if state == "on" and entity.domain in ("vacuum", "lawn_mower"):  # at work, not waiting in its dock
        return entity.state in ("cleaning", "returning", "mowing")
    if state == "on" and entity.domain in ("climate", "media_player", "humidifier"):
        return entity.state not in _NOT_ON
    if entity.domain == "binary_sensor" and state in _BINARY_STATES:
        return entity.state == _BINARY_STATES[state]
    return entity.state == state


def spoken_date(now: datetime, language: str) -> str:
    """"December 1, 2026" / "1. Dezember 2026" from the language's month names and pattern."""
    months = template(language, "date.months").split("|")
    month = months[now.month - 1] if len(months) == 12 else str(now.month)
    return phrase(language, "date.pattern", day=now.day, month=month, year=now.year)


def _spoken_word(question: Question, language: str) -> StateWord:
    """The state asked about, in the targets' words ("battery low" for batteries, "on" for
    lights); else as the question said it."""
    state = str(question.state)
    kinds = {(e.domain, e.device_class) for e in question.targets}
    domain, device_class = kinds.pop() if len(kinds) == 1 else ("", None)
    return state_word(language, domain, state, device_class) or StateWord(question.state_text or state, True)


def _names(entities: list[Entity], language: str) -> str:
    return join_list([e.name for e in entities[:_MAX_LISTED]], language)


def _states(entities: list[Entity], language: str) -> str:
    return " ".join(spoken_state(e, language) for e in entities[:_MAX_LISTED])
