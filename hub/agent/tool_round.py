"""A model round's calls and what is said of them: the calls run under the turn's allowed tools
(each announced as it starts and finishes, its result fed back to the model), a device action
the model called for a question read as a look at that device, and the model's words about an
action held against what its calls really did.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Sequence

from hub.agent.ports import LanguageIdentifier
from hub.agent.prompt_echo import PromptEcho
from hub.agent.reply import ReplyBuilder
from hub.agent.turn import TurnState
from hub.agent.types import ToolFinished, ToolStarted
from hub.agent.utterances import claims_action, in_other_language
from hub.core.speech import looks_like_code
from hub.core.tools import ToolRegistry, ToolResult
from hub.core.messages import Message, ToolCall
from hub.locales import phrase

_LOGGER = logging.getLogger(__name__)
READ_STATE = "get_state"  # the home tool a question's mistaken action call is turned into


async def run_tools(
    registry: ToolRegistry, calls: list[ToolCall], state: TurnState, turn_messages: list[Message],
    allowed: Sequence[str], refused: ToolResult | None = None,
) -> list[ToolResult]:
    """Run the round's calls (`refused`: none of them runs, each gets that result)."""
    results = []
    for call in calls:
        state.emit(ToolStarted(call))
        started = time.monotonic()
        if refused is not None:
            result = refused
        elif call.name == "invalid_tool_call":
            result = ToolResult(ok=False, data={
                "error": "malformed_call",
                "message": f"Your tool call could not be read ({call.arguments.get('error')}). "
                           "Write one valid call."})
        else:
            result = await registry.call(call, state.ctx, allowed=allowed)
        seconds = time.monotonic() - started
        state.timings.tools_s += seconds
        finished = ToolFinished.of(call, result, seconds)
        state.finished_calls.append(finished)
        state.emit(finished)
        _LOGGER.info("tool %s(%s) in %s from %s: %s", call.name, json.dumps(call.arguments),
                     state.conversation.id, state.ctx.source, "ok" if result.ok else result.data.get("error"))
        turn_messages.append(Message("tool", json.dumps(result.data, ensure_ascii=False),
                                     name=call.name, tool_call_id=call.id or None))
        results.append(result)
    return results


def said_for_actions(state: TurnState, reply: ReplyBuilder, spoken_results: list[str],
                     actions: frozenset[str]) -> str:
    """What the hub adds after the model's words: the calls' outcomes when a device action
    ran or the last calls failed, else what really happened when the model's words claimed an
    action (or were all refused), else nothing."""
    acted = [f for f in state.finished_calls if f.call.name in actions]
    failed_last = spoken_results and any(not f.ok for f in state.finished_calls[-len(spoken_results):])
    if acted or failed_last:
        return " ".join(dict.fromkeys(s for s in spoken_results if s))
    if state.persona.home and any(claims_action(d, state.language, also="en") for d in reply.dropped):
        return phrase(state.language, "action.nothing_done")
    if not reply.text:
        return " ".join(s for s in spoken_results if s) or phrase(
            state.language, "reply.withheld" if reply.withheld or reply.capped else "error.not_understood")
    return ""


def withheld(registry: ToolRegistry, state: TurnState, question: bool, echo: PromptEcho,
             languages: LanguageIdentifier | None, sentence: str) -> str | None:
    """Why a sentence of the model may not be spoken, or None: never JSON or a call written as
    text ("code"), nothing of its prompt (`PromptEcho`), when `languages` identifies them (a
    stand-in's) nothing in another language than the request's nor a mix of languages
    ("language"), and, for the home, no claim of an action unless one succeeded in this turn —
    and not a device action, which the hub tells from its results ("claim": the model may
    claim more)."""
    if looks_like_code(sentence):
        return "code"
    echoed = echo.withheld_for(sentence)
    if echoed is not None:
        return echoed
    if languages is not None and in_other_language(sentence, state.language, languages.confidences,
                                                   languages.character_confidences):
        return "language"
    if state.persona.home and not question and claims_action(sentence, state.language, also="en"):
        done = [f.call.name for f in state.finished_calls if f.ok and not _reads_only(registry, f.call.name)]
        if not done or set(done) & registry.device_actions():
            return "claim"
    return None


def _reads_only(registry: ToolRegistry, tool_name: str) -> bool:
    tool = registry.get(tool_name)
    return tool is not None and tool.changes_home is False


def as_reading(call: ToolCall, actions: frozenset[str], allowed: Sequence[str]) -> ToolCall:
    """A device action the model called for a question, as a look at that device's state."""
    entity_id = call.arguments.get("entity_id")
    if call.name in actions and isinstance(entity_id, str) and READ_STATE in allowed:
        return ToolCall(READ_STATE, {"entity_id": entity_id}, id=call.id)
    return call
