"""The agent's observer list: who hears about every turn, whichever interface asked.

The hub's MQTT side reports the status (idle/thinking/speaking), replies and tool calls of all
turns — Wyoming, REST and MQTT alike — and the REST API counts them, so each adds an observer to
the one agent. Observing adds nothing to a turn but bookkeeping; an observer that raises is
logged and never disturbs the turn. This is also the one place that guarantees observers a
TurnDone for every TurnStarted, whatever happens to the turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import AsyncGenerator, Callable, Union

from hub.agent.types import ReplyChunk, ToolFinished, ToolStarted, TurnDone, TurnEvent, TurnRequest, TurnResult
from hub.core.tools import ToolContext, ToolResult
from hub.core.messages import ToolCall
from hub.locales import normalize_language, phrase

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Turn:
    """One running turn as observers see it."""

    turn_id: str
    request: TurnRequest
    started: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class TurnStarted:
    pass


@dataclass(frozen=True)
class Reported:
    """A later outcome appended to a conversation ("acknowledge, then report")."""

    conversation_id: str
    text: str


@dataclass(frozen=True)
class ConversationsCleared:
    pass


Activity = Union[TurnStarted, ReplyChunk, ToolStarted, ToolFinished, TurnDone, Reported, ConversationsCleared]
Observer = Callable[[Turn | None, Activity], None]


class AgentActivity:
    """The observers of one agent, and the turns running in it (for a shutdown drain)."""

    def __init__(self) -> None:
        self._observers: list[Observer] = []
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._last_active = 0.0  # time.monotonic() when a turn last ended

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Observe every later turn; call the result to stop."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    async def observe(self, request: TurnRequest, events: AsyncGenerator[TurnEvent, None]) -> AsyncGenerator[TurnEvent, None]:
        """`events`, one turn's stream, passed through and shown to the observers, which always
        see it end with TurnDone (a made-up failure when the consumer gave up or the turn broke)."""
        turn = Turn(uuid.uuid4().hex[:12], request)
        self.notify(turn, TurnStarted())
        done, error = False, "cancelled"
        self._running += 1
        self._idle.clear()
        try:
            async for event in events:
                if isinstance(event, TurnDone):
                    done = True
                self.notify(turn, event)
                yield event
        except Exception:
            error = "internal"
            raise
        finally:
            self._running -= 1
            self._last_active = time.monotonic()
            if not self._running:
                self._idle.set()
            if not done:  # the consumer gave up or the agent broke its promise: close the turn
                # the asker still hears a clear (if generic) apology, never an empty reply
                language = normalize_language(request.language)
                result = TurnResult(
                    conversation_id=request.conversation_id or "",
                    language=language,
                    reply=phrase(language, "error.generic"),
                    ok=False,
                    error=error,
                )
                result.timings.total_s = time.monotonic() - turn.started
                self.notify(turn, TurnDone(result))

    def tool_called(self, call: ToolCall, ctx: ToolContext, result: ToolResult, started: float) -> None:
        """A direct tool call (no model), observed as a one-call turn: ToolStarted, ToolFinished
        (no TurnStarted/TurnDone), so feeds like MQTT `tool_called` see every tool call."""
        turn = Turn(uuid.uuid4().hex[:12], TurnRequest(
            text="", conversation_id=ctx.conversation_id, language=ctx.language, source=ctx.source,
            persona=ctx.persona), started)
        self.notify(turn, ToolStarted(call))
        self.notify(turn, ToolFinished.of(call, result, time.monotonic() - started))

    def last_active(self) -> float:
        """When a turn last ran (time.monotonic()): now while one runs, 0 before the first."""
        return time.monotonic() if self._running else self._last_active

    async def wait_idle(self, timeout: float) -> bool:
        """Wait at most `timeout` s until no turn runs (a shutdown drain); True when idle."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def notify(self, turn: Turn | None, activity: Activity) -> None:
        for observer in list(self._observers):
            try:
                observer(turn, activity)
            except Exception:
                _LOGGER.exception("agent observer failed")

