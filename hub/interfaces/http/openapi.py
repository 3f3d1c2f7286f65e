"""The HTTP API's OpenAPI 3.1 document, built from the schemas of `rest_schema`, and the
operations of the routes that route hooks add."""

from __future__ import annotations

from typing import Any

from hub import __version__
from hub.interfaces.http.rest_schema import (
    ASK_REQUEST, ASK_RESULT, CHAT_REQUEST, CONVERSATION, DOMAIN_PATTERN, ENTITY, ERROR, GREET_REQUEST,
    DOWNLOAD, NAME_CHANGE, NAMES, OPENAI_ERROR, OPENAI_MODEL, PERSONA, PERSONA_INFO, PLAN, PLAN_REQUEST, PLAN_RUN,
    SET_ASIDE, SETTINGS, SETTINGS_UPDATE, STATUS, TARGET_NAMES, TOOL, TOOL_RUN_REQUEST, TOOL_RUN_RESULT, UNTARGETED,
    UNTARGETED_UPDATE,
)


# Routes that route hooks add (hub.interfaces.voice.http), documented when they are present.
_VOICE_QUERY = [
    {"name": name, "in": "query", "required": False, "schema": {"type": kind}}
    for name, kind in (("language", "string"), ("conversation_id", "string"), ("persona", "string"),
                       ("voice", "string"), ("device_id", "string"), ("satellite_id", "string"), ("area", "string"),
                       ("rate", "integer"), ("width", "integer"), ("channels", "integer"))
]
HOOK_ROUTE_DOCS: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/voice"): {
        "summary": "A spoken turn: WAV (or raw PCM described by rate/width/channels) in; NDJSON out: "
                   "transcript, reply text, sentences, base64 PCM audio, errors, then done with timings.",
        "parameters": _VOICE_QUERY,
        "requestBody": {"required": True, "content": {"audio/wav": {"schema": {"type": "string", "format": "binary"}},
                                                      "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
        "responses": {"200": {"description": "One JSON object per line.",
                              "content": {"application/x-ndjson": {"schema": {"type": "string"}}}}},
    },
    ("GET", "/api/voice/ws"): {
        "summary": "Push-to-talk WebSocket: start message, binary PCM frames, stop; the same events back.",
        "responses": {"101": {"description": "Switching to WebSocket."}},
    },
    ("GET", "/api/voice/metrics"): {
        "summary": "Stage timings of the voice turns.",
        "responses": {"200": {"description": "Timings.", "content": {"application/json": {"schema": {"type": "object"}}}}},
    },
}


def hook_route_doc(method: str, path: str) -> dict[str, Any]:
    """The OpenAPI operation of a route a hook added (a plain note for routes this file does not know)."""
    known = HOOK_ROUTE_DOCS.get((method, path))
    if known is not None:
        return {**known, "responses": {**known["responses"], **_errors(401)}}
    return {"summary": "Added by a route hook.", "responses": {"default": {"description": "See the hook's module."},
                                                             **_errors(401)}}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _errors(*codes: int, shape: dict[str, Any] = ERROR) -> dict[str, Any]:
    words = {400: "Invalid request body or parameters.", 401: "Missing or wrong API token.",
             403: "Not allowed (for this persona; another client's plan).", 404: "Not found.",
             409: "Conflicts with the current state.",
             410: "Expired.", 413: "Body too large.", 503: "The model is busy; retry later.",
             507: "The data folder could not be written (full or read-only): nothing was changed.",
             504: "Not done within turn_timeout."}
    return {str(code): {"description": words[code], "content": _json(shape)} for code in codes}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": _json(schema)}


def openapi_document() -> dict[str, Any]:
    # each server-sent event: its name and its data (a JSON document as text)
    sse = {"text/event-stream": {"schema": {
        "type": "object", "required": ["data"],
        "properties": {"event": {"type": "string"}, "data": {"type": "string"}, "id": {"type": "string"}}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Bolt Hub API", "version": __version__,
                 "description": "Ask the hub, stream its replies and tool calls, run tools, read the "
                                "home, change runtime settings, and use the model through an "
                                "OpenAI-compatible chat endpoint."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": {**_service_paths(), **_turn_paths(sse), **_admin_paths(), **_openai_paths(sse)},
    }


def _service_paths() -> dict[str, Any]:
    """Liveness and the hub's state."""
    return {
        "/health": {"get": {
            "summary": "Liveness (no token needed): ok (also while the configured model downloads and the "
                       "stand-in serves: stage downloading), or warming while the model loads and primes.",
            "security": [],
            "responses": {"200": {"description": "Running.", "content": _json(
                {"type": "object", "required": ["status", "startup"], "properties": {
                    "status": {"enum": ["ok", "warming"]}, "version": {"type": "string"},
                    "startup": {"type": "object", "required": ["stage", "label", "progress"], "properties": {
                        "stage": {"type": "string"}, "label": {"type": "string"},
                        "progress": {"type": "number", "minimum": 0, "maximum": 1},
                        "elapsed_s": {"type": "number"}, "stage_elapsed_s": {"type": "number"},
                        "download": DOWNLOAD}},
                    "set_aside": SET_ASIDE}})}}}},
        "/api/status": {"get": {
            "summary": "The hub's state: version, model, entity count, settings, speech.",
            "responses": {"200": {"description": "Status.", "content": _json(STATUS)}, **_errors(401)}}},
        "/api/memory": {"get": {
            "summary": "What the hub's resident memory is made of, in bytes: the model's weights, KV cache and "
                       "prompt states, the home, the fast path (each language's templates), the rest; 'own' is "
                       "the RSS less the model's parts. ?objects=false leaves out the walk of the hub's objects "
                       "(the home and the languages then count in the rest).",
            "parameters": [{"name": "objects", "in": "query", "schema": {"enum": ["true", "false"]}}],
            "responses": {"200": {"description": "The parts.", "content": _json(
                {"type": "object", "required": ["rss", "own", "parts"], "properties": {
                    "rss": {"type": "integer"}, "own": {"type": "integer"},
                    "parts": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "detail": {"type": "object"},
                    "languages": {"type": "object", "additionalProperties": {"enum": ["full", "compact"]}}}})},
                **_errors(400, 401)}}},
    }


def _turn_paths(sse: dict[str, Any]) -> dict[str, Any]:  # data table
    """Turns, the home, its tools and personas, conversations."""
    return {
        "/api/ask": {"post": {
            "summary": "Run one turn. With 'Accept: text/event-stream' the events stream as SSE: "
                       "chunk, tool_started, tool_finished, then done (the result). The result's awaiting "
                       "says whether the reply waits for an answer (a yes, which one, a question).",
            "requestBody": _body(ASK_REQUEST),
            "responses": {"200": {"description": "The turn's result (or its event stream).",
                                  "content": {**_json(ASK_RESULT), **sse}},
                          **_errors(400, 401, 413)}}},
        "/api/plan": {"post": {
            "summary": "What the hub would do with a request, without acting: the language and why, the path "
                       "(fast path with intent and slots, or the model), the entities weighed, each call it "
                       "would make and the policy's verdict. The model runs; no call acts.",
            "requestBody": _body(PLAN_REQUEST),
            "responses": {"200": {"description": "The plan.", "content": _json(PLAN)},
                          **_errors(400, 401, 404, 413)}}},
        "/api/plan/{plan_id}/run": {"post": {
            "summary": "Run a plan's calls once, within five minutes of making it, as a turn of the request "
                       "that made it (its route, satellite, device and place); only the client that made it "
                       "(its token and address, or ingress user) may run it; validation and the policy decide "
                       "again. 403: another client's plan; 404: no such plan; 409: run already (or its "
                       "persona is gone); 410: expired.",
            "parameters": [{"name": "plan_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "What the calls did.", "content": _json(PLAN_RUN)},
                          **_errors(400, 401, 403, 404, 409, 410)}}},
        "/api/names": {
            "get": {"summary": "Every entity, area and floor with each name the hub accepts and where it came "
                               "from (home, home_alias, added, generated, translation), and the untargeted "
                               "entities.",
                    "responses": {"200": {"description": "The names.", "content": _json(NAMES)}, **_errors(401)}},
            "post": {"summary": "Add a name to an entity, area or floor (saved, applied at once). 409: it "
                                "already answers to it.",
                     "requestBody": _body(NAME_CHANGE),
                     "responses": {"200": {"description": "The target's names now.", "content": _json(TARGET_NAMES)},
                                   **_errors(400, 401, 404, 409, 413, 507)}},
            "delete": {"summary": "Take a name away: an added one, or one from the home (an entity keeps one "
                                  "name, an area and a floor their own; generated variants go with their name).",
                       "requestBody": _body(NAME_CHANGE),
                       "responses": {"200": {"description": "The target's names now.",
                                             "content": _json(TARGET_NAMES)},
                                     **_errors(400, 401, 404, 413, 507)}}},
        "/api/names/untargeted": {"put": {
            "summary": "The entities the hub never acts on (the whole list): not by the fast path, not by the "
                       "model, not by a direct tool call.",
            "requestBody": _body(UNTARGETED_UPDATE),
            "responses": {"200": {"description": "The untargeted entities now.", "content": _json(UNTARGETED)},
                          **_errors(400, 401, 404, 413, 507)}}},
        "/api/entities": {"get": {
            "summary": "The entities the hub may act on.",
            "parameters": [{"name": "domain", "in": "query", "required": False,
                            "schema": {"type": "string", "pattern": DOMAIN_PATTERN}}],
            "responses": {"200": {"description": "Entities.", "content": _json(
                {"type": "array", "items": ENTITY})}, **_errors(400, 401)}}},
        "/api/tools": {"get": {
            "summary": "The tools a persona may call (default: the default persona's).",
            "parameters": [{"name": "persona", "in": "query", "required": False, "schema": PERSONA}],
            "responses": {"200": {"description": "Tools.", "content": _json(
                {"type": "array", "items": TOOL})}, **_errors(400, 401, 404)}}},
        "/api/personas": {"get": {
            "summary": "The personas the hub speaks as, with the tools each may use.",
            "responses": {"200": {"description": "Personas.", "content": _json(
                {"type": "array", "items": PERSONA_INFO})}, **_errors(401)}}},
        "/api/personas/{key}/greet": {"post": {
            "summary": "Open a conversation with a persona: its greeting (empty when it has none) is "
                       "the reply and the first thing in the conversation's history.",
            "parameters": [{"name": "key", "in": "path", "required": True, "schema": PERSONA}],
            "requestBody": {**_body(GREET_REQUEST), "required": False},
            "responses": {"200": {"description": "The greeting.", "content": _json(ASK_RESULT)},
                          **_errors(400, 401, 404, 413)}}},
        "/api/tools/{name}": {"post": {
            "summary": "Run one tool directly, as the persona (default: the default persona); its "
                       "tool list, argument validation and policy apply. Unknown tool or persona: "
                       "404; a tool the persona may not use: 403.",
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
            "requestBody": _body(TOOL_RUN_REQUEST),
            "responses": {"200": {"description": "The tool's result; ok is false when it refused or failed.",
                                  "content": _json(TOOL_RUN_RESULT)},
                          **_errors(400, 401, 403, 404, 413)}}},
        "/api/conversations/{conversation_id}": {"get": {
            "summary": "A conversation's history.",
            "parameters": [{"name": "conversation_id", "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "responses": {"200": {"description": "History.", "content": _json(CONVERSATION)},
                          **_errors(401, 404)}}},
    }


def _admin_paths() -> dict[str, Any]:
    """Runtime settings, metrics and this document."""
    return {
        "/api/settings": {
            "get": {"summary": "Runtime settings.",
                    "responses": {"200": {"description": "Settings.", "content": _json(SETTINGS)},
                                  **_errors(401)}},
            "put": {"summary": "Change runtime settings (all or nothing; kept across restarts).",
                    "requestBody": _body(SETTINGS_UPDATE),
                    "responses": {"200": {"description": "The settings now.", "content": _json(SETTINGS)},
                                  **_errors(400, 401, 413)}}},
        "/metrics": {"get": {
            "summary": "Prometheus metrics (text exposition format).",
            "responses": {"200": {"description": "Metrics.",
                                  "content": {"text/plain": {"schema": {"type": "string"}}}},
                          **_errors(401)}}},
        "/api/openapi.json": {"get": {
            "summary": "This document.",
            "responses": {"200": {"description": "OpenAPI 3.1.", "content": _json({"type": "object"})},
                          **_errors(401)}}},
    }


def _openai_paths(sse: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI-compatible routes (errors in OpenAI's shape)."""
    return {
        "/v1/models": {"get": {
            "summary": "OpenAI-compatible model list (the one loaded model).",
            "responses": {"200": {"description": "Models.", "content": _json(
                {"type": "object", "required": ["object", "data"], "properties": {
                    "object": {"const": "list"},
                    "data": {"type": "array", "items": OPENAI_MODEL}}})},
                **_errors(401, shape=OPENAI_ERROR)}}},
        "/v1/models/{model}": {"get": {
            "summary": "OpenAI-compatible model retrieval (the id that /v1/models lists).",
            "parameters": [{"name": "model", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "The model.", "content": _json(OPENAI_MODEL)},
                          **_errors(401, 404, shape=OPENAI_ERROR)}}},
        "/v1/chat/completions": {"post": {
            "summary": "OpenAI-compatible chat completion on the hub's model. Tools are offered to "
                       "the model and its calls returned as tool_calls; the hub executes nothing here.",
            "requestBody": _body(CHAT_REQUEST),
            "responses": {"200": {"description": "chat.completion, or chat.completion.chunk events when stream is true.",
                                  "content": {**_json({"type": "object", "required": ["object", "choices"]}), **sse}},
                          **_errors(400, 401, 413, 503, 504, shape=OPENAI_ERROR)}}},
    }
