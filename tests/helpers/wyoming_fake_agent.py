"""A scripted agent with the real Agent's `run()` shape, to drive the Wyoming server in tests."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import AsyncIterator

from hub.agent.types import ReplyChunk, TurnDone, TurnEvent, TurnRequest, TurnResult


@dataclass
class ScriptedAgent:
    """Replies "You said: <text>" in two chunks.

    Special texts: "wait" blocks after the first chunk until `gate` is set; "hang" never finishes;
    "fail" ends with ok=False. `requests`, `finished` and `closed` record what happened.
    """

    languages: list[str] = field(default_factory=lambda: ["en", "de"])
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    requests: list[TurnRequest] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)  # texts whose turn reached TurnDone
    closed: list[str] = field(default_factory=list)  # texts whose generator was closed early

    async def run(self, request: TurnRequest) -> AsyncIterator[TurnEvent]:
        self.requests.append(request)
        self.started.set()
        reply = f"You said: {request.text}"
        done = False
        try:
            yield ReplyChunk("You said: ")
            if request.text == "wait":
                await self.gate.wait()
            elif request.text == "hang":
                await asyncio.Event().wait()
            yield ReplyChunk(request.text)
            ok = request.text != "fail"
            result = TurnResult(
                conversation_id=request.conversation_id or "new-conversation",
                language=request.language or "en",
                reply=reply if ok else "Scripted failure.",
                ok=ok,
                error=None if ok else "model",
            )
            done = True
            self.finished.append(request.text)
            yield TurnDone(result)
        finally:
            if not done:
                self.closed.append(request.text)
