"""The REST routes over what the agent holds: the home's entities, the tools (listed, or one run
directly as a persona), the personas (and a persona's greeting), a conversation's history."""

from __future__ import annotations

import re
import time
from typing import Any, Protocol

from aiohttp import web

from hub.agent.api import AgentApi
from hub.agent.personas import UnknownPersona
from hub.core.tools import ToolRegistry
from hub.home.entities import EntityStore
from hub.interfaces import direct_tools
from hub.interfaces.direct_tools import CallError, DirectCall, run_call
from hub.interfaces.http import rest_schema as schema
from hub.interfaces.http.errors import ClientError
from hub.interfaces.http.metrics import HubMetrics
from hub.interfaces.http.openai_routes import BodyReader
from hub.interfaces.http.turn_json import entity_json, result_json


class AgentHost(Protocol):
    """What the routes need of the hub: its home, its tools and (once started) its agent."""

    store: EntityStore
    registry: ToolRegistry
    @property
    def agent(self) -> AgentApi | None: ...


def running_agent(hub: AgentHost) -> AgentApi:
    """The hub's agent; a 503 while the hub is still starting."""
    agent = hub.agent
    if agent is None:
        raise ClientError(503, "starting", "The hub is still starting.")
    return agent


class AgentRoutes:
    """Adds the entity, tool, persona and conversation routes to the REST API's app."""

    def __init__(self, hub: AgentHost, read_body: BodyReader, language: str, metrics: HubMetrics) -> None:
        self._hub = hub
        self._read_body = read_body
        self._language = language  # a direct call's default
        self._metrics = metrics

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/api/entities", self._entities)
        app.router.add_get("/api/tools", self._tools)
        app.router.add_post("/api/tools/{name}", self._run_tool)
        app.router.add_get("/api/personas", self._personas)
        app.router.add_post("/api/personas/{key}/greet", self._greet)
        app.router.add_get("/api/conversations/{conversation_id}", self._conversation)

    @property
    def _agent(self) -> AgentApi:
        return running_agent(self._hub)

    async def _entities(self, request: web.Request) -> web.Response:
        domain = request.query.get("domain")
        if domain is not None and not re.match(schema.DOMAIN_PATTERN, domain):
            raise ClientError(400, "invalid_parameter", "domain must be letters and underscores, e.g. light")
        entities = [e for e in self._hub.store.all() if domain is None or e.domain == domain]
        return web.json_response([entity_json(e) for e in entities])

    async def _tools(self, request: web.Request) -> web.Response:
        """The tools a persona may use (default: the default persona's)."""
        key = request.query.get("persona")
        if key is not None and not 1 <= len(key) <= schema.PERSONA["maxLength"]:
            raise ClientError(400, "invalid_parameter",
                              f"persona must be 1 to {schema.PERSONA['maxLength']} characters")
        persona = self._persona(key)
        names = list(self._agent.personas.tool_names(persona))
        return web.json_response([
            {"name": s.name, "description": s.description, "parameters": s.parameters}
            for s in self._hub.registry.specs(names)
        ])

    async def _personas(self, request: web.Request) -> web.Response:
        book = self._agent.personas
        return web.json_response([
            {"key": p.key, "name": p.name, "language": p.language, "greeting": p.greeting,
             "tools": list(book.tool_names(p)), "default": p.key == book.default}
            for p in book.all()
        ])

    async def _greet(self, request: web.Request) -> web.Response:
        body = await self._read_body(request, "greet") if (await request.read()).strip() else {}
        key = request.match_info["key"]
        self._persona(key)  # 404 for an unknown persona
        return web.json_response(result_json(self._agent.greet(key, body.get("conversation_id"))))

    def _persona(self, key: str | None) -> Any:
        try:
            return self._agent.personas.get(key)
        except UnknownPersona as err:
            raise ClientError(404, "unknown_persona", f"{err}; GET /api/personas lists them.") from None

    async def _run_tool(self, request: web.Request) -> web.Response:
        """One direct call through the agent: the persona's tools, policy and validation apply."""
        name = request.match_info["name"]
        if self._hub.registry.get(name) is None:
            raise ClientError(404, "unknown_tool",
                              f"No tool named {name!r}; GET /api/tools lists them.")
        body = await self._read_body(request, "tool")
        call = DirectCall(name, body.get("arguments", {}), persona=body.get("persona"),
                          conversation_id=body.get("conversation_id"), language=body.get("language"))
        started = time.monotonic()
        try:
            result = await run_call(self._agent, call, "rest", self._language)
        except CallError as err:
            raise ClientError(404, err.code, f"{err}; GET /api/personas lists them.") from None
        self._metrics.record_tool(name, result.ok, time.monotonic() - started, "rest")
        error = result.data.get("error") if not result.ok else None
        if error == "invalid_arguments":
            raise ClientError(400, "invalid_arguments", _argument_message(result.data))
        if error == "tool_not_allowed":
            raise ClientError(403, "tool_not_allowed", str(result.data.get("message")))
        return web.json_response(direct_tools.result_json(name, None, result))

    async def _conversation(self, request: web.Request) -> web.Response:
        conversation_id = request.match_info["conversation_id"]
        conversation = self._agent.conversations.get(conversation_id)
        if conversation is None:
            raise ClientError(404, "unknown_conversation",
                              f"No conversation {conversation_id!r} (it may have expired).")
        return web.json_response({
            "conversation_id": conversation.id, "language": conversation.language,
            "persona": conversation.persona,
            "messages": [
                {"role": m.role, "content": m.content, "name": m.name,
                 "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]}
                for m in conversation.messages
            ],
        })


def _argument_message(data: dict[str, Any]) -> str:
    where = data.get("path")
    return f"arguments/{where}: {data.get('message')}" if where else f"arguments: {data.get('message')}"
