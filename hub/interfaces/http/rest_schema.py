"""The HTTP API's JSON schemas: its requests' (the handlers validate bodies with them) and its
responses' (documentation; tests check real responses against them).

One source: `openapi` publishes these very schemas, so the document cannot drift from what the
server accepts.
"""

from __future__ import annotations

import re
from typing import Any

from hub.agent.types import MAX_REQUEST_CHARS
from hub.settings import RUNTIME_TYPES

MAX_BODY_BYTES = 256 * 1024
# `$(?!\n)`: Python's `$` also matches before a final newline; ECMA's does not. Both agree now.
DOMAIN_PATTERN = r"^[a-z_]+$(?!\n)"

_LANGUAGE = {"type": "string", "pattern": r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$(?!\n)",
             "description": "Language code such as en or de-DE; default: the configured language."}
PERSONA: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 64,
           "description": "The persona whose tools apply (GET /api/personas); default: the default persona."}
CONVERSATION_ID = {"type": "string", "minLength": 1, "maxLength": 128, "pattern": r"^[A-Za-z0-9_.:\-]+$(?!\n)"}
_REASONING_MODE = {"type": "string", "enum": ["on", "off", "budget"]}
_PLACE = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "\\S"}
# where a request was said: its area is the speaker's room ("turn on the lights", "in here")
SPEAKER_PLACE: dict[str, Any] = {
    "device_id": {**_PLACE, "description": "The device it was said at (Home Assistant's device id, or an "
                                           "MQTT device's identifier): its area is the speaker's room."},
    "satellite_id": {**_PLACE, "description": "The satellite it was said at (an assist_satellite entity id, "
                                              "or an id of the satellites option): its area is the speaker's room."},
    "area": {**_PLACE, "description": "The area it was said in (an area id or name): the speaker's room; "
                                      "wins over device_id and satellite_id."},
    "floor": {**_PLACE, "description": "The floor of that area, for a home whose floors the hub does not "
                                       "know (an area on a floor of the hub's home is on that one)."},
}
MAX_EXTRA_PROMPT_CHARS = 4000


def _json_schema_for(addon_type: str) -> dict[str, Any]:
    """JSON schema of a runtime setting from its add-on type (bool, int(a,b), list(a|b))."""
    if addon_type == "bool":
        return {"type": "boolean"}
    if match := re.fullmatch(r"int\((-?\d+),(-?\d+)\)", addon_type):
        return {"type": "integer", "minimum": int(match[1]), "maximum": int(match[2])}
    if match := re.fullmatch(r"list\((.+)\)", addon_type):
        return {"type": "string", "enum": match[1].split("|")}
    raise ValueError(f"no JSON schema for runtime setting type {addon_type!r}")


ASK_REQUEST: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text"],
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_REQUEST_CHARS, "pattern": "\\S",
                 "description": "What the user said or typed."},
        "conversation_id": {**CONVERSATION_ID, "description": "Continue this conversation; omit to start one."},
        "language": _LANGUAGE,
        "persona": {**PERSONA, "description": "Talk to this persona (GET /api/personas); default: the "
                                              "conversation's, else the default persona."},
        "conversational": {"type": "boolean", "description": "Override the conversational mode for this turn."},
        **SPEAKER_PLACE,
        "extra_system_prompt": {"type": "string", "maxLength": MAX_EXTRA_PROMPT_CHARS,
                                "description": "What the client tells the model about this request (Home "
                                               "Assistant's extra_system_prompt, e.g. the question a "
                                               "satellite asked); the model reads it, the hub's own "
                                               "routes do not."},
        "reasoning": {
            "description": "Override thinking for this turn: a mode, or a mode with a token budget.",
            "oneOf": [
                _REASONING_MODE,
                {"type": "object", "additionalProperties": False, "required": ["mode"],
                 "properties": {"mode": _REASONING_MODE,
                                "budget": {"type": "integer", "minimum": 0, "maximum": 8192}}},
            ],
        },
    },
}

_SPEAKER_ID = {"type": "string", "minLength": 1, "maxLength": 255}
PLAN_REQUEST: dict[str, Any] = {
    **ASK_REQUEST,
    "description": "What /api/ask takes, and where it was said: the plan answers what the hub would do.",
    "properties": {
        **ASK_REQUEST["properties"],
        "area": {**_SPEAKER_ID, "description": "The speaker's area (an area's name or id)."},
        "device_id": {**_SPEAKER_ID, "description": "The device the request came from (a satellite's device id)."},
        "satellite_id": {**_SPEAKER_ID, "description": "The satellite the request came from."},
    },
}

_ENTITY_ID = {"type": "string", "pattern": r"^[a-z0-9_]+\.[A-Za-z0-9_]+$(?!\n)", "maxLength": 255}
NAME_CHANGE: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["kind", "target", "name"],
    "properties": {
        "kind": {"enum": ["entity", "area", "floor"]},
        "target": {"type": "string", "minLength": 1, "maxLength": 255,
                   "description": "The entity id, or the area's or floor's name (GET /api/names)."},
        "name": {"type": "string", "minLength": 1, "maxLength": 100,
                 # a character that is no blank, control or invisible format character
                 "pattern": "[^\\s\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f"
                            "\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb]",
                 "description": "The name to add or to take away."},
    },
}
UNTARGETED_UPDATE: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["entity_ids"],
    # 800 ids of the longest kind still fit in MAX_BODY_BYTES
    "properties": {"entity_ids": {"type": "array", "maxItems": 800, "items": _ENTITY_ID,
                                  "description": "Every entity the hub must leave be (the whole list)."}},
}

TOOL_RUN_REQUEST: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "arguments": {"type": "object", "description": "The tool's arguments (see GET /api/tools)."},
        "persona": PERSONA,
        "language": _LANGUAGE,
        "conversation_id": CONVERSATION_ID,
    },
}

GREET_REQUEST: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"conversation_id": {**CONVERSATION_ID, "description": "The conversation to open; "
                                                                         "omit to start a new one."}},
}

SETTINGS_UPDATE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "minProperties": 1,
    "properties": {name: _json_schema_for(kind) for name, kind in RUNTIME_TYPES.items()},
}

_TEXT_PART = {"type": "object", "required": ["type", "text"],
              "properties": {"type": {"const": "text"}, "text": {"type": "string"}}}
_CHAT_TOOL_CALL = {
    "type": "object", "required": ["function"],
    "properties": {
        "id": {"type": "string"}, "type": {"const": "function"},
        "function": {"type": "object", "required": ["name", "arguments"],
                     "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}}},
    },
}
_CHAT_MESSAGE = {
    "type": "object",
    "required": ["role"],
    "properties": {
        "role": {"type": "string", "enum": ["system", "developer", "user", "assistant", "tool"]},
        "content": {"anyOf": [{"type": "string"}, {"type": "null"},
                              {"type": "array", "items": _TEXT_PART}]},
        "tool_calls": {"type": "array", "items": _CHAT_TOOL_CALL},
        "tool_call_id": {"type": "string"},
        "name": {"type": "string"},
    },
}
_CHAT_TOOL = {
    "type": "object", "required": ["type", "function"],
    "properties": {
        "type": {"const": "function"},
        "function": {"type": "object", "required": ["name"],
                     "properties": {"name": {"type": "string", "pattern": r"^[A-Za-z0-9_\-]{1,64}$(?!\n)"},
                                    "description": {"type": "string"},
                                    "parameters": {"type": "object"}}},
    },
}
CHAT_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["messages"],
    "description": "OpenAI chat completions request. Parameters the hub cannot honour (n > 1, logprobs, "
                   "top_logprobs, a response_format other than text, audio output, logit_bias) get a 400 "
                   "naming them; other unknown fields are accepted and ignored.",
    "properties": {
        "model": {"type": "string"},
        "messages": {"type": "array", "minItems": 1, "maxItems": 512, "items": _CHAT_MESSAGE},
        "tools": {"type": "array", "maxItems": 128, "items": _CHAT_TOOL},
        "tool_choice": {"anyOf": [
            {"type": "string", "enum": ["auto", "none", "required"]},
            {"type": "object", "required": ["type", "function"],
             "properties": {"type": {"const": "function"},
                            "function": {"type": "object", "required": ["name"],
                                         "properties": {"name": {"type": "string"}}}}}]},
        "stream": {"type": "boolean"},
        "stream_options": {"type": "object", "properties": {"include_usage": {"type": "boolean"}}},
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": 32768},
        "max_completion_tokens": {"type": "integer", "minimum": 1, "maximum": 32768},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "reasoning_effort": {"type": "string", "enum": ["none", "minimal", "low", "medium", "high"]},
        "stop": {"anyOf": [{"type": "string", "minLength": 1},
                           {"type": "array", "maxItems": 4, "items": {"type": "string", "minLength": 1}}],
                 "description": "The text ends before the first of these sequences (finish_reason stop)."},
        "n": {"type": "integer", "minimum": 1, "maximum": 128, "description": "Only 1 is supported."},
        "logprobs": {"type": "boolean", "description": "Only false is supported."},
        "top_logprobs": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Only 0 is supported."},
        "response_format": {"type": "object", "required": ["type"],
                            "properties": {"type": {"type": "string"}},
                            "description": "Only {\"type\": \"text\"} is supported."},
        # accepted and ignored (the hub samples as configured), but validated as OpenAI does
        "top_p": {"type": "number", "minimum": 0, "maximum": 1, "description": "Accepted, not used."},
        "frequency_penalty": {"type": "number", "minimum": -2, "maximum": 2, "description": "Accepted, not used."},
        "presence_penalty": {"type": "number", "minimum": -2, "maximum": 2, "description": "Accepted, not used."},
        "parallel_tool_calls": {"type": "boolean", "description": "Accepted, not used."},
        "seed": {"type": "integer", "description": "Accepted, not used."},
        "user": {"type": "string", "description": "Accepted, not used."},
    },
}

# --- responses (documentation; tests check real responses against them) -----------------------

ERROR = {"type": "object", "required": ["error", "message"],
         "properties": {"error": {"type": "string"}, "message": {"type": "string"}}}
OPENAI_ERROR = {"type": "object", "required": ["error"], "description": "OpenAI's error shape.",
                "properties": {"error": {"type": "object", "required": ["message", "type", "param", "code"],
                                         "properties": {"message": {"type": "string"}, "type": {"type": "string"},
                                                        "param": {"type": ["string", "null"]},
                                                        "code": {"type": ["string", "null"]}}}}}
OPENAI_MODEL = {"type": "object", "required": ["id", "object", "created", "owned_by"],
                "properties": {"id": {"type": "string"}, "object": {"const": "model"},
                               "created": {"type": "integer"}, "owned_by": {"type": "string"}}}
_TIMINGS = {"type": "object", "additionalProperties": {"type": "number"},
            "description": "Seconds (…_s) and token counts of the turn's stages."}
TOOL_CALL_RESULT = {
    "type": "object", "required": ["name", "arguments", "ok", "result"],
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "arguments": {"type": "object"},
                   "ok": {"type": "boolean"}, "result": {"type": "object"}, "seconds": {"type": "number"},
                   "changed_entities": {"type": "array", "items": {"type": "string"},
                                        "description": "The entities the call acted on."}},
}
ASK_RESULT = {
    "type": "object",
    "required": ["conversation_id", "language", "reply", "ok", "tool_calls", "timings", "path"],
    "properties": {
        "conversation_id": {"type": "string"}, "language": {"type": "string"},
        "reply": {"type": "string", "description": "The speakable reply (a spoken error when ok is false)."},
        "ok": {"type": "boolean"}, "error": {"type": ["string", "null"]},
        "tool_calls": {"type": "array", "items": TOOL_CALL_RESULT},
        "timings": _TIMINGS, "path": {"type": "string", "enum": ["model", "fast_path", "confirmation", "resolution"]},
        "intent": {"type": ["string", "null"],
                   "description": "What a turn answered without the model did or answered: an intent of Home "
                                  "Assistant's (HassTurnOn, HassGetState, …), or not_found (no device of that "
                                  "name), not_understood, which_one / ambiguous (it asks which), confirmed, "
                                  "cancelled; null for the model's turns."},
        "awaiting": {"enum": ["confirmation", "choice", "question", None],
                     "description": "What the reply waits for, so that a voice client listens again at once "
                                    "(Home Assistant's continue_conversation) and sends the answer in the same "
                                    "conversation: confirmation (a yes or no to a held action), choice (the "
                                    "answer to \"which one?\"), question (the reply asks something else); "
                                    "null: nothing."},
    },
}
_PLANNED_CALL = {
    "type": "object", "required": ["name", "arguments", "verdict"],
    "properties": {
        "name": {"type": "string"}, "arguments": {"type": "object"},
        "verdict": {"type": "string", "description": "would_run; would_ask (the policy asks for a yes); "
                    "not_allowed, rate_limited (the policy refuses); reads (a look at a state, done); "
                    "unchecked (a tool that is not run in a plan, such as a timer); or the error the call "
                    "would fail with (unknown_entity, unsupported, invalid_arguments, …)."},
        "message": {"type": ["string", "null"], "description": "The question, the refusal or the error."},
        "entity_id": {"type": ["string", "null"]}, "service": {"type": ["string", "null"]},
        "changes": {"type": ["boolean", "null"], "description": "false: the device is already so."},
    },
}
PLAN = {
    "type": "object",
    "required": ["plan_id", "text", "persona", "language", "path", "calls", "weighed", "reply", "runnable",
                 "expires_in_s"],
    "properties": {
        "plan_id": {"type": "string"}, "text": {"type": "string"}, "persona": {"type": "string"},
        "language": {"type": "object", "required": ["used", "candidates", "confidences"], "properties": {
            "used": {"type": "string"}, "given": {"type": ["string", "null"]}, "preferred": {"type": "string"},
            "candidates": {"type": "array", "items": {"type": "string"}},
            "confidences": {"type": "object", "additionalProperties": {"type": "number"}}}},
        "path": {"type": "string", "description": "fast_path, model, resolution (which one? / not found) …"},
        "intent": {"type": ["string", "null"]},
        "slots": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "string"}}},
        "calls": {"type": "array", "items": _PLANNED_CALL},
        "weighed": {"type": "array", "description": "The entities the resolver weighed for the words.", "items": {
            "type": "object", "required": ["entity_id", "name", "best"],
            "properties": {"entity_id": {"type": "string"}, "name": {"type": "string"},
                           "area": {"type": ["string", "null"]}, "best": {"type": "boolean"}}}},
        "tier": {"type": "string"},
        "reply": {"type": ["string", "null"], "description": "What the hub would say, when it says it without "
                                                             "acting (an answer, which one?); null when it acts."},
        "withheld": {"type": "array", "items": {"type": "string"}}, "area": {"type": ["string", "null"]},
        "device_id": {"type": ["string", "null"]}, "satellite_id": {"type": ["string", "null"]},
        "runnable": {"type": "boolean", "description": "Whether the plan has calls to run."},
        "expires_in_s": {"type": "number"},
    },
}
PLAN_RUN = {
    "type": "object", "required": ["plan_id", "language", "reply", "ok", "tool_calls"],
    "properties": {"plan_id": {"type": "string"}, "language": {"type": "string"}, "reply": {"type": "string"},
                   "ok": {"type": "boolean"}, "tool_calls": {"type": "array", "items": TOOL_CALL_RESULT}},
}
_NAME_ENTRY = {
    "type": "object", "required": ["name", "origin", "removable"],
    "properties": {"name": {"type": "string"},
                   "origin": {"enum": ["home", "home_alias", "added", "generated", "translation"]},
                   "source": {"type": ["string", "null"], "description": "generated: the name it comes from; "
                                                                         "translation: its languages."},
                   "removable": {"type": "boolean"}},
}
TARGET_NAMES = {
    "type": "object", "required": ["kind", "target", "name", "names", "removed", "targeted"],
    "properties": {"kind": {"enum": ["entity", "area", "floor"]}, "target": {"type": "string"},
                   "name": {"type": "string"}, "names": {"type": "array", "items": _NAME_ENTRY},
                   "removed": {"type": "array", "items": {"type": "string"},
                               "description": "The home's names taken away."},
                   "targeted": {"type": "boolean"}, "area": {"type": ["string", "null"]},
                   "domain": {"type": ["string", "null"]}, "areas": {"type": "array", "items": {"type": "string"}}},
}
UNTARGETED = {"type": "object", "required": ["untargeted"],
              "properties": {"untargeted": {"type": "array", "items": {"type": "string"}}}}
NAMES = {
    "type": "object", "required": ["entities", "areas", "floors", "untargeted"],
    "properties": {"entities": {"type": "array", "items": TARGET_NAMES},
                   "areas": {"type": "array", "items": TARGET_NAMES},
                   "floors": {"type": "array", "items": TARGET_NAMES},
                   "untargeted": {"type": "array", "items": {"type": "string"}}},
}
ENTITY = {
    "type": "object", "required": ["entity_id", "name", "state", "domain"],
    "properties": {"entity_id": {"type": "string"}, "name": {"type": "string"}, "state": {"type": "string"},
                   "domain": {"type": "string"}, "area": {"type": ["string", "null"]},
                   "aliases": {"type": "array", "items": {"type": "string"}},
                   "device_class": {"type": ["string", "null"]}, "attributes": {"type": "object"},
                   "source": {"type": "string"}},
}
TOOL = {"type": "object", "required": ["name", "description", "parameters"],
        "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                       "parameters": {"type": "object"}}}
TOOL_RUN_RESULT = {
    "type": "object", "required": ["tool", "ok", "result"],
    "description": "The same answer as on MQTT `<base>/tool/<name>/result`.",
    "properties": {"id": {"type": ["string", "integer", "null"]}, "tool": {"type": "string"},
                   "ok": {"type": "boolean"},
                   "result": {"type": "object", "description": "What the model would see."},
                   "speech": {"type": ["string", "null"]}, "pending": {"type": "boolean"},
                   "changed_entities": {"type": "array", "items": {"type": "string"}},
                   "error": {"type": "string"}, "message": {"type": "string"}},
}
PERSONA_INFO = {
    "type": "object", "required": ["key", "name", "tools", "default"],
    "properties": {"key": {"type": "string"}, "name": {"type": "string"},
                   "language": {"type": ["string", "null"]}, "greeting": {"type": ["string", "null"]},
                   "tools": {"type": "array", "items": {"type": "string"}}, "default": {"type": "boolean"}},
}
CONVERSATION = {
    "type": "object", "required": ["conversation_id", "language", "messages"],
    "properties": {
        "conversation_id": {"type": "string"}, "language": {"type": "string"},
        "persona": {"type": ["string", "null"], "description": "Who the hub speaks as in it."},
        "messages": {"type": "array", "items": {
            "type": "object", "required": ["role", "content"],
            "properties": {"role": {"type": "string"}, "content": {"type": "string"},
                           "name": {"type": ["string", "null"]},
                           "tool_calls": {"type": "array", "items": {"type": "object"}}}}},
    },
}
DOWNLOAD = {
    "type": ["object", "null"], "description": "The configured model's download (model_repo), while the stand-in "
                                               "serves. Without the token: no repo, file or message.",
    "properties": {"repo": {"type": "string"}, "file": {"type": "string"},
                   "state": {"enum": ["pending", "checking", "downloading", "verifying", "loading", "priming", "done",
                                      "failed"]},
                   "bytes": {"type": "integer"}, "total_bytes": {"type": ["integer", "null"]},
                   "rate_bps": {"type": "integer"}, "eta_s": {"type": ["integer", "null"]},
                   "reason": {"type": ["string", "null"], "description": "Why it failed: offline, unauthorized, "
                              "forbidden, not_found, disk_full, too_little_memory, not_writable, file_error, "
                              "bad_checksum, bad_file, interrupted, error, load_failed."},
                   "retrying": {"type": "boolean", "description": "A failure the hub tries again in a few minutes."},
                   "message": {"type": ["string", "null"], "description": "What went wrong and what to do."}},
}
SET_ASIDE = {
    "type": "array", "description": "State files found damaged since the start: the content is kept beside each "
                                    "(copy), the hub uses what it could read. Without the token: the names only.",
    "items": {"type": "object", "required": ["file", "copy"], "properties": {
        **{key: {"type": "string"} for key in ("file", "problem", "outcome", "at")}, "copy": {"type": ["string", "null"]}}},
}
SETTINGS = {"type": "object", "required": list(RUNTIME_TYPES),
            "properties": {name: _json_schema_for(kind) for name, kind in RUNTIME_TYPES.items()}}
STATUS = {
    "type": "object", "required": ["version", "model", "entities", "uptime_s"],
    "properties": {"version": {"type": "string"}, "model": {"type": "object"},
                   "entities": {"type": "integer"}, "uptime_s": {"type": "number"},
                   "languages": {"type": "array", "items": {"type": "string"}},
                   "settings": SETTINGS,
                   "home_sources": {"type": "array", "items": {"type": "string"},
                                    "description": "Where the entities come from (demo, ha, mqtt)."},
                   "namesakes": {"type": "array", "items": {"type": "object"}, "description":
                                 "Names several devices answer to: a command naming one asks which."},
                   "speech": {"type": "object"}, "download": DOWNLOAD, "set_aside": SET_ASIDE},
}

