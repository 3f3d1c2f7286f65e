"""Home Assistant's device intents beyond on/off, lights' brightness and colour, thermostats and
positions: what their slots mean as a tool call, the kind of device each means when the sentence
names none, and which of several unnamed devices they act on, as HA's handlers choose:
- with no name, area or floor ("mute", "turn the volume up", "start mowing"), every device of the
  intent's kind in the home: one is that one; several ask "which one?" (HA's templates need the
  speaker's area there);
- several media players not named: pausing, skipping and setting the volume take those playing,
  resuming those paused (HA's media handlers), when that leaves any;
- HassVacuumCleanArea's area is the room to clean, not where the vacuum is;
- HassClimateSetFanMode with no place: the home's one thermostat, as a temperature is set
  (recognition's `climate_only`; HA's template asks for the speaker's area);
- HassMediaSearchAndPlay plays on one player (HA's `single_target`): several left ask which.
"""

from __future__ import annotations

from typing import Any

from hub.home.entities import Entity
from hub.home.media_search import MEDIA_CLASSES

MEDIA_INTENTS = frozenset({"HassMediaPause", "HassMediaUnpause", "HassMediaNext", "HassMediaPrevious",
                           "HassSetVolume", "HassSetVolumeRelative", "HassMediaPlayerMute",
                           "HassMediaPlayerUnmute", "HassMediaSearchAndPlay"})
DEVICE_INTENTS = frozenset({"HassFanSetSpeed", "HassSetVolumeRelative", "HassMediaPlayerMute",
                            "HassMediaPlayerUnmute", "HassVacuumCleanArea", "HassLawnMowerStartMowing",
                            "HassLawnMowerDock", "HassClimateSetFanMode", "HassMediaSearchAndPlay",
                            "HassHumidifierSetpoint"})
# intents whose templates without a name or place ask for the speaker's area; matched without
# one, they mean every device of their kind (see `anywhere`)
SAID_ANYWHERE = MEDIA_INTENTS | {"HassFanSetSpeed"}
IMPLIED_DOMAINS = {"HassFanSetSpeed": "fan", "HassVacuumCleanArea": "vacuum",
                   "HassLawnMowerStartMowing": "lawn_mower", "HassLawnMowerDock": "lawn_mower",
                   "HassVacuumStart": "vacuum", "HassVacuumReturnToBase": "vacuum",
                   "HassClimateSetFanMode": "climate", "HassHumidifierSetpoint": "humidifier",
                   **{intent: "media_player" for intent in MEDIA_INTENTS}}
TOOL_DOMAINS = {"set_fan_speed": {"fan"}, "change_volume": {"media_player"}, "mute": {"media_player"},
                "clean_area": {"vacuum"}, "set_fan_mode": {"climate"}, "search_and_play": {"media_player"},
                "set_humidity": {"humidifier"}}
NOT_A_PLACE = {"HassVacuumCleanArea": "area"}  # a slot that says what to do, not where the device is
_ONE_OF_KIND = SAID_ANYWHERE | {"HassVacuumStart", "HassVacuumReturnToBase", "HassVacuumCleanArea",
                                "HassLawnMowerStartMowing", "HassLawnMowerDock"}
_WANTED_STATE = {"HassMediaPause": "playing", "HassMediaNext": "playing", "HassMediaPrevious": "playing",
                 "HassSetVolume": "playing", "HassSetVolumeRelative": "playing",
                 "HassMediaUnpause": "paused"}


def device_tool(intent: str, slots: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The tool and arguments for one of `DEVICE_INTENTS`; (None, {}) when a slot it needs is missing."""
    if intent == "HassFanSetSpeed" and _number(slots.get("percentage")):
        return "set_fan_speed", {"percentage": int(round(slots["percentage"]))}
    if intent == "HassSetVolumeRelative":
        step = slots.get("volume_step")
        if step in ("up", "down"):
            return "change_volume", {"step": step}
        if _number(step) and step:
            return "change_volume", {"step": int(round(step))}
    if intent in ("HassMediaPlayerMute", "HassMediaPlayerUnmute"):
        return "mute", {"muted": intent == "HassMediaPlayerMute"}
    if intent == "HassVacuumCleanArea" and isinstance(slots.get("area"), str) and slots["area"]:
        return "clean_area", {"area": slots["area"]}
    if intent == "HassHumidifierSetpoint" and _number(slots.get("humidity")):
        return "set_humidity", {"humidity": int(round(slots["humidity"]))}
    if intent == "HassClimateSetFanMode" and isinstance(slots.get("fan_mode"), str) and slots["fan_mode"]:
        return "set_fan_mode", {"fan_mode": slots["fan_mode"]}
    query = slots.get("search_query")
    if intent == "HassMediaSearchAndPlay" and isinstance(query, str) and query.strip():
        kind = slots.get("media_class")
        return "search_and_play", {"query": query.strip(), **({"media_class": kind} if kind in MEDIA_CLASSES else {})}
    if intent in ("HassLawnMowerStartMowing", "HassLawnMowerDock"):
        return ("turn_on" if intent == "HassLawnMowerStartMowing" else "turn_off"), {}
    return None, {}


def light_temperature(slots: dict[str, Any]) -> dict[str, Any]:
    """HassLightSet's colour temperature (kelvin) as `set_light`'s argument, if said."""
    kelvin = slots.get("temperature")
    if not isinstance(kelvin, (int, float)) or isinstance(kelvin, bool) or not 1000 <= kelvin <= 10000:
        return {}
    return {"color_temp": int(round(kelvin))}


def anywhere(intent: str, slots: dict[str, Any]) -> bool:
    """An intent said with no name, area or floor that means every device of its kind."""
    return intent in _ONE_OF_KIND and not any(isinstance(slots.get(k), str) for k in ("area", "floor")) \
        and "name" not in slots


def preferred(intent: str, targets: list[Entity], anywhere_said: bool,
              music_said: bool = False) -> tuple[list[Entity], bool]:
    """Of several unnamed targets, those HA's handler acts on (media players playing, or paused
    for resuming; what plays when `music_said`: "mute the music"), and whether the choice of one
    of them is the user's ("which one?": nothing said where)."""
    wanted = _WANTED_STATE.get(intent) or ("playing" if music_said and intent in MEDIA_INTENTS else None)
    if len(targets) > 1 and wanted is not None:
        targets = [e for e in targets if e.state == wanted] or targets
    single = anywhere_said or intent == "HassMediaSearchAndPlay"
    return targets, single and len(targets) > 1


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
