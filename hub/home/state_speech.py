"""An entity's state as the model gets it back (`state_data`) and as a sentence in the user's
language (`spoken_state`)."""

from __future__ import annotations

from typing import Any

from hub.home.context import key_attributes
from hub.home.entities import Entity
from hub.locales import format_number, phrase
from hub.locales.states import StateWord, state_word

_UNIT_PHRASES = {"°C": "unit.celsius", "°F": "unit.fahrenheit", "%": "unit.percent",
                 "km/h": "unit.kmh", "kWh": "unit.kwh", "W": "unit.watt"}
_MEDIA_STATES = frozenset({"playing", "paused", "buffering", "on"})


def state_data(entity: Entity) -> dict[str, Any]:
    """What the model gets back about an entity: id, name, state and key attributes."""
    return {"entity_id": entity.entity_id, "name": entity.name, "state": entity.state,
            **key_attributes(entity)}


def spoken_state(entity: Entity, language: str) -> str:
    """"Kitchen light is on." / "Robot vacuum: cleaning." / "Outside temperature is 12,5 degrees
    Celsius." in `language`."""
    attrs = entity.attributes
    word = state_word(language, entity.domain, entity.state, entity.device_class)
    current = number_value(attrs.get("current_temperature"))
    if entity.domain == "climate" and current is not None:
        word = StateWord(phrase(language, "unit.degrees", value=format_number(current, language)), True)
    elif word is None and _is_number(entity.state):
        number = format_number(float(entity.state), language)
        unit = str(attrs.get("unit_of_measurement") or "")
        unit_key = _UNIT_PHRASES.get(unit)
        # a unit the hub has no words for is said as written ("-61 dBm"), never left out
        word = StateWord(phrase(language, unit_key, value=number) if unit_key else f"{number} {unit}".strip(), True)
    elif word is None:  # a custom state ("washing"): the device's own word, as a label
        word = StateWord(entity.state, False)
    playing = now_playing(entity, language)
    if playing and entity.state in _MEDIA_STATES:  # "Living room speaker: paused, So What by Miles Davis."
        word = StateWord(phrase(language, "media.state_what", state=word.text, what=playing), False)
    return word.sentence(language, entity.name)


def now_playing(entity: Entity, language: str) -> str | None:
    """What a media player plays ("So What by Miles Davis"), None when it says nothing."""
    title = entity.attributes.get("media_title")
    if not isinstance(title, str) or not title.strip() or entity.domain != "media_player":
        return None
    artist = entity.attributes.get("media_artist") or entity.attributes.get("media_album_artist")
    if isinstance(artist, str) and artist.strip():
        return phrase(language, "media.title_by", title=title.strip(), artist=artist.strip())
    return title.strip()


def number_value(value: Any) -> float | None:
    """An attribute as a number, also when an integration writes it as text ("20.5"); None when
    it is none (or NaN)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # not NaN


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
