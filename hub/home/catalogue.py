"""The home tools the model (and the fast path) call: HA's intents, one entity id at a time.

Every tool checks the entity exists and that its domain supports the action, then makes the
Home Assistant service call through the entity's backend and answers with the new state and a
short localized sentence. Every service call passes the safety policy (`hub.home.policy`) first;
without one, locks and alarm panels are refused outright. With an action tracker, a call whose
completion is a later state change (covers, valves, vacuums, locks, scripts) is acknowledged at
once and its outcome reported when the state arrives (`hub.home.watches`).
"""

from __future__ import annotations

import asyncio
import contextlib

from typing import Any

from hub.home.colors import COLOR_MODES, COLORS, color_key
from hub.home.entities import BackendError, Entity, EntityStore
from hub.home.outcomes import already_so
from hub.home.policy import ALLOWED, CONFIRM, NOT_ALLOWED, RATE_LIMITED, ActionPolicy, PendingAction, confirm_question
from hub.home.resolve import EntityResolver
from hub.home.state_speech import spoken_state, state_data
from hub.core.tools import Tool, ToolContext, ToolError, ToolResult, WouldCall
from hub.home.watches import ActionTracker
from hub.core.messages import ToolCall, ToolSpec
from hub.locales import format_number, phrase

STATE_ECHO_TIMEOUT_S = 0.75
_BACKEND_PHRASES = frozenset({"ha_unavailable", "ha_auth"})
REFUSED_DOMAINS = frozenset({"lock", "alarm_control_panel"})  # only when there is no policy
_ON_OFF = ("light", "switch", "fan", "input_boolean", "media_player", "climate", "humidifier",
           "automation", "siren")
TURN_ON_SERVICES = {**{d: "turn_on" for d in _ON_OFF}, "cover": "open_cover",
                    "valve": "open_valve", "scene": "turn_on", "script": "turn_on",
                    "button": "press", "input_button": "press", "lock": "lock",
                    "vacuum": "start"}
TURN_OFF_SERVICES = {**{d: "turn_off" for d in _ON_OFF}, "cover": "close_cover",
                     "valve": "close_valve", "script": "turn_off", "lock": "unlock",
                     "vacuum": "return_to_base"}
MEDIA_SERVICES = {"pause": "media_pause", "resume": "media_play", "next": "media_next_track",
                  "previous": "media_previous_track"}
_ENTITY = {"type": "string"}
_PERCENT = {"type": "integer", "minimum": 0, "maximum": 100}


def _schema(required: tuple[str, ...] = ("entity_id",), **properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"entity_id": _ENTITY, **properties},
            "required": list(required), "additionalProperties": False}


class _EntityTool:
    """Shared checks and service calls; subclasses say what they do in `act`."""

    name: str
    description: str
    parameters: dict[str, Any] = _schema()
    domains: frozenset[str] | None = None  # None: whatever `act` accepts
    changes_home = True  # a device action (see Tool.changes_home)
    previews = True  # a dry run stops where it would act (`_call`); GetState only reads

    def __init__(self, store: EntityStore, resolver: EntityResolver,
                 policy: ActionPolicy | None = None, tracker: ActionTracker | None = None) -> None:
        self._store = store
        self._resolver = resolver
        self._policy = policy
        self._tracker = tracker
        self.spec = ToolSpec(self.name, self.description, self.parameters, entity_args=("entity_id",))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        entity = self._entity(args["entity_id"], ctx)
        if self.domains is not None and entity.domain not in self.domains:
            raise self._unsupported(entity, ctx.language)
        return await self.act(entity, args, ctx)

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    # --- helpers ---------------------------------------------------------------------------

    def _entity(self, entity_id: str, ctx: ToolContext) -> Entity:
        entity = self._store.get(entity_id)
        untargeted = self._store.known(entity_id) if entity is None else None
        if untargeted is not None:  # the user untargeted it (hub.home.name_book): never acted on
            raise ToolError(phrase(ctx.language, "policy.not_allowed", name=untargeted.name),
                            code="not_allowed", entity_id=entity_id)
        if entity is None:
            suggestions = [e.entity_id for e in self._resolver.candidates(entity_id, ctx.language, 5)]
            spoken = entity_id.split(".", 1)[-1].replace("_", " ")  # "light.desk_lamp" → "desk lamp"
            raise ToolError(phrase(ctx.language, "entity.not_found", name=spoken),
                            code="unknown_entity", suggestions=suggestions)
        if self._policy is None and entity.domain in REFUSED_DOMAINS:
            raise ToolError(phrase(ctx.language, "policy.not_allowed", name=entity.name),
                            code="not_allowed", entity_id=entity.entity_id)
        return entity

    def _unsupported(self, entity: Entity, language: str, what: str | None = None) -> ToolError:
        """"Living room light can't do that." for the user; `detail` says what, for the model."""
        return ToolError(
            phrase(language, "error.unsupported", name=entity.name), code="unsupported",
            entity_id=entity.entity_id,
            detail=f"{self.name} cannot {what or 'control'} {entity.entity_id} ({entity.domain}).")

    @staticmethod
    def _invalid(entity: Entity | None, language: str, detail: str) -> ToolError:
        """Arguments the device cannot take: a sentence for the user, `detail` for the model."""
        spoken = (phrase(language, "error.invalid_value", name=entity.name) if entity is not None
                  else phrase(language, "error.not_understood"))
        ids = {"entity_id": entity.entity_id} if entity is not None else {}
        return ToolError(spoken, code="invalid_arguments", detail=detail, **ids)

    async def _call(self, entity: Entity, service: str, data: dict[str, Any],
                    ctx: ToolContext, args: dict[str, Any]) -> Entity:
        """Make the service call if the policy lets it; the entity as the store has it afterwards.

        `args` are the tool's own arguments: a call held for confirmation is re-run with them.
        """
        if ctx.dry_run:
            raise self._would_call(entity, service, data, ctx, args)
        if self._policy is not None:
            self._policy.check(entity, service, ToolCall(self.name, dict(args)), ctx)
        try:
            unchanged = already_so(entity, service, data)
            with self._store.next_change(entity.entity_id) as changed:
                await self._store.backend_for(entity).call_service(entity, service, data)
                # HA and MQTT devices report their new state a moment later: answer with it
                if not unchanged:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(changed.wait(), STATE_ECHO_TIMEOUT_S)
        except BackendError as err:
            self._record(entity, service, data, ctx, f"failed: {err}")
            # HA's errors carry a code with a phrase of its own ("error.ha_unavailable", ...)
            code = getattr(err, "code", None)
            spoken = (phrase(ctx.language, f"error.{code}") if code in _BACKEND_PHRASES
                      else phrase(ctx.language, "error.action_failed"))
            raise ToolError(spoken, code="backend_unavailable", entity_id=entity.entity_id,
                            detail=str(err)) from err
        self._record(entity, service, data, ctx, "ok")
        return self._store.get(entity.entity_id) or entity

    def _would_call(self, entity: Entity, service: str, data: dict[str, Any], ctx: ToolContext,
                    args: dict[str, Any]) -> WouldCall:
        """A dry run's end, where the call would go out: what the policy would say, nothing held,
        counted or sent (a refusal is the error the real call gets)."""
        verdict = self._policy.verdict(entity, service) if self._policy is not None else ALLOWED
        if verdict in (NOT_ALLOWED, RATE_LIMITED):
            raise ActionPolicy.refusal(entity, verdict, ctx.language)
        question = None
        if verdict == CONFIRM:
            held = PendingAction(ToolCall(self.name, dict(args)), entity.entity_id, entity.name, service)
            question = confirm_question([held], ctx.language)
        return WouldCall(entity.entity_id, service, data, verdict, not already_so(entity, service, data), question)

    def _record(self, entity: Entity, service: str, data: dict[str, Any], ctx: ToolContext,
                outcome: str) -> None:
        if self._policy is not None:
            self._policy.record(entity, service, data, ctx, outcome)

    def _acknowledged(self, entity: Entity, service: str, data: dict[str, Any],
                      ctx: ToolContext) -> ToolResult | None:
        """A pending result when the call completes later (a cover on its way), else None."""
        if self._tracker is None:
            return None
        return self._tracker.acknowledge(entity, service, data, ctx)

    @staticmethod
    def _done(entity: Entity, speech: str) -> ToolResult:
        return ToolResult(ok=True, data=state_data(entity), speech=speech,
                          changed_entities=(entity.entity_id,))


class TurnOn(_EntityTool):
    name = "turn_on"
    description = "Turn on a device, open a cover, lock a lock; also activates a scene, starts a script."
    services = TURN_ON_SERVICES

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        service = self.services.get(entity.domain)
        if service is None:
            raise self._unsupported(entity, ctx.language, "switch")
        after = await self._call(entity, service, {}, ctx, args)
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
        return phrase(language, "action.turned_on", name=entity.name)


class TurnOff(TurnOn):
    name = "turn_off"
    description = "Turn off a device, close a cover, unlock a lock; also stops a script, docks a vacuum."
    services = TURN_OFF_SERVICES

    def _speech(self, entity: Entity, language: str) -> str:
        if entity.domain in ("light", "switch", "fan", "input_boolean", "media_player", "climate",
                             "humidifier", "automation", "siren"):
            return phrase(language, "action.turned_off", name=entity.name)
        return super()._speech(entity, language)


class SetLight(_EntityTool):
    name = "set_light"
    description = "Set a light's brightness (percent, 0 turns it off) and/or color."
    parameters = _schema(
        brightness=_PERCENT,
        color={"type": "string", "description": "name like red or blue, or #RRGGBB"},
    )
    domains = frozenset({"light"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not any(k in args for k in ("brightness", "color")):
            raise self._invalid(entity, ctx.language, "Give brightness or color.")
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
        after = await self._call(entity, "turn_on", data, ctx, args)
        if "brightness" in args:
            value = phrase(ctx.language, "unit.percent", value=format_number(args["brightness"], ctx.language))
            speech = phrase(ctx.language, "action.set_brightness", name=entity.name, value=value)
        else:
            speech = phrase(ctx.language, "action.done")
        return self._done(after, speech)


class SetTemperature(_EntityTool):
    name = "set_temperature"
    description = "Set a thermostat's target temperature."
    parameters = _schema(("entity_id", "temperature"), temperature={"type": "number"})
    domains = frozenset({"climate"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        value = float(args["temperature"])
        low, high = entity.attributes.get("min_temp"), entity.attributes.get("max_temp")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self._invalid(entity, ctx.language, f"{entity.entity_id} accepts {low} to {high} degrees.")
        after = await self._call(entity, "set_temperature", {"temperature": value}, ctx, args)
        spoken = phrase(ctx.language, "unit.degrees", value=format_number(value, ctx.language))
        return self._done(after, phrase(ctx.language, "action.set_temperature", name=entity.name,
                                        value=spoken))


class SetPosition(_EntityTool):
    name = "set_position"
    description = "Move a cover to a position: 0 closed, 100 fully open."
    parameters = _schema(("entity_id", "position"), position=_PERCENT)
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


class MediaControl(_EntityTool):
    name = "media_control"
    description = "Pause, resume, skip to the next or back to the previous track on a media player."
    parameters = _schema(("entity_id", "action"), action={"enum": list(MEDIA_SERVICES)})
    domains = frozenset({"media_player"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, MEDIA_SERVICES[args["action"]], {}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.done"))


class SetVolume(_EntityTool):
    name = "set_volume"
    description = "Set a media player's volume in percent."
    parameters = _schema(("entity_id", "volume"), volume=_PERCENT)
    domains = frozenset({"media_player"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, "volume_set", {"volume_level": args["volume"] / 100}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.done"))


class ActivateScene(_EntityTool):
    name = "activate_scene"
    description = "Activate a scene."
    domains = frozenset({"scene"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, "turn_on", {}, ctx, args)
        return self._done(after, phrase(ctx.language, "action.done"))


class RunScript(_EntityTool):
    name = "run_script"
    description = "Run a script."
    domains = frozenset({"script"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        after = await self._call(entity, "turn_on", {}, ctx, args)
        return (self._acknowledged(after, "turn_on", {}, ctx)
                or self._done(after, phrase(ctx.language, "action.done")))


class GetState(_EntityTool):
    name = "get_state"
    changes_home = False
    description = "Current state of one entity, or of every entity in an area."
    parameters = {"type": "object", "additionalProperties": False,
                  "properties": {"entity_id": _ENTITY, "area": {"type": "string"}}}

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
        if len(entities) == 1:
            return ToolResult(ok=True, data=state_data(entities[0]), speech=speech)
        return ToolResult(ok=True, data={"area": area, "entities": [state_data(e) for e in entities]},
                          speech=speech)


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
        ActivateScene, RunScript, GetState)]

