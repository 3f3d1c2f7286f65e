"""Home Assistant's own reply to an intent, in the request's language: the response templates the
installed home-assistant-intents ships (Jinja, as HA renders them, here in a sandbox), for
HassRespond's greeting, the weather ("47 °F and raining") and errors ("no device called … in the
… area"). A language with no such reply hears the hub's own words (`hub/locales/phrases/assist/`),
as do questions about the hub itself ("where does my data go?": HA's replies are about HA)."""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from home_assistant_intents import get_intents
from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from hub.home.state_speech import number_value
from hub.locales import format_number, phrase
from hub.understanding.plans import Question
from hub.understanding.recognition import intents_language

# an attribute the entity lacks (a weather entity without temperature_unit) is said as nothing, never "None"
_ENV = ImmutableSandboxedEnvironment(finalize=lambda value: "" if value is None else value)
_WEATHER_UNITS = ("temperature_unit", "pressure_unit", "wind_speed_unit", "visibility_unit", "precipitation_unit")
# HassRespond's replies the hub gives: HA's greeting; about itself ("are you always listening?",
# "where does my data go?", "what can I say?", "who made you?") its own words, as HA's are about HA
RESPONDED = frozenset({"hello", "listening", "data", "commands", "creator"})


@lru_cache(maxsize=None)
def _responses(code: str) -> dict[str, dict[str, str]]:
    data = get_intents(code) or {}
    return dict((data.get("responses") or {}).get("intents") or {})


@lru_cache(maxsize=None)
def _errors(code: str) -> dict[str, str]:
    data = get_intents(code) or {}
    return dict((data.get("responses") or {}).get("errors") or {})


def assist_answer(question: Question, language: str) -> str:
    """HA's reply to HassRespond or HassGetWeather (its station, `question.targets[0]`)."""
    if question.intent == "HassRespond":
        if question.response != "hello":
            return phrase(language, f"about.{question.response}")
        return ha_response(language, question.intent, question.response) or phrase(language, "action.done")
    station = question.targets[0]
    # HA's weather entities always have their units; one that lacks them says the number alone
    attributes = {**dict.fromkeys(_WEATHER_UNITS, ""), **{k: v for k, v in station.attributes.items() if v is not None}}
    state = SimpleNamespace(state=station.state, attributes=attributes, name=station.name)
    said = ha_response(language, question.intent, question.response, state=state)
    temperature = number_value(station.attributes.get("temperature"))
    if said and (temperature is None or format_number(temperature, language) in said or str(temperature) in said):
        return said
    value = format_number(temperature, language) if temperature is not None else "?"
    unit = str(station.attributes.get("temperature_unit") or "")
    return phrase(language, "weather.now", name=station.name, temperature=f"{value} {unit}".strip())


def ha_response(language: str, intent: str, key: str, slots: dict[str, Any] | None = None,
                **context: Any) -> str | None:
    """HA's reply `key` to `intent` in `language`, rendered with `slots` (and `context`: `state`
    as HA's templates read it); None if it has none."""
    code = intents_language(language)
    return _render(_responses(code).get(intent, {}).get(key) if code else None, slots=slots or {}, **context)


def ha_error(language: str, key: str, **values: Any) -> str | None:
    """HA's error reply `key` ("no_entity_in_area") in `language`, rendered with `values`."""
    code = intents_language(language)
    return _render(_errors(code).get(key) if code else None, **values)


def _render(text: str | None, **context: Any) -> str | None:
    if not text:
        return None
    try:
        rendered = _ENV.from_string(text).render(**context)
    except TemplateError:
        return None
    return " ".join(rendered.split()) or None
