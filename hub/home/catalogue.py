"""The home tools the model (and the fast path) call: HA's intents, one entity id at a time.

Every tool checks the entity exists and that its domain supports the action, then makes the
Home Assistant service call through the entity's backend and answers with the new state and a
short localized sentence (`hub.home.entity_tool`). Every service call passes the safety policy
(`hub.home.policy`) first; without one, locks and alarm panels are refused outright. With an
action tracker, a call whose completion is a later state change (covers, valves, vacuums, locks,
scripts) is acknowledged at once and its outcome reported when the state arrives
(`hub.home.watches`). The tools of the other kinds of devices (fans' speed, media volume and
muting, vacuums' areas, humidifiers, water heaters) are in `hub.home.device_tools`.
"""

from __future__ import annotations

from typing import Any

from hub.home.colors import COLOR_MODES, COLORS, color_key
from hub.home.device_readings import readings
from hub.home.device_tools import DEVICE_TOOLS
from hub.home.media_search import SearchAndPlay
from hub.home.entities import Entity, EntityStore
from hub.home.outcomes import failure_speech
from hub.home.entity_tool import ENTITY, PERCENT, EntityTool, entity_schema
from hub.home.policy import ActionPolicy
from hub.home.resolve import EntityResolver
from hub.home.state_speech import spoken_state, state_data
from hub.core.tools import Tool, ToolContext, ToolError, ToolResult
from hub.home.watches import ActionTracker
from hub.locales import format_number, phrase

_ON_OFF = ("light", "switch", "fan", "input_boolean", "media_player", "climate", "humidifier",
           "water_heater", "automation", "siren")
TURN_ON_SERVICES = {**{d: "turn_on" for d in _ON_OFF}, "cover": "open_cover",
                    "valve": "open_valve", "scene": "turn_on", "script": "turn_on",
                    "button": "press", "input_button": "press", "lock": "lock",
                    "vacuum": "start", "lawn_mower": "start_mowing"}
TURN_OFF_SERVICES = {**{d: "turn_off" for d in _ON_OFF}, "cover": "close_cover",
                     "valve": "close_valve", "script": "turn_off", "lock": "unlock",
                     "vacuum": "return_to_base", "lawn_mower": "dock"}
MEDIA_SERVICES = {"pause": "media_pause", "resume": "media_play", "next": "media_next_track",
                  "previous": "media_previous_track"}
KELVIN = {"type": "integer", "minimum": 1000, "maximum": 10000,
          "description": "color temperature in kelvin: 2700 warm white, 4000 cool white, 6500 daylight"}


class TurnOn(EntityTool):
    name = "turn_on"
    description = "Turn on; also opens covers and valves, locks, runs scenes and scripts, presses, starts vacuums."
    services = TURN_ON_SERVICES

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        service = self.services.get(entity.domain)
        if service is None:
            raise self._unsupported(entity, ctx.language, "switch")
        after = await self._call(entity, service, {}, ctx, args)
        if (failure := failure_speech(after, ctx.language)) is not None:  # "Back Door is jammed"
            raise ToolError(failure, code="device_failed", entity_id=entity.entity_id, state=after.state)
        return (self._acknowledged(after, service, {}, ctx)
                or self._done(after, self._speech(after, ctx.language)))

    def _speech(self, entity: Entity, language: str) -> str:
        if entity.domain in ("cover", "valve", "lock"):
            if entity.state in ("open", "closed", "locked", "unlocked"):
                return phrase(language, "action.reported", name=entity.name,
                              state=phrase(language, f"state.{entity.state}"))
            return phrase(language, "action.acknowledged", name=entity.name)
        if entity.domain in ("scene", "script", "button", "input_button"):
            return phrase(language, "action.done")
        if entity.domain in ("vacuum", "lawn_mower"):  # HA: "Started", "Returning"
            key = "action.started" if self.services is TURN_ON_SERVICES else "action.docking"
            return phrase(language, key, name=entity.name)
        return phrase(language, "action.turned_on", name=entity.name)


class TurnOff(TurnOn):
    name = "turn_off"
    description = "Turn off; also closes covers and valves, unlocks, stops scripts, docks vacuums and mowers."
    services = TURN_OFF_SERVICES

    def _speech(self, entity: Entity, language: str) -> str:
        if entity.domain in _ON_OFF:
            return phrase(language, "action.turned_off", name=entity.name)
        return super()._speech(entity, language)


class SetLight(EntityTool):
    name = "set_light"
    description = "Set a light's brightness (percent, 0 turns it off), color and/or color temperature."
    parameters = entity_schema(
        brightness=PERCENT,
        color={"type": "string", "description": "name like red or blue, or #RRGGBB"},
        color_temp=KELVIN,
    )
    domains = frozenset({"light"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not any(k in args for k in ("brightness", "color", "color_temp")):
            raise self._invalid(entity, ctx.language, "Give brightness, color or color_temp.")
        modes = set(entity.attributes.get("supported_color_modes") or ())
        data: dict[str, Any] = {}
        if "brightness" in args:
            if modes == {"onoff"}:
                raise self._unsupported(entity, ctx.language, "dim")
            data["brightness_pct"] = args["brightness"]
        if "color" in args:
            if modes and not modes & COLOR_MODES:
                raise self._unsupported(entity, ctx.language, "color")
            try:
                data.update(_color_data(args["color"]))
            except ValueError as err:
                raise self._invalid(entity, ctx.language, str(err)) from None
        if "color_temp" in args:
            # HA shows a color temperature on a light of colors too (it converts it)
            if modes and not modes & (COLOR_MODES | {"color_temp"}):
                raise self._unsupported(entity, ctx.language, "set the color temperature of")
            data["color_temp_kelvin"] = args["color_temp"]
        after = await self._call(entity, "turn_on", data, ctx, args)
        return self._done(after, _light_speech(entity, args, ctx.language))


class SetTemperature(EntityTool):
    name = "set_temperature"
    description = "Set a thermostat's or a water heater's target temperature."
    parameters = entity_schema(("entity_id", "temperature"), temperature={"type": "number"})
    domains = frozenset({"climate", "water_heater"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        value = float(args["temperature"])
        low, high = entity.attributes.get("min_temp"), entity.attributes.get("max_temp")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self._invalid(entity, ctx.language, f"{entity.entity_id} accepts {low} to {high} degrees.")
        after = await self._call(entity, "set_temperature", {"temperature": value}, ctx, args)
        spoken = phrase(ctx.language, "unit.degrees", value=format_number(value, ctx.language))
        return self._done(after, phrase(ctx.language, "action.set_temperature", name=entity.name,
                                        value=spoken))


class SetPosition(EntityTool):
    name = "set_position"
    description = "Move a cover to a position: 0 closed, 100 fully open."
    parameters = entity_schema(("entity_id", "position"), position=PERCENT)
    domains = frozenset({"cover", "valve"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        position = args["position"]
        service = "set_cover_position" if entity.domain == "cover" else "set_valve_position"
        after = await self._call(entity, service, {"position": position}, ctx, args)
        acknowledged = self._acknowledged(after, service, {"position": position}, ctx)
        if acknowledged is not None:
            return acknowledged
        spoken = phrase(ctx.language, "unit.percent", value=format_number(position, ctx.language))
        return self._done(after, phrase(ctx.language, "action.set_position", name=entity.name,
                                        value=spoken))


class MediaControl(EntityTool):
    name = "media_control"
    description = "Pause, resume, skip to the next or back to the previous track on a media player."
    parameters = entity_schema(("entity_id", "action"), action={"enum": list(MEDIA_SERVICES)})
    domains = frozenset({"media_player"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, MEDIA_SERVICES[args["action"]], {}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.done"))


class SetVolume(EntityTool):
    name = "set_volume"
    description = "Set a media player's volume in percent."
    parameters = entity_schema(("entity_id", "volume"), volume=PERCENT)
    domains = frozenset({"media_player"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, "volume_set", {"volume_level": args["volume"] / 100}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.done"))


class ActivateScene(EntityTool):
    name = "activate_scene"
    description = "Activate a scene."
    domains = frozenset({"scene"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, "turn_on", {}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.done"))


class RunScript(EntityTool):
    name = "run_script"
    description = "Run a script."
    domains = frozenset({"script"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, "turn_on", {}, ctx, args)
        return (self._acknowledged(after, "turn_on", {}, ctx)
                or self._done(after, phrase(ctx.language, "action.done")))


class GetState(EntityTool):
    name = "get_state"
    changes_home = False
    description = "State of one entity (and its device's battery, power, signal …), or of an area's."
    parameters = {"type": "object", "additionalProperties": False,
                  "properties": {"entity_id": ENTITY, "area": {"type": "string"}}}

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if "entity_id" in args:
            entity = self._store.get(args["entity_id"])
            if entity is None:
                entity = self._entity(args["entity_id"], ctx)  # raises unknown_entity with suggestions
            entities = [entity]
        elif "area" in args:
            area = self._resolver.area_of(args["area"], ctx.language)
            if area is None:
                raise ToolError(phrase(ctx.language, "entity.not_found", name=args["area"]),
                                code="unknown_area", areas=list(self._resolver.areas()))
            entities = [e for e in self._store.all() if e.area == area]
        else:
            raise self._invalid(None, ctx.language, "Give entity_id or area.")
        speech = " ".join(spoken_state(e, ctx.language) for e in entities)
        if len(entities) == 1:  # with its device's other readings: "its battery" is one call away from none
            others = readings(entities[0], self._store.all())
            device = {"device": {part: state_data(e) for part, e in others.items()}} if others else {}
            return ToolResult(ok=True, data={**state_data(entities[0]), **device}, speech=speech)
        return ToolResult(ok=True, data={"area": area, "entities": [state_data(e) for e in entities]},
                          speech=speech)


def _light_speech(entity: Entity, args: dict[str, Any], language: str) -> str:
    if "brightness" in args:
        value = phrase(language, "unit.percent", value=format_number(args["brightness"], language))
        return phrase(language, "action.set_brightness", name=entity.name, value=value)
    if "color_temp" in args:
        value = phrase(language, "unit.kelvin", value=format_number(args["color_temp"], language))
        return phrase(language, "action.set_color_temp", name=entity.name, value=value)
    return phrase(language, "action.done")


def _color_data(color: str) -> dict[str, Any]:
    """HA service data for a colour name ("Red" → color_name) or "#RRGGBB" (→ rgb_color);
    ValueError for anything else."""
    hex_digits = color.strip().removeprefix("#")
    if color.strip().startswith("#") and len(hex_digits) == 6:
        try:
            return {"rgb_color": [int(hex_digits[i:i + 2], 16) for i in (0, 2, 4)]}
        except ValueError:
            pass
    key = color_key(color)
    if key not in COLORS:
        raise ValueError(f"Unknown color {color!r}; use #RRGGBB or one of: {', '.join(COLORS)}.")
    return {"color_name": key}


def build_home_tools(store: EntityStore, resolver: EntityResolver,
                     policy: ActionPolicy | None = None, tracker: ActionTracker | None = None) -> list[Tool]:
    """The home tools; `policy` guards every call, `tracker` acknowledges slow ones."""
    return [tool(store, resolver, policy, tracker) for tool in (
        TurnOn, TurnOff, SetLight, SetTemperature, SetPosition, MediaControl, SetVolume,
        *DEVICE_TOOLS, SearchAndPlay, ActivateScene, RunScript, GetState)]

