"""Whether a service call finds an entity already as it would leave it: then nothing reports a
new state, and the home tools do not wait for one; and whether the state a device reports after
a call says it failed ("jammed"), in the request's language."""

from __future__ import annotations

from typing import Any

from hub.home.colors import COLOR_MODES, COLORS, color_key
from hub.home.entities import Entity
from hub.locales import phrase

# the state a plain service call leaves an entity in (see `already_so`)
_RESULTING_STATE = {"turn_on": "on", "turn_off": "off", "lock": "locked", "unlock": "unlocked",
                    "open_cover": "open", "close_cover": "closed", "open_valve": "open",
                    "close_valve": "closed", "media_play": "playing", "media_pause": "paused"}


# a domain's states that say the call failed → the phrase that says so
_FAILED = {"lock": {"jammed": "error.jammed"}, "vacuum": {"error": "error.device_error"},
           "lawn_mower": {"error": "error.device_error"}, "valve": {"jammed": "error.jammed"}}


def failed(entity: Entity) -> bool:
    """Whether `entity`'s state says the device could not do what it was asked."""
    return entity.state in _FAILED.get(entity.domain, {})


def failure_speech(entity: Entity, language: str) -> str | None:
    """"Sorry, Back Door is jammed.": the sentence for a device whose state says it failed."""
    key = _FAILED.get(entity.domain, {}).get(entity.state)
    return phrase(language, key, name=entity.name) if key else None


def already_so(entity: Entity, service: str, data: dict[str, Any]) -> bool:
    """Whether the call finds `entity` as it would leave it (light at 50 % asked for 50 %, a
    thermostat set to the target it has): the call changes nothing, so neither Home Assistant nor
    an MQTT device reports a new state, and the tool does not wait for one. False when unsure."""
    if not data:
        return _RESULTING_STATE.get(service) == entity.state
    resulting = _resulting(entity, service, data)
    if resulting is None:
        return False
    state, attributes = resulting
    return state == entity.state and all(_same(entity.attributes.get(k), v) for k, v in attributes.items())


def _resulting(entity: Entity, service: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The state and the attributes (in HA's names and units: brightness 0-255, volume 0-1) a
    call with `data` leaves `entity` in; None for a call or data this does not know."""
    keys = set(data)
    if entity.domain == "light" and service == "turn_on" and keys <= {"brightness_pct", "color_name", "rgb_color"}:
        if data.get("brightness_pct") == 0:  # HA turns the light off
            return ("off", {}) if keys == {"brightness_pct"} else None
        attributes: dict[str, Any] = {}
        if "brightness_pct" in data:
            attributes["brightness"] = round(data["brightness_pct"] * 255 / 100)
        if keys & {"color_name", "rgb_color"}:
            if entity.attributes.get("color_mode") not in (None, *COLOR_MODES):  # white or colour temperature now
                return None
            attributes["rgb_color"] = data.get("rgb_color") or COLORS.get(color_key(str(data.get("color_name"))))
        return "on", attributes
    if service == "set_temperature" and keys == {"temperature"} and entity.state != "off":
        return entity.state, {"temperature": data["temperature"]}
    if service in ("set_cover_position", "set_valve_position") and keys == {"position"} and (
            entity.state in ("open", "closed")):  # not on its way somewhere
        return entity.state, {"current_position": data["position"]}
    if service == "volume_set" and keys == {"volume_level"}:
        return entity.state, {"volume_level": data["volume_level"]}
    return None


def _same(reported: Any, wanted: Any) -> bool:
    """An attribute as reported equals the wanted value (a colour as a list or a tuple)."""
    if isinstance(reported, (list, tuple)) and isinstance(wanted, (list, tuple)):
        return tuple(reported) == tuple(wanted)
    return reported is not None and reported == wanted
