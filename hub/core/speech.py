"""What the user hears of a tool's result: its own sentence, or a phrase of the request's language.

The model's own words about an action are not trusted (small models say "Done." after a call
that failed, or without calling anything): a device action is confirmed with the tool's own
sentence, and a failure is told with a phrase of the request's language, never with the
developer text the model sees (`{"error": "unsupported", …}`, "Unknown color 'rgb(…)'").
"""

from __future__ import annotations

import re
from typing import Callable

from hub.core.tools import ToolResult
from hub.locales import phrase

CONFIRMATION_REQUIRED = "confirmation_required"  # ToolResult.data["error"] of a held action
# Refusals and failures whose message is already the sentence to speak ("backend_unavailable":
# the catalogue words HA/MQTT failures itself, e.g. error.ha_unavailable; "rejected": the device
# has no such action; "device_failed": it reported that it failed, "jammed").
SPOKEN_ERRORS = frozenset({CONFIRMATION_REQUIRED, "not_allowed", "rate_limited", "backend_unavailable",
                           "rejected", "device_failed"})
# error codes whose message is written for the model: each gets a phrase of its own
_ENTITY_PHRASES = {"unsupported": "error.unsupported", "invalid_arguments": "error.invalid_value"}
_NOT_UNDERSTOOD = frozenset({"malformed_call", "unknown_tool", "tool_not_allowed", "invalid_arguments"})
_CODE = re.compile(r'[{\[]\s*"|"\s*:\s*[{\["\d]|^\s*[{\[]')


def looks_like_code(sentence: str) -> bool:
    """JSON-shaped text ({"error": …}, a call written without its markers): developer text."""
    return bool(_CODE.search(sentence))


def speech_of(result: ToolResult, language: str, name_of: Callable[[str], str | None] = lambda _: None) -> str:
    """One result as a sentence for the user. `name_of` gives an entity id's friendly name."""
    if result.speech:
        return result.speech
    if result.ok:
        return phrase(language, "action.done")
    code = str(result.data.get("error", ""))
    message = str(result.data.get("message") or "")
    entity_id = result.data.get("entity_id")
    name = name_of(entity_id) if isinstance(entity_id, str) else None
    if code in SPOKEN_ERRORS and message and not looks_like_code(message):
        return message  # the policy's and the backends' own sentences for the user
    if code in _ENTITY_PHRASES and name:
        return phrase(language, _ENTITY_PHRASES[code], name=name)
    if code in _NOT_UNDERSTOOD:
        return phrase(language, "error.not_understood")
    if code == "tool_failed" or not message or looks_like_code(message):
        return phrase(language, "error.action_failed")
    return message  # "I couldn't find …", a custom tool's failure: already one of the hub's phrases
