"""One turn: its state, its task, and its ends that need no model: a direct answer (its calls
and reply told as events and kept in the history), "I couldn't find …", a spoken failure.

Each turn runs as its own task so a deadline can end it cleanly whatever it is waiting on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any, AsyncGenerator, Awaitable, Callable, Coroutine, Sequence

from hub.agent.conversation import Conversation
from hub.agent.personas import Persona
from hub.agent.types import (ReplyChunk, ToolFinished, ToolStarted, TurnDone, TurnEvent, TurnRequest, TurnResult,
                             TurnTimings)
from hub.core.answer import DirectAnswer
from hub.core.speech import CONFIRMATION_REQUIRED
from hub.core.tools import ToolContext, ToolResult
from hub.core.messages import Message
from hub.llm.types import EngineBusy, EngineError, PromptTooLong
from hub.locales import phrase

_LOGGER = logging.getLogger(__name__)
_STOPPING = object()  # put in a running turn's events by RunningTurns.stop()

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
    direct: DirectAnswer | None = None  # what a route answered without the model (a plan shows its intent)

    @property
    def text(self) -> str:
        """The request's words, without surrounding blanks."""
        return self.request.text.strip()

    def speaking(self, language: str) -> TurnState:
        """The turn goes on in `language` (a later candidate's templates matched)."""
        self.language = language
        self.ctx = replace(self.ctx, language=language)
        self.conversation.language = language
        return self


def answered_directly(state: TurnState, text: str, outcome: DirectAnswer, path: str) -> TurnResult:
    """A turn answered without the model (fast path, or a confirmed/cancelled action)."""
    state.direct = outcome
    for call, result in zip(outcome.calls, outcome.results):
        state.emit(ToolStarted(call))
        finished = ToolFinished.of(call, result, 0.0)
        state.finished_calls.append(finished)
        state.emit(finished)
    state.emit(ReplyChunk(outcome.reply))
    # the model sees what happened, so a follow-up turn can refer to it
    state.conversation.messages += [Message("user", text), Message("assistant", outcome.reply)]
    state.timings.first_token_s = time.monotonic() - state.started
    error = failed_actions(outcome.results)
    return TurnResult(state.conversation.id, state.language, outcome.reply, ok=error is None,
                      error=error, tool_calls=state.finished_calls, timings=state.timings, path=path,
                      intent=outcome.intent)


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


def not_understood(state: TurnState, text: str, example_name: str | None) -> TurnResult:
    """ "I didn't understand that command; you can say, for example, …" with a command that works
    in this home (on `example_name`), or plainly "I couldn't work out how to do that"."""
    return answered_directly(state, text, not_understood_answer(state.language, example_name), "resolution")


def not_understood_answer(language: str, example_name: str | None) -> DirectAnswer:
    """`not_understood`'s words, in `language`."""
    if example_name is None:
        return DirectAnswer(phrase(language, "error.not_understood"), "not_understood")
    example = phrase(language, "command.example_turn_on", name=example_name)
    return DirectAnswer(phrase(language, "command.not_understood", example=example), "not_understood")


def failure(conversation_id: str, language: str, code: str) -> TurnResult:
    return TurnResult(conversation_id, language, phrase(language, f"error.{code}"), ok=False, error=code)


async def fitted(state: TurnState, turn: Callable[[], Awaitable[TurnResult]], history_tokens: int,
                 count_tokens: Callable[[str], int]) -> TurnResult:
    """Run the turn and trim the history it added to; if the history makes the prompt too long
    for the model, drop the oldest half of it and try again (only while nothing has been done yet)."""
    def message_tokens(message: Message) -> int:
        calls = " ".join(f"{c.name}{json.dumps(c.arguments)}" for c in message.tool_calls)
        return count_tokens(message.content + calls) + 4

    while True:
        try:
            result = await turn()
            state.conversation.trim(history_tokens, message_tokens)
            return result
        except PromptTooLong:
            turns = state.conversation.turns()
            if not turns or state.finished_calls:
                raise
            keep = turns[len(turns) // 2 + 1:] if len(turns) > 1 else []
            _LOGGER.info("history of %s too long for the context: dropping %d of %d turns",
                         state.conversation.id, len(turns) - len(keep), len(turns))
            state.conversation.messages = [m for turn in keep for m in turn]


async def ended(state: TurnState, answer: Callable[[], Awaitable[TurnResult]]) -> TurnResult:
    """The turn's result, or its spoken failure when the model or anything else failed (a
    cancelled turn stays cancelled), with its total time."""
    conversation_id = state.conversation.id
    try:
        result = await answer()
    except asyncio.CancelledError:
        raise
    except EngineError as err:
        code = ("busy" if isinstance(err, EngineBusy)
                else "too_long" if isinstance(err, PromptTooLong) else "model")
        _LOGGER.warning("model error in %s: %s", conversation_id, err)
        result = failure(conversation_id, state.language, code)
    except Exception:
        _LOGGER.exception("turn in %s failed", conversation_id)
        result = failure(conversation_id, state.language, "generic")
    result.timings.total_s = time.monotonic() - state.started
    return result


class RunningTurns:
    """The running turns, each a task whose events are read until its TurnDone or its deadline;
    `stop` ends every one of them with the spoken "stopping" reply."""

    def __init__(self) -> None:
        self._open: set[asyncio.Queue[Any]] = set()  # each running turn's events

    async def events(
        self, conversation_id: str, language: str, timeout: float,
        run: Callable[[Callable[[TurnEvent], None], float], Coroutine[Any, Any, None]],
    ) -> AsyncGenerator[TurnEvent, None]:
        """`run(emit, deadline)` as a task, and the events it emits; the last is always TurnDone
        (a timeout's or a stop's when the task's own does not come first)."""
        events: asyncio.Queue[Any] = asyncio.Queue()
        deadline = time.monotonic() + timeout
        task = asyncio.create_task(run(events.put_nowait, deadline))
        self._open.add(events)
        try:
            while True:
                try:
                    event = await asyncio.wait_for(events.get(), max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    _LOGGER.warning("turn in %s timed out after %ss", conversation_id, timeout)
                    event = TurnDone(failure(conversation_id, language, "timeout"))
                if event is _STOPPING:
                    _LOGGER.info("turn in %s cut short: the hub is stopping", conversation_id)
                    event = TurnDone(failure(conversation_id, language, "stopping"))
                yield event
                if isinstance(event, TurnDone):
                    return
        finally:
            self._open.discard(events)
            if not task.done():
                task.cancel()

    def stop(self) -> None:
        for events in self._open:
            events.put_nowait(_STOPPING)
