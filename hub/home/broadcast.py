"""Broadcast (HA's HassBroadcast): a message announced on every voice satellite of the home but
the one it was said to, as HA's handler does (`assist_satellite.announce` on each satellite
entity). A home with no satellite entity announces it on its outlets instead (the MQTT API's
`<base>/announce`, added by the composition root), and says where; with neither, it hears that
nothing could announce it, never that it was."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from hub.core.messages import ToolCall, ToolSpec
from hub.core.tools import ToolContext, ToolError, ToolResult, ToolTraits
from hub.home.entities import BackendError, Entity, EntityStore
from hub.home.policy import ActionPolicy
from hub.locales import phrase

Outlet = Callable[[str, ToolContext], Awaitable[None] | None]  # (message, who asked)
# what the policy is asked about an announcement on an outlet (`allowed_domains`, rate limits)
OUTLET = Entity("assist_satellite.hub_announcements", "Announcements", source="hub")


class Broadcast(ToolTraits):
    spec = ToolSpec("broadcast", "Announce a message on every voice satellite in the home.", {
        "type": "object", "additionalProperties": False, "required": ["message"],
        "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 500}}})
    changes_home = True

    def __init__(self, store: EntityStore, policy: ActionPolicy | None = None) -> None:
        self._store = store
        self._policy = policy
        self._outlets: list[Outlet] = []

    def add_outlet(self, outlet: Outlet) -> None:
        """Announce on `outlet` when the home has no satellite entity."""
        self._outlets.append(outlet)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        message = args["message"].strip()
        satellites = [e for e in self._store.all() if e.domain == "assist_satellite"]
        if not satellites and self._outlets:
            return await self._published(message, args, ctx)
        asking = {ctx.satellite_id, ctx.device_id} - {None}
        satellites = [e for e in satellites if not {e.entity_id, e.device_id} & asking]
        if not satellites:
            raise ToolError(phrase(ctx.language, "broadcast.nowhere"), code="no_satellite")
        announced = []
        for satellite in satellites:
            self._check(satellite, args, ctx)
            try:
                await self._store.backend_for(satellite).call_service(satellite, "announce", {"message": message})
            except BackendError:
                continue
            announced.append(satellite.entity_id)
        if not announced:
            raise ToolError(phrase(ctx.language, "error.action_failed"), code="backend_unavailable")
        return ToolResult(ok=True, speech=phrase(ctx.language, "broadcast.done"),
                          data={"announced_on": announced, "message": message})

    async def _published(self, message: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self._check(OUTLET, args, ctx)
        for outlet in self._outlets:
            sent = outlet(message, ctx)
            if asyncio.iscoroutine(sent):
                await sent
        return ToolResult(ok=True, speech=phrase(ctx.language, "broadcast.published"),
                          data={"announced_on": "mqtt", "message": message})

    def _check(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> None:
        if self._policy is not None:
            self._policy.check(entity, "announce", ToolCall(self.spec.name, dict(args)), ctx)
