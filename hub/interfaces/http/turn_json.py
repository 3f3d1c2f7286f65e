"""Turns, tool calls and entities as JSON (the shapes of the REST API, its SSE stream and the
CLI), and a REST turn from its JSON body."""

from __future__ import annotations

from typing import Any

from hub.agent.types import ReplyChunk, ToolFinished, ToolStarted, TurnDone, TurnRequest, TurnResult
from hub.home.entities import Entity
from hub.home.namesakes import namesake_groups
from hub.llm.types import Reasoning, ReasoningMode


def turn_request(body: dict[str, Any], client: str | None, default_budget: int) -> TurnRequest:
    """A REST turn from its validated body (rest_schema.ASK_REQUEST, or PLAN_REQUEST's more)."""
    return TurnRequest(
        body["text"], conversation_id=body.get("conversation_id"), language=body.get("language"),
        source="rest", conversational=body.get("conversational"),
        reasoning=_reasoning(body.get("reasoning"), default_budget), persona=body.get("persona"),
        client=client, area=body.get("area"), floor=body.get("floor"), device_id=body.get("device_id"),
        satellite_id=body.get("satellite_id"), extra_system_prompt=body.get("extra_system_prompt"),
    )


def _reasoning(value: str | dict[str, Any] | None, default_budget: int) -> Reasoning | None:
    if value is None:
        return None
    if isinstance(value, str):
        return Reasoning(ReasoningMode(value), default_budget)
    return Reasoning(ReasoningMode(value["mode"]), value.get("budget", default_budget))


def result_json(result: TurnResult) -> dict[str, Any]:
    return {
        "conversation_id": result.conversation_id, "language": result.language, "reply": result.reply,
        "ok": result.ok, "error": result.error, "path": result.path, "intent": result.intent,
        "awaiting": result.awaiting,
        "tool_calls": [tool_finished_json(f) for f in result.tool_calls],
        "timings": result.timings.as_json(),
    }


def tool_finished_json(finished: ToolFinished) -> dict[str, Any]:
    return {"id": finished.call.id, "name": finished.call.name, "arguments": finished.call.arguments,
            "ok": finished.ok, "result": finished.data, "changed_entities": list(finished.changed_entities),
            "seconds": round(finished.seconds, 4)}


def entity_json(entity: Entity) -> dict[str, Any]:
    return {"entity_id": entity.entity_id, "name": entity.name, "state": entity.state,
            "domain": entity.domain, "area": entity.area, "aliases": list(entity.aliases),
            "device_class": entity.device_class, "attributes": entity.attributes, "source": entity.source}


def namesakes_json(entities: list[Entity]) -> list[dict[str, Any]]:
    """Each name several controllable entities answer to (a command naming it asks which one)."""
    return [{"name": group[0].name, "entity_ids": [e.entity_id for e in group]} for group in namesake_groups(entities)]


def turn_event(event: Any) -> tuple[str, dict[str, Any]]:
    """A turn event as a server-sent event: (event name, data)."""
    if isinstance(event, ReplyChunk):
        return "chunk", {"text": event.text}
    if isinstance(event, ToolStarted):
        return "tool_started", {"id": event.call.id, "name": event.call.name, "arguments": event.call.arguments}
    if isinstance(event, ToolFinished):
        return "tool_finished", tool_finished_json(event)
    if isinstance(event, TurnDone):
        return "done", result_json(event.result)
    raise TypeError(f"unexpected turn event {event!r}")
