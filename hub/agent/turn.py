"""One turn's state and its model rounds: the stream read into the reply, the calls run, and
what the hub says about them.

Text that starts like JSON is held back: a call written without its format's markers
(`{"name": …, "arguments": …}` naming an offered tool) is read as the call it is. Every call
goes through `ToolRegistry.call` under the turn's allowed tools. The model's words about an
action are checked against what its calls did (`speakable`, `said_for_actions`).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from hub.agent.conversation import Conversation
from hub.agent.personas import Persona
from hub.agent.reply import ReplyBuilder
from hub.agent.types import ReplyChunk, ToolFinished, ToolStarted, TurnEvent, TurnRequest, TurnResult, TurnTimings
from hub.agent.utterances import claims_action, repeats_itself
from hub.core.answer import DirectAnswer
from hub.core.speech import CONFIRMATION_REQUIRED, looks_like_code
from hub.core.tools import ToolContext, ToolRegistry, ToolResult
from hub.home.resolve import Match
from hub.llm.tool_call_syntax import ToolCallSyntaxError, parse_json_call
from hub.llm.types import (
    Done,
    Engine,
    GenerationRequest,
    MalformedToolCall,
    Message,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolConstraint,
)
from hub.locales import phrase

_LOGGER = logging.getLogger(__name__)
READ_STATE = "get_state"  # the home tool a question's mistaken action call is turned into


@dataclass
class TurnState:
    """One turn as it goes: who asked, in which language, what ran, how long it took."""

    request: TurnRequest
    conversation: Conversation
    language: str
    ctx: ToolContext
    persona: Persona
    deadline: float  # time.monotonic() at which the turn times out
    emit: Callable[[TurnEvent], None]  # the turn's events, to whoever runs it
    languages: list[str] = field(default_factory=list)  # the text's candidate languages, in order
    timings: TurnTimings = field(default_factory=TurnTimings)
    started: float = field(default_factory=time.monotonic)
    finished_calls: list[ToolFinished] = field(default_factory=list)

    def speaking(self, language: str) -> TurnState:
        """The turn goes on in `language` (a later candidate's templates matched)."""
        self.language = language
        self.ctx = replace(self.ctx, language=language)
        self.conversation.language = language
        return self


def chunk_emitter(state: TurnState) -> Callable[[str], None]:
    """ReplyChunk events for the reply's sentences; the first one sets the turn's first_token_s."""
    def on_chunk(text: str) -> None:
        if not state.timings.first_token_s:
            state.timings.first_token_s = time.monotonic() - state.started
        state.emit(ReplyChunk(text))
    return on_chunk


def answered_directly(state: TurnState, text: str, outcome: DirectAnswer, path: str) -> TurnResult:
    """A turn answered without the model (fast path, or a confirmed/cancelled action)."""
    for call, result in zip(outcome.calls, outcome.results):
        state.emit(ToolStarted(call))
        finished = ToolFinished(call, result.ok, result.data, 0.0)
        state.finished_calls.append(finished)
        state.emit(finished)
    state.emit(ReplyChunk(outcome.reply))
    # the model sees what happened, so a follow-up turn can refer to it
    state.conversation.messages += [Message("user", text), Message("assistant", outcome.reply)]
    state.timings.first_token_s = time.monotonic() - state.started
    error = failed_actions(outcome.results)
    return TurnResult(state.conversation.id, state.language, outcome.reply, ok=error is None,
                      error=error, tool_calls=state.finished_calls, timings=state.timings, path=path)


# Results that are answers, not failures: the turn did what it should (asked, or said no).
_REFUSALS = frozenset({CONFIRMATION_REQUIRED, "not_allowed", "rate_limited"})


def failed_actions(results: Sequence[ToolResult]) -> str | None:
    """The error code when every action of a direct answer failed (a broker or HA that is
    down), so the turn says `ok: false` beside its spoken apology; None otherwise."""
    errors = [str(r.data.get("error") or "tool_failed") for r in results if not r.ok]
    if not results or len(errors) < len(results) or any(e in _REFUSALS for e in errors):
        return None
    return errors[0]


def not_found(state: TurnState, text: str, name: str) -> TurnResult:
    """ "I couldn't find X": a name that fits no device of the home (never a neighbour's)."""
    answer = DirectAnswer(phrase(state.language, "entity.not_found", name=name), "not_found")
    return answered_directly(state, text, answer, "resolution")


def failure(conversation_id: str, language: str, code: str) -> TurnResult:
    return TurnResult(conversation_id, language, phrase(language, f"error.{code}"), ok=False, error=code)


def first_round_constraint(allowed: Sequence[str], actions: frozenset[str], constrained: bool,
                           persona: Persona, match: Match, question: bool) -> ToolConstraint | None:
    """A small model's (`constrained`) first round on a command calls an `allowed` tool on the
    request's best matches or answers in words (grammar-bound); a persona with tool_choice
    "required" must call one of its tools, whatever the model."""
    if not allowed:
        return None
    names = tuple(allowed)
    if constrained and actions & set(names) and not question and match.candidates:
        return ToolConstraint(names, tuple(e.entity_id for e in match.best), answer=True)
    if persona.tool_choice == "required":
        return ToolConstraint(names, ())
    return None


async def generate(
    engine: Engine, generation: GenerationRequest, state: TurnState, reply: ReplyBuilder, allowed: Sequence[str],
) -> tuple[str, list[ToolCall], str]:
    """Stream one model round into the reply; the raw text, the calls and the stop reason.

    Text that starts like JSON is held back: a call written without its format's markers
    (`{"name": …, "arguments": …}` naming an offered tool) is read as the call it is. A round
    that starts repeating itself, or whose reply is capped, is halted there, and its Done still
    read: its tokens count in the turn's usage.
    """
    raw: list[str] = []
    calls: list[ToolCall] = []
    stop_reason = "stop"
    held = False
    stream = engine.stream(generation)
    try:
        async for delta in stream:
            if isinstance(delta, TextDelta):
                raw.append(delta.text)
                text = "".join(raw)
                held = held or (not reply.text and text.lstrip()[:1] in ("{", "["))
                if not held:
                    reply.add_text(delta.text)
                if repeats_itself(text[-400:]):
                    _LOGGER.info("the model repeats itself in %s: reply ended", state.conversation.id)
                    reply.stop()
                if reply.capped:
                    generation.halt.set()
            elif isinstance(delta, ToolCallDelta):
                calls.append(delta.call)
            elif isinstance(delta, MalformedToolCall):
                calls.append(ToolCall("invalid_tool_call", {"raw": delta.raw[:300], "error": delta.error},
                                      id=f"bad_{len(calls) + 1}"))
            elif isinstance(delta, ThinkingDelta):
                _LOGGER.debug("thinking: %s", delta.text)
            elif isinstance(delta, Done):
                state.timings.add_usage(delta.usage)
                stop_reason = delta.usage.stop_reason
    finally:
        await stream.aclose()
    text = "".join(raw)
    if held:
        written = _calls_written_as_text(text, allowed)
        if written:
            return "", [*calls, *written], stop_reason
        reply.add_text(text)  # not a call: the sentence filter keeps JSON from being spoken
    return text, calls, stop_reason


async def run_tools(
    registry: ToolRegistry, calls: list[ToolCall], state: TurnState, turn_messages: list[Message],
    allowed: Sequence[str],
) -> list[ToolResult]:
    results = []
    for call in calls:
        state.emit(ToolStarted(call))
        started = time.monotonic()
        if call.name == "invalid_tool_call":
            result = ToolResult(ok=False, data={
                "error": "malformed_call",
                "message": f"Your tool call could not be read ({call.arguments.get('error')}). "
                           "Write one valid call."})
        else:
            result = await registry.call(call, state.ctx, allowed=allowed)
        seconds = time.monotonic() - started
        state.timings.tools_s += seconds
        finished = ToolFinished(call, result.ok, result.data, seconds)
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
        return " ".join(s for s in spoken_results if s) or phrase(state.language, "error.not_understood")
    return ""


def speakable(registry: ToolRegistry, state: TurnState, question: bool, sentence: str) -> bool:
    """Whether a sentence of the model may be spoken: never JSON or a call written as text,
    and, for the home, no claim of an action unless one succeeded in this turn — and not a
    device action, which the hub tells from its results (the model may claim more)."""
    if looks_like_code(sentence):
        return False
    if state.persona.home and not question and claims_action(sentence, state.language, also="en"):
        done = [f.call.name for f in state.finished_calls if f.ok and not _reads_only(registry, f.call.name)]
        return bool(done) and not set(done) & registry.device_actions()
    return True


def _reads_only(registry: ToolRegistry, tool_name: str) -> bool:
    return getattr(registry.get(tool_name), "changes_home", None) is False


def as_reading(call: ToolCall, actions: frozenset[str], allowed: Sequence[str]) -> ToolCall:
    """A device action the model called for a question, as a look at that device's state."""
    entity_id = call.arguments.get("entity_id")
    if call.name in actions and isinstance(entity_id, str) and READ_STATE in allowed:
        return ToolCall(READ_STATE, {"entity_id": entity_id}, id=call.id)
    return call


def _calls_written_as_text(text: str, allowed: Sequence[str]) -> list[ToolCall]:
    """`{"name": …, "arguments": …}` (or a list of them) written as plain text, when every name
    is a tool on offer; [] for anything else."""
    try:
        parsed = parse_json_call(text.strip().rstrip("."))
    except ToolCallSyntaxError:
        return []
    if not all(name in allowed for name, _ in parsed):
        return []
    return [ToolCall(name, arguments, id=f"text_{n + 1}") for n, (name, arguments) in enumerate(parsed)]
