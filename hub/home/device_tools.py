"""The home tools for what is not on, off or a light: a fan's speed, a media player's volume and
muting, a vacuum sent to clean an area, a humidifier's humidity and the mode of a humidifier or
a water heater. Each carries out one of Home Assistant's intents with HA's semantics:
- HassFanSetSpeed: `fan.turn_on` with `percentage` (HA's handler turns the fan on at that speed);
- HassSetVolumeRelative: "up"/"down" are `volume_up`/`volume_down` (the player's own step), a
  number is that many percent more or less than the volume now, within 0–100;
- HassMediaPlayerMute/Unmute: `volume_mute` with `is_volume_muted`;
- HassVacuumCleanArea: `vacuum.clean_area` with the area;
- HassHumidifierSetpoint/Mode: a humidifier that is off is turned on first, as HA's handlers do;
  a mode must be one the device lists;
- HassClimateSetFanMode: `climate.set_fan_mode`, a fan mode the device lists (`fan_modes`).
"""

from __future__ import annotations

from typing import Any

from hub.home.entities import Entity
from hub.home.entity_tool import PERCENT, EntityTool, entity_schema
from hub.core.tools import ToolContext, ToolError, ToolResult
from hub.locales import format_number, phrase

STEP = {"description": "up, down, or percent to add (negative: less)",
        "anyOf": [{"enum": ["up", "down"]}, {"type": "integer", "minimum": -100, "maximum": 100}]}
# per domain: (service, its data key, the attribute listing the modes)
_MODE_SERVICES = {"humidifier": ("set_mode", "mode", "available_modes"),
                  "water_heater": ("set_operation_mode", "operation_mode", "operation_list")}


def _percent(value: float, language: str) -> str:
    return phrase(language, "unit.percent", value=format_number(value, language))


class SetFanSpeed(EntityTool):
    name = "set_fan_speed"
    description = "Set a fan's speed in percent (it turns on)."
    parameters = entity_schema(("entity_id", "percentage"), percentage=PERCENT)
    domains = frozenset({"fan"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        percentage = args["percentage"]
        after = await self._call(entity, "turn_on", {"percentage": percentage}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.set_fan_speed", name=entity.name,
                                        value=_percent(percentage, ctx.language)))


class ChangeVolume(EntityTool):
    name = "change_volume"
    description = "Turn a media player's volume up or down (one step, or by percent)."
    parameters = entity_schema(("entity_id", "step"), step=STEP)
    domains = frozenset({"media_player"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        step = args["step"]
        if step in ("up", "down"):
            after = await self._call(entity, f"volume_{step}", {}, ctx, args)
            return self._done(after, phrase(ctx.language, f"action.volume_{step}", name=entity.name))
        level = entity.attributes.get("volume_level")
        if not isinstance(level, (int, float)):
            raise self._unsupported(entity, ctx.language, "change the volume of (its volume is unknown)")
        percent = max(0, min(100, round(float(level) * 100) + int(step)))
        after = await self._call(entity, "volume_set", {"volume_level": percent / 100}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.set_volume", name=entity.name,
                                        value=_percent(percent, ctx.language)))


class Mute(EntityTool):
    name = "mute"
    description = "Mute or unmute a media player."
    parameters = entity_schema(("entity_id", "muted"), muted={"type": "boolean"})
    domains = frozenset({"media_player"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        muted = bool(args["muted"])
        after = await self._call(entity, "volume_mute", {"is_volume_muted": muted}, ctx, args)
        key = "action.muted" if muted else "action.unmuted"
        return self._done(after, phrase(ctx.language, key, name=entity.name))


class CleanArea(EntityTool):
    name = "clean_area"
    description = "Send a vacuum to clean one area."
    parameters = entity_schema(("entity_id", "area"), area={"type": "string"})
    domains = frozenset({"vacuum"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        area = self._resolver.area_of(args["area"], ctx.language)
        if area is None:
            raise ToolError(phrase(ctx.language, "entity.not_found", name=args["area"]),
                            code="unknown_area", areas=list(self._resolver.areas()))
        after = await self._call(entity, "clean_area", {"cleaning_area_id": area}, ctx, args,
                                 rejected="error.cannot_clean_area")  # HA 2025.4 has no such action
        return self._done(after, phrase(ctx.language, "action.clean_area", name=entity.name, area=area))


class SetHumidity(EntityTool):
    name = "set_humidity"
    description = "Set a humidifier's target humidity in percent (it turns on)."
    parameters = entity_schema(("entity_id", "humidity"), humidity=PERCENT)
    domains = frozenset({"humidifier"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        humidity = args["humidity"]
        low, high = entity.attributes.get("min_humidity", 0), entity.attributes.get("max_humidity", 100)
        if not low <= humidity <= high:
            raise self._invalid(entity, ctx.language, f"{entity.entity_id} accepts {low} to {high} percent.")
        if entity.state == "off":
            entity = await self._call(entity, "turn_on", {}, ctx, args)
        after = await self._call(entity, "set_humidity", {"humidity": humidity}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.set_humidity", name=entity.name,
                                        value=_percent(humidity, ctx.language)))


class _ModeTool(EntityTool):
    """A tool that sets one of the modes a device lists."""

    def _listed(self, entity: Entity, listed: str, said: Any, language: str) -> str:
        """The mode of the device's `listed` attribute that `said` names (case aside)."""
        modes = [str(m) for m in entity.attributes.get(listed) or ()]
        mode = next((m for m in modes if m.casefold() == str(said).strip().casefold()), None)
        if mode is None:
            raise self._invalid(entity, language, f"{entity.entity_id} has the modes: {', '.join(modes) or 'none'}.")
        return mode


class SetMode(_ModeTool):
    name = "set_mode"
    description = "Set the mode of a humidifier or the operation mode of a water heater."
    parameters = entity_schema(("entity_id", "mode"), mode={"type": "string"})
    domains = frozenset(_MODE_SERVICES)

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        service, key, listed = _MODE_SERVICES[entity.domain]
        mode = self._listed(entity, listed, args["mode"], ctx.language)
        if entity.state == "off" and entity.domain == "humidifier":
            entity = await self._call(entity, "turn_on", {}, ctx, args)
        after = await self._call(entity, service, {key: mode}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.set_mode", name=entity.name, mode=mode))


class SetFanMode(_ModeTool):
    name = "set_fan_mode"
    description = "Set the fan mode of a thermostat or air conditioner (one of its fan_modes)."
    parameters = entity_schema(("entity_id", "fan_mode"), fan_mode={"type": "string"})
    domains = frozenset({"climate"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        mode = self._listed(entity, "fan_modes", args["fan_mode"], ctx.language)
        after = await self._call(entity, "set_fan_mode", {"fan_mode": mode}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.set_fan_mode", name=entity.name, mode=mode))


DEVICE_TOOLS = (SetFanSpeed, ChangeVolume, Mute, CleanArea, SetHumidity, SetMode, SetFanMode)
