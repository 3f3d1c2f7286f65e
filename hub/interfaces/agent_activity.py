"""An Agent wrapper that tells observers about every turn, whichever interface asked.

The hub's MQTT side reports the status (idle/thinking/speaking), replies and tool calls of all
turns — Wyoming, REST and MQTT alike — so the composition root wraps the one Agent once and
hands the wrapper to every interface. The wrapper has the Agent's API and adds nothing to a
turn but bookkeeping; an observer that raises is logged and never disturbs the turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, Callable, Union

from hub.agent.types import ReplyChunk, ToolFinished, ToolStarted, TurnDone, TurnEvent, TurnRequest, TurnResult
from hub.home.tool_base import ToolContext, ToolResult
from hub.llm.types import ToolCall
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


class ObservedAgent:
    """Same API as Agent (`languages`, `run`, `ask`, `report`, `clear_conversations`,
    `call_tool`; any other attribute is the wrapped agent's), so every interface can be given
    the wrapper."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self._observers: list[Observer] = []
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def languages(self) -> list[str]:
        return self.agent.languages

    def __getattr__(self, name: str) -> Any:
        # anything else the interfaces use (conversations, ...) is the wrapped agent's
        if name == "agent":
            raise AttributeError(name)
        return getattr(self.agent, name)

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    async def run(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
        turn = Turn(uuid.uuid4().hex[:12], request)
        self._notify(turn, TurnStarted())
        done, error = False, "cancelled"
        self._running += 1
        self._idle.clear()
        try:
            async for event in self.agent.run(request):
                if isinstance(event, TurnDone):
                    done = True
                self._notify(turn, event)
                yield event
        except Exception:
            error = "internal"
            raise
        finally:
            self._running -= 1
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
                self._notify(turn, TurnDone(result))

    async def wait_idle(self, timeout: float) -> bool:
        """Wait at most `timeout` s until no turn runs (a shutdown drain); True when idle."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def ask(self, request: TurnRequest) -> TurnResult:
        result: TurnResult | None = None
        async for event in self.run(request):
            if isinstance(event, TurnDone):
                result = event.result
        if result is None:
            raise RuntimeError("the agent ended a turn without TurnDone")
        return result

    async def report(self, conversation_id: str, text: str) -> None:
        await self.agent.report(conversation_id, text)
        self._notify(None, Reported(conversation_id, text))

    def clear_conversations(self) -> None:
        self.agent.clear_conversations()
        self._notify(None, ConversationsCleared())

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """A direct tool call (no model), observed as a one-call turn: ToolStarted, ToolFinished
        (no TurnStarted/TurnDone), so feeds like MQTT `tool_called` see every tool call."""
        started = time.monotonic()
        result = await self.agent.call_tool(name, arguments, ctx)  # UnknownPersona: nothing ran
        turn = Turn(uuid.uuid4().hex[:12], TurnRequest(
            text="", conversation_id=ctx.conversation_id, language=ctx.language, source=ctx.source,
            persona=ctx.persona), started)
        call = ToolCall(name, arguments)
        self._notify(turn, ToolStarted(call))
        self._notify(turn, ToolFinished(call, result.ok, result.data, time.monotonic() - started))
        return result

    def _notify(self, turn: Turn | None, activity: Activity) -> None:
        for observer in list(self._observers):
            try:
                observer(turn, activity)
            except Exception:
                _LOGGER.exception("agent observer failed")


def observed(agent: Any) -> ObservedAgent:
    """The agent itself when it is already observed, else a wrapper around it."""
    return agent if isinstance(agent, ObservedAgent) else ObservedAgent(agent)
