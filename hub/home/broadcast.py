"""Broadcast (HA's HassBroadcast): a message announced on every voice satellite of the home but
the one it was said to, as HA's handler does (`assist_satellite.announce` on each satellite
entity). A home with no satellite hears that nothing could announce it, never that it was."""

from __future__ import annotations

from typing import Any

from hub.core.messages import ToolCall, ToolSpec
from hub.core.tools import ToolContext, ToolError, ToolResult, ToolTraits
from hub.home.entities import BackendError, EntityStore
from hub.home.policy import ActionPolicy
from hub.locales import phrase


class Broadcast(ToolTraits):
    spec = ToolSpec("broadcast", "Announce a message on every voice satellite in the home.", {
        "type": "object", "additionalProperties": False, "required": ["message"],
        "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 500}}})
    changes_home = True

    def __init__(self, store: EntityStore, policy: ActionPolicy | None = None) -> None:
        self._store = store
        self._policy = policy

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        message = args["message"].strip()
        asking = {ctx.satellite_id, ctx.device_id} - {None}
        satellites = [e for e in self._store.all() if e.domain == "assist_satellite"
                      and not {e.entity_id, e.device_id} & asking]
        if not satellites:
            raise ToolError(phrase(ctx.language, "broadcast.nowhere"), code="no_satellite")
        announced = []
        for satellite in satellites:
            if self._policy is not None:
                self._policy.check(satellite, "announce", ToolCall(self.spec.name, dict(args)), ctx)
            try:
                await self._store.backend_for(satellite).call_service(satellite, "announce", {"message": message})
            except BackendError:
                continue
            announced.append(satellite.entity_id)
        if not announced:
            raise ToolError(phrase(ctx.language, "error.action_failed"), code="backend_unavailable")
        return ToolResult(ok=True, speech=phrase(ctx.language, "broadcast.done"),
                          data={"announced_on": announced, "message": message})
