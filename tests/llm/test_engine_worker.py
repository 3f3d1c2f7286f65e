"""Every use of the llama context runs in the engine's one worker, whoever calls (issue 17.13).

llama.cpp aborts the process (`GGML_ASSERT`) when two threads use one context at once: a bench
once called the model from its main thread while the agent's background priming ran.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest

pytestmark = pytest.mark.slow


async def test_a_bench_like_call_from_another_thread_waits_for_the_background_prime(smollm_path: Path) -> None:
    engine = LlamaEngine(smollm_path, n_ctx=1024, seed=1, threads=1)
    calls: list[tuple[str, float, float]] = []
    busy = threading.Lock()
    overlapped = []
    original = engine._original_eval

    def recording_eval(tokens):  # type: ignore[no-untyped-def]
        if not busy.acquire(blocking=False):
            overlapped.append(threading.current_thread().name)
            busy.acquire()
        started = time.monotonic()
        try:
            return original(tokens)
        finally:
            calls.append((threading.current_thread().name, started, time.monotonic()))
            busy.release()

    engine._original_eval = recording_eval
    long_prefix = GenerationRequest([Message("system", "You keep a lighthouse. " * 60)])

    def bench_main_thread() -> tuple[int, int]:
        """What bench_cache's speculative step does: raw model access, on its own event loop."""
        def raw(llm):  # type: ignore[no-untyped-def]
            tokens = llm.tokenize(b"The storm came in from the sea.", add_bos=False)
            llm.reset()
            llm.eval(tokens)
            return len(tokens)

        count = engine.count_tokens("The storm came in from the sea.")  # vocabulary only: any thread
        return asyncio.run(engine.exclusive(raw)), count

    try:
        prime = asyncio.create_task(engine.prime(long_prefix))
        await asyncio.sleep(0.05)  # the prime is running in the worker
        bench = asyncio.create_task(asyncio.to_thread(bench_main_thread))
        request = GenerationRequest([Message("user", "Say hi.")], max_tokens=2, temperature=0.0)
        deltas = [d async for d in engine.stream(request)]
        evaluated, counted = await asyncio.wait_for(bench, 120)
        await prime
        assert isinstance(deltas[-1], Done) and evaluated == counted > 0
        assert {name for name, _, _ in calls} and all(name.startswith("llama") for name, _, _ in calls), calls
        assert not overlapped
        ordered = sorted(calls, key=lambda c: c[1])
        assert all(a[2] <= b[1] for a, b in zip(ordered, ordered[1:]))
    finally:
        await engine.close()


async def test_exclusive_after_close_is_refused(smollm_path: Path) -> None:
    engine = LlamaEngine(smollm_path, n_ctx=256, threads=1)
    await engine.close()
    with pytest.raises(Exception, match="closed"):
        await engine.exclusive(lambda llm: llm.n_tokens)
