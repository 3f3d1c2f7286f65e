"""The turn-start hook for actions held by the safety policy until the user says yes.

When sensitive calls (unlock the front door; unlock all the locks) were answered with "Do you
really want me to …?", the next turn of that conversation decides, without the model:
- a plain yes within the policy's window runs every held call of that request through the same
  tool path, each in turn (one failing does not stop the others), and speaks each outcome;
- a clear no cancels them all and says so;
- anything else (or a yes after the window) drops them and the turn goes on normally.
A yes in any other conversation finds nothing held there, so it confirms nothing; a yes or no in
the same conversation from another route or client (TurnRequest.client) is told that nothing
was done, and the held calls still wait for their asker: whoever read the question and its
conversation id on a shared bus cannot answer it, nor cancel it.
"""

from __future__ import annotations

import logging
import unicodedata

from hub.home.policy import ActionPolicy, PendingAction
from hub.core.answer import DirectAnswer
from hub.core.speech import speech_of
from hub.core.tools import ToolContext, ToolRegistry, ToolResult, may_confirm
from hub.locales import REFERENCE_LANGUAGE, is_yes, no_words, phrase

_LOGGER = logging.getLogger(__name__)


def is_no(text: str, language: str | None) -> bool:
    """Whether a whole reply is a plain no in the language (or in English): `policy.no_words`.

    Punctuation is ignored except the apostrophe, so "don't" stays a word.
    """
    return _fold(text) in {_fold(w) for w in no_words(language) | no_words(REFERENCE_LANGUAGE)}


def _fold(text: str) -> str:
    kept = "".join(" " if unicodedata.category(ch).startswith("P") and ch != "'" else ch for ch in text)
    return " ".join(unicodedata.normalize("NFKC", kept).casefold().split())


def _outcome(action: PendingAction, result: ToolResult, language: str, several: bool) -> str:
    """A held call's outcome as said: among several, a failure names its device."""
    said = speech_of(result, language)
    if result.ok or not several or action.entity_name in said:
        return said
    return phrase(language, "tool.failed", name=action.entity_name)


class ConfirmationHook:
    def __init__(self, policy: ActionPolicy, registry: ToolRegistry) -> None:
        self._policy = policy
        self._registry = registry

    def waiting(self, conversation_id: str) -> bool:
        """Whether the conversation waits for a yes or no that may still count."""
        held = self._policy.peek_pending(conversation_id)
        return held is not None and self._policy.is_fresh(held)

    def forget(self, conversation_id: str) -> None:
        held = self._policy.take_pending(conversation_id)
        if held is not None:
            _LOGGER.info("dropped in %s (nobody can answer there): %s", conversation_id,
                         ", ".join(f"{a.call.name}({a.entity_id})" for a in held.actions))

    async def try_handle(self, text: str, language: str, ctx: ToolContext) -> DirectAnswer | None:
        held = self._policy.peek_pending(ctx.conversation_id)
        if held is None:
            return None
        if held.ctx.source != ctx.source or not may_confirm(held.ctx.client, ctx.client):
            # not an answer: it neither confirms nor drops what the asker was asked
            if not (is_yes(text, language) or is_no(text, language)):
                return None
            _LOGGER.warning("answer in %s from %s ignored: the question was asked of another "
                            "route or client (%s)", ctx.conversation_id, ctx.source, held.ctx.source)
            return DirectAnswer(phrase(language, "action.nothing_done"), "not_the_asker")
        self._policy.take_pending(ctx.conversation_id)
        what = ", ".join(f"{a.call.name}({a.entity_id})" for a in held.actions)
        if is_yes(text, language):
            if not self._policy.is_fresh(held):
                _LOGGER.info("late yes in %s: %s was not confirmed in time", ctx.conversation_id, what)
                return None
            _LOGGER.info("confirmed in %s from %s: %s", ctx.conversation_id, ctx.source, what)
            results = []
            for action in held.actions:
                with self._policy.granted(held, action):
                    results.append(await self._registry.call(action.call, ctx))
            said = dict.fromkeys(_outcome(a, r, language, several=len(results) > 1)
                                 for a, r in zip(held.actions, results))
            return DirectAnswer(" ".join(said), "confirmed", [a.call for a in held.actions], results)
        if is_no(text, language):
            _LOGGER.info("cancelled in %s: %s", ctx.conversation_id, what)
            return DirectAnswer(phrase(language, "policy.cancelled"), "cancelled")
        _LOGGER.info("dropped in %s (no yes): %s", ctx.conversation_id, what)
        return None

