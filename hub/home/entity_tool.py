"""The base of the home tools: one entity id, its checks, and the service call through the policy.

A tool subclasses `EntityTool` and says what it does in `act`: the base finds the entity (with
suggestions when it does not exist), refuses locks and alarm panels when there is no policy,
checks the policy before every service call, waits briefly for the device to report its new
state, and words a backend's failure for the user.
"""

from __future__ import annotations

import asyncio
import contextlib

from typing import Any

from hub.home.entities import ActionRejected, BackendError, Entity, EntityStore
from hub.home.outcomes import already_so
from hub.home.policy import ALLOWED, CONFIRM, NOT_ALLOWED, RATE_LIMITED, ActionPolicy, PendingAction, confirm_question
from hub.home.resolve import EntityResolver
from hub.home.state_speech import state_data
from hub.core.tools import ToolContext, ToolError, ToolResult, WouldCall
from hub.home.watches import ActionTracker
from hub.core.messages import ToolCall, ToolSpec
from hub.locales import phrase

STATE_ECHO_TIMEOUT_S = 0.75
_BACKEND_PHRASES = frozenset({"ha_unavailable", "ha_auth", "lists_not_saved"})
REFUSED_DOMAINS = frozenset({"lock", "alarm_control_panel"})  # only when there is no policy
ENTITY = {"type": "string"}
PERCENT = {"type": "integer", "minimum": 0, "maximum": 100}



def entity_schema(required: tuple[str, ...] = ("entity_id",), **properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"entity_id": ENTITY, **properties},
            "required": list(required), "additionalProperties": False}


class EntityTool:
    """Shared checks and service calls; subclasses say what they do in `act`."""

    name: str
    description: str
    parameters: dict[str, Any] = entity_schema()
    domains: frozenset[str] | None = None  # None: whatever `act` accepts
    changes_home: bool | None = True  # a device action (see Tool.changes_home)
    previews = True  # a dry run stops where it would act (`_call`); GetState only reads

    def __init__(self, store: EntityStore, resolver: EntityResolver,
                 policy: ActionPolicy | None = None, tracker: ActionTracker | None = None) -> None:
        self._store = store
        self._resolver = resolver
        self._policy = policy
        self._tracker = tracker
        self.spec = ToolSpec(self.name, self.description, self.parameters, entity_args=("entity_id",))

    def offered(self) -> bool:
        return self.domains is None or self._store.has_any(self.domains)

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

    def _as_home_names_it(self, entity: Entity) -> Entity:
        """The entity as its backend (Home Assistant, MQTT) names it: what the policy speaks of,
        so that a question for a yes names the device itself, whatever names the user added."""
        return self._store.known(entity.entity_id) or entity

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
                    ctx: ToolContext, args: dict[str, Any], rejected: str = "error.unsupported") -> Entity:
        """Make the service call if the policy lets it; the entity as the store has it afterwards.

        `args` are the tool's own arguments: a call held for confirmation is re-run with them.
        `rejected`: what to say when the device has no such action (HA's 400; "{name} can't do that").
        """
        if ctx.dry_run:
            raise self._would_call(entity, service, data, ctx, args)
        if self._policy is not None:
            self._policy.check(self._as_home_names_it(entity), service, ToolCall(self.name, dict(args)), ctx)
        try:
            unchanged = already_so(entity, service, data)
            with self._store.next_change(entity.entity_id) as changed:
                await self._store.backend_for(entity).call_service(entity, service, data)
                # HA and MQTT devices report their new state a moment later: answer with it
                if not unchanged:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(changed.wait(), STATE_ECHO_TIMEOUT_S)
        except ActionRejected as err:
            self._record(entity, service, data, ctx, f"rejected: {err}")
            raise ToolError(phrase(ctx.language, rejected, name=entity.name), code="rejected",
                            entity_id=entity.entity_id, detail=str(err)) from err
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
        named = self._as_home_names_it(entity)
        if verdict in (NOT_ALLOWED, RATE_LIMITED):
            raise ActionPolicy.refusal(named, verdict, ctx.language)
        question = None
        if verdict == CONFIRM:
            held = PendingAction(ToolCall(self.name, dict(args)), entity.entity_id, named.name, service)
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
