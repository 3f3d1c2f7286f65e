"""Fault: the model fails mid-generation. The turn ends with the localized model error, the
conversation keeps no half turn, and the engine (and the conversation) work on afterwards.

The real case: SmolLM2 through the real LlamaEngine, with llama.cpp's detokenizer made to fail
after a few tokens inside the worker thread (as a llama.cpp RuntimeError would). The scripted case
pins the agent's side: sentences already streamed, then EngineError.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest

from hub.agent.agent import Agent
from hub.agent.types import ReplyChunk, TurnDone, TurnRequest, TurnResult
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolRegistry
from hub.llm.llama_engine import LlamaEngine
from hub.llm.types import Delta, EngineError, GenerationRequest, TextDelta
from hub.locales import phrase
from hub.settings import RuntimeSettings

from helpers.scripted_engine import ScriptedEngine, text
from perf.agent_rig import RecordingEngine

FAIL_AFTER_TOKENS = 4


@pytest.fixture(scope="module")
def smollm(smollm_path: Path) -> Iterator[LlamaEngine]:
    engine = LlamaEngine(smollm_path, n_ctx=4096, seed=7)
    yield engine
    asyncio.run(engine.close())


class FailingDetokenizer:
    """Stands in for `Llama.detokenize`: the real one for `after` tokens, then a llama.cpp-like error."""

    def __init__(self, engine: LlamaEngine, after: int) -> None:
        self._engine = engine
        self._real = engine._llm.detokenize
        self.after = after
        self.calls = 0
        self.failed = False

    def __enter__(self) -> "FailingDetokenizer":
        self._engine._llm.detokenize = self  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self._engine._llm.detokenize  # the class's method again

    def __call__(self, tokens, prev_tokens=None, special=False) -> bytes:
        self.calls += 1
        if self.calls > self.after:
            self.failed = True
            raise RuntimeError("llama_decode returned -3")
        return self._real(tokens, prev_tokens, special=special)


def make_agent(engine, **options) -> Agent:
    config = validate({"fast_path": False, "max_tokens": 24, "temperature": 0.0, "turn_timeout": 240,
                       **options})
    return Agent(engine=engine, registry=ToolRegistry(), settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent,
                 clock_text=lambda: "Monday 2026-11-30 08:00")


async def run_turn(agent: Agent, request: TurnRequest) -> tuple[list[str], TurnResult]:
    chunks: list[str] = []
    async for event in agent.run(request):
        if isinstance(event, ReplyChunk):
            chunks.append(event.text)
        elif isinstance(event, TurnDone):
            return chunks, event.result
    raise AssertionError("no TurnDone")


def history_text(request: GenerationRequest) -> str:
    return "\n".join(m.content for m in request.messages)


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_real_engine_failing_mid_generation(smollm: LlamaEngine) -> None:
    engine = RecordingEngine(smollm)
    agent = make_agent(engine)
    first = await run_turn(agent, TurnRequest("My name is Ada. Say hello.", conversation_id="m", language="en"))
    assert first[1].ok, first[1]
    before = list(agent.conversations.get_or_create("m", "en").messages)

    with FailingDetokenizer(smollm, after=FAIL_AFTER_TOKENS) as fault:
        _, failed = await run_turn(agent, TurnRequest("Tell me a story about volcanoes.", conversation_id="m",
                                                      language="en"))
    assert fault.failed and fault.calls > FAIL_AFTER_TOKENS, "the fault came after some tokens, mid-stream"
    assert (failed.ok, failed.error, failed.language) == (False, "model", "en")
    assert failed.reply == phrase("en", "error.model")
    assert agent.conversations.get_or_create("m", "en").messages == before, "no half turn in the history"

    engine.take()
    _, after = await run_turn(agent, TurnRequest("Tell me a story about my name.", conversation_id="m", language="en"))
    assert after.ok and after.reply, after
    [generation] = engine.take()
    history = history_text(generation.request)
    assert "My name is Ada" in history and "volcanoes" not in history
    assert generation.usage.completion_tokens > 0, "the engine generates again after the failure"


class FailingEngine(ScriptedEngine):
    """Streams its scripted deltas, then raises instead of Done on the rounds listed in `fail_on`."""

    def __init__(self, rounds, fail_on: set[int], error: Exception) -> None:
        super().__init__(rounds)
        self._fail_on = fail_on
        self._error = error

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        number = len(self.requests)
        async for delta in super().stream(request):
            if number in self._fail_on and not isinstance(delta, TextDelta):
                raise self._error
            yield delta


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("error", "code"), [(EngineError("the model failed while generating"), "model"),
                                             (RuntimeError("connection reset by the model server"), "generic")])
async def test_scripted_engine_raising_after_sentences(error: Exception, code: str) -> None:
    def third(request: GenerationRequest):
        assert "Nice to meet you." in history_text(request)
        assert "half a story" not in history_text(request), "the failed turn left nothing behind"
        return text("Yes, Ada.")

    engine = FailingEngine([text("Nice to meet you."), text("Once upon a time. There was ", "half a story"),
                            third], fail_on={1}, error=error)
    agent = make_agent(engine)
    assert (await run_turn(agent, TurnRequest("I am Ada.", conversation_id="s")))[1].ok
    chunks, failed = await run_turn(agent, TurnRequest("Raccontami una storia", conversation_id="s", language="it"))
    assert chunks == ["Once upon a time."], "what was spoken before the failure stays spoken"
    assert (failed.ok, failed.error) == (False, code)
    assert failed.reply == phrase("it", f"error.{code}")
    _, again = await run_turn(agent, TurnRequest("Remember me?", conversation_id="s"))
    assert again.ok and again.reply == "Yes, Ada."
