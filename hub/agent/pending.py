"""The turn-start hook for actions held by the safety policy until the user says yes.

When a sensitive call (unlock the front door) was answered with "Do you really want me to …?",
the next turn of that conversation decides, without the model:
- a plain yes within the policy's window runs the held call through the same tool path and
  speaks its confirmation;
- a clear no cancels it and says so;
- anything else (or a yes after the window) drops the held call and the turn goes on normally.
A yes in any other conversation finds nothing held there, so it confirms nothing.
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass, field

from hub.home.policy import ActionPolicy
from hub.home.tool_base import ToolContext, ToolRegistry, ToolResult
from hub.llm.types import ToolCall
from hub.locales import is_yes, normalize_language, phrase

_LOGGER = logging.getLogger(__name__)

# Whole replies that clearly refuse, per language (compared casefolded, punctuation ignored).
# TODO(locales): move to hub/locales as `policy.no_words`, like `policy.yes_words`.
_NO_WORDS = {
    "en": "no|nope|no thanks|no thank you|cancel|stop|don't|do not|never mind|no don't",
    "de": "nein|nee|nö|nein danke|abbrechen|abbruch|stopp|lieber nicht|bitte nicht|nicht",
    "fr": "non|non merci|annule|annuler|arrête|surtout pas|pas question",
    "es": "no|no gracias|cancela|cancelar|para|mejor no",
    "nl": "nee|nee dank je|annuleer|annuleren|stop|niet doen|liever niet",
    "it": "no|no grazie|annulla|annullare|fermati|meglio di no",
    "pl": "nie|nie dziękuję|anuluj|stop|lepiej nie",
    "pt": "não|não obrigado|não obrigada|cancela|cancelar|para|melhor não",
}


def is_no(text: str, language: str | None) -> bool:
    """Whether a whole reply is a plain no in the language (or in English)."""
    words = _NO_WORDS.get(normalize_language(language), "") + "|" + _NO_WORDS["en"]
    return _fold(text) in {_fold(w) for w in words.split("|") if w.strip()}


def _fold(text: str) -> str:
    kept = "".join(" " if unicodedata.category(ch).startswith("P") and ch != "'" else ch for ch in text)
    return " ".join(unicodedata.normalize("NFKC", kept).casefold().split())


@dataclass
class DirectAnswer:
    """A turn answered without the model (same shape as the fast path's result)."""

    reply: str
    intent: str
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


class ConfirmationHook:
    def __init__(self, policy: ActionPolicy, registry: ToolRegistry) -> None:
        self._policy = policy
        self._registry = registry

    async def try_handle(self, text: str, language: str, ctx: ToolContext) -> DirectAnswer | None:
        pending = self._policy.take_pending(ctx.conversation_id)
        if pending is None:
            return None
        what = f"{pending.call.name}({pending.entity_id})"
        if is_yes(text, language):
            if not self._policy.is_fresh(pending):
                _LOGGER.info("late yes in %s: %s was not confirmed in time", ctx.conversation_id, what)
                return None
            _LOGGER.info("confirmed in %s from %s: %s", ctx.conversation_id, ctx.source, what)
            with self._policy.granted(pending):
                result = await self._registry.call(pending.call, ctx)
            return DirectAnswer(_spoken(result, language), "confirmed", [pending.call], [result])
        if is_no(text, language):
            _LOGGER.info("cancelled in %s: %s", ctx.conversation_id, what)
            return DirectAnswer(phrase(language, "policy.cancelled"), "cancelled")
        _LOGGER.info("dropped in %s (no yes): %s", ctx.conversation_id, what)
        return None


def _spoken(result: ToolResult, language: str) -> str:
    if result.speech:
        return result.speech
    if not result.ok and result.data.get("message"):
        return str(result.data["message"])
    return phrase(language, "action.done" if result.ok else "error.generic")
