"""A scripted agent with the Agent API (`run`, `ask`, `report`, `clear_conversations`,
`add_observer`: its turns are observed like the Agent's, by `hub.agent.activity`).

It stands in for the lead's Agent in the MQTT API tests: it echoes the text, calls a tool when
asked to, can be held at a gate to test ordering and reconnects, and reads the runtime settings
per turn like the real agent, so a settings change shows in the next reply.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, AsyncIterator

from hub.agent.activity import AgentActivity, ConversationsCleared, Reported
from hub.agent.types import ReplyChunk, ToolFinished, ToolStarted, TurnDone, TurnRequest, TurnResult
from hub.core.messages import ToolCall


class FakeAgent:
    languages = ["en", "de"]

    def __init__(self, settings: Any = None, store: Any = None) -> None:
        self.settings = settings
        self.store = store
        self.requests: list[TurnRequest] = []
        self.gates: dict[str, asyncio.Event] = {}  # text → gate the turn waits at
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cleared = 0
        self.reports: list[tuple[str, str]] = []
        self.activity = AgentActivity()

    def gate(self, text: str) -> asyncio.Event:
        return self.gates.setdefault(text, asyncio.Event())

    def add_observer(self, observer: Any) -> Any:
        return self.activity.add_observer(observer)

    def run(self, request: TurnRequest) -> AsyncIterator[Any]:
        return self.activity.observe(request, self.turn(request))

    async def turn(self, request: TurnRequest) -> AsyncIterator[Any]:
        self.requests.append(request)
        self.started.append(request.text)
        if request.text in self.gates:
            await self.gates[request.text].wait()
        conversation_id = request.conversation_id or uuid.uuid4().hex
        calls: list[ToolFinished] = []
        if request.text.startswith("turn on ") and self.store is not None:
            entity_id = request.text.removeprefix("turn on ").strip()
            call = ToolCall("turn_on", {"entity_id": entity_id}, "call-1")
            yield ToolStarted(call)
            entity = self.store.get(entity_id)
            ok = entity is not None
            if ok:
                await self.store.backend_for(entity).call_service(entity, "turn_on", {})
            finished = ToolFinished(call, ok, {"entity_id": entity_id} if ok else {"error": "not found"}, 0.01)
            calls.append(finished)
            yield finished
        mode = "unknown" if self.settings is None else ("on" if self.settings.conversational_mode else "off")
        reply = f"You said: {request.text} (conversational {mode})"
        yield ReplyChunk(reply)
        self.finished.append(request.text)
        yield TurnDone(
            TurnResult(conversation_id=conversation_id, language=request.language or "en", reply=reply, tool_calls=calls)
        )

    async def ask(self, request: TurnRequest) -> TurnResult:
        result = None
        async for event in self.run(request):
            if isinstance(event, TurnDone):
                result = event.result
        assert result is not None
        return result

    async def report(self, conversation_id: str, text: str) -> None:
        self.reports.append((conversation_id, text))
        self.activity.notify(None, Reported(conversation_id, text))

    def clear_conversations(self) -> None:
        self.cleared += 1
        self.activity.notify(None, ConversationsCleared())
