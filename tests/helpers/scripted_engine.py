"""A scripted engine for unit tests of the agent loop's logic (never the only test of a feature)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import AsyncIterator, Callable, Sequence

from hub.core.messages import ToolCall
from hub.llm.types import (
    Delta,
    Done,
    EngineError,
    GenerationRequest,
    ModelInfo,
    TextDelta,
    ToolCallDelta,
    Usage,
)

Round = Sequence[Delta] | Callable[[GenerationRequest], Sequence[Delta]]


def text(*parts: str) -> list[Delta]:
    return [TextDelta(p) for p in parts]


def call(name: str, **arguments) -> ToolCallDelta:
    return ToolCallDelta(ToolCall(name, arguments))


class ScriptedEngine:
    """Plays one scripted round per `stream()` call and records every request."""

    def __init__(self, rounds: Sequence[Round], *, constrained: bool = False, delay: float = 0.0,
                 fail_with: EngineError | None = None) -> None:
        self.info = ModelInfo("scripted", "scripted", "", 4096, 4096, 10_000_000_000)
        self.uses_constrained_tools = constrained
        self._rounds = list(rounds)
        self._delay = delay
        self._fail_with = fail_with
        self.requests: list[GenerationRequest] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        self.requests.append(request)
        if self._fail_with is not None:
            raise self._fail_with
        if not self._rounds:
            raise AssertionError("the agent asked the model more often than scripted")
        scripted = self._rounds.pop(0)
        deltas = scripted(request) if callable(scripted) else scripted
        sent = 0
        for delta in deltas:
            if request.halt.is_set():
                break
            if self._delay:
                await asyncio.sleep(self._delay)
            sent += 1
            yield delta
        yield Done(Usage(prompt_tokens=10, evaluated_prompt_tokens=10, completion_tokens=sent,
                         stop_reason="halted" if request.halt.is_set() else "stop"))

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def memory(self) -> dict[str, int]:
        return {}  # no model in this process

    async def close(self) -> None:
        pass


# What looping small models were seen writing (issue 16): a phrase, and one sentence over and over.
LOOPS = {"phrase": "Le Grand Garou, le Grand Garou, ", "sentence": "I'm not sure how to use a sword. "}


class LoopingEngine:
    """A model that never stops repeating itself; counts how much of it the hub read."""

    def __init__(self) -> None:
        self.info = ModelInfo("looping", "llama", "", 4096, 4096, 10_000_000_000)
        self.uses_constrained_tools = False
        self.loop = LOOPS["phrase"]
        self.read: list[int] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        count = 0
        self.read.append(0)
        try:
            while count < 2000 and not request.halt.is_set():
                count += 1
                self.read[-1] = count
                yield TextDelta(self.loop)
                await asyncio.sleep(0)
            yield Done(Usage(completion_tokens=count, stop_reason="halted" if request.halt.is_set() else "length"))
        finally:
            self.read[-1] = count

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    async def close(self) -> None:
        pass


STAND_IN_PARAMS = 135_000_000


def stand_in(rounds: Sequence[Round] = (), delay: float = 0.0) -> ScriptedEngine:
    """A scripted model sized like SmolLM2 (a stand-in to the hub): it fails the test if asked
    more than `rounds`."""
    engine = ScriptedEngine(list(rounds), delay=delay)
    engine.info = dataclasses.replace(engine.info, n_params=STAND_IN_PARAMS)
    return engine
