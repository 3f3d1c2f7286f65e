"""A voice turn's decode gate holds the local model between tokens (real SmolLM2 stand-in)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from hub.llm import generation
from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest, TextDelta

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def engine(smollm_path: Path) -> LlamaEngine:
    return LlamaEngine(smollm_path, n_ctx=1024, seed=1, threads=1)


def request(gate: threading.Event | None) -> GenerationRequest:
    return GenerationRequest([Message("user", "Count from one to twenty.")], max_tokens=12,
                             temperature=0.0, decode_gate=gate)


async def test_no_token_comes_while_the_gate_is_cleared(engine: LlamaEngine) -> None:
    gate = threading.Event()
    opened_at = 0.0

    async def open_later() -> None:
        nonlocal opened_at
        await asyncio.sleep(0.6)
        opened_at = time.monotonic()
        gate.set()

    opener = asyncio.create_task(open_later())
    arrivals = [(time.monotonic(), d) async for d in engine.stream(request(gate))]
    await opener
    texts = [t for t, d in arrivals if isinstance(d, TextDelta)]
    assert texts and min(texts) >= opened_at
    done = arrivals[-1][1]
    assert isinstance(done, Done) and done.usage.completion_tokens > 1


async def test_the_same_words_come_with_or_without_a_gate(engine: LlamaEngine) -> None:
    free = "".join([d.text async for d in engine.stream(request(None)) if isinstance(d, TextDelta)])
    gate = threading.Event()
    asyncio.get_running_loop().call_later(0.2, gate.set)
    gated = "".join([d.text async for d in engine.stream(request(gate)) if isinstance(d, TextDelta)])
    assert gated == free


async def test_a_gate_never_opened_holds_a_generation_only_so_long(engine: LlamaEngine,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generation, "GATE_WAIT_MAX_S", 0.3)
    started = time.monotonic()
    deltas = [d async for d in engine.stream(request(threading.Event()))]
    assert isinstance(deltas[-1], Done) and deltas[-1].usage.completion_tokens > 1
    free_started = time.monotonic()
    [d async for d in engine.stream(request(None))]
    # held 0.3 s once over the whole generation, not once per token (12 tokens: 3.6 s)
    assert (free_started - started) - (time.monotonic() - free_started) < 2.0
