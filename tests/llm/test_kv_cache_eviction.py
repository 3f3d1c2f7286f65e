"""The prompt cache's memory cap holds whatever order its states were used in (issue 17.4).

`_evict` once removed the least recently used state with `list.remove`, whose equality compared
the states' numpy arrays and raised whenever that state was not the first: the cap never
applied and memory grew by a state a turn.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from hub.llm.kv_cache import PrefixStateCache
from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest


def test_eviction_removes_the_least_recently_used_state_wherever_it_sits() -> None:
    cache = PrefixStateCache(None, max_bytes=3 * 1100)  # type: ignore[arg-type]  # add/evict only
    first, second, third = (cache.add(np.arange(start, start + 25), np.zeros(1000, np.uint8))
                            for start in (0, 100, 200))
    assert first is not None and second is not None and third is not None
    first.last_used = 10**6  # used again: the oldest is now the second, not at the front
    cache.add(np.arange(300, 325), np.zeros(1000, np.uint8))
    assert [s for s in cache.states] == [first, third, cache.states[-1]]
    assert cache.total_bytes <= cache.max_bytes


def rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.slow
async def test_rss_stays_flat_over_120_model_turns_with_a_small_cache_cap(smollm_path: Path) -> None:
    """A state is ~2 MB here (~90 prompt tokens): a cap that never applied grew RSS by ~180 MB over
    the 90 turns after the first measure, far over the 10 % allowed; 300 turns proved no more."""
    engine = LlamaEngine(smollm_path, n_ctx=512, seed=3, prompt_cache_mib=8, threads=1)  # room for 3
    system = Message("system", "You are a terse home assistant. " * 8)
    again = [system, Message("user", "Is the front door locked? Answer yes or no.")]

    async def turn(messages: list[Message]) -> None:
        async for delta in engine.stream(GenerationRequest(messages, max_tokens=1, temperature=0.0)):
            if isinstance(delta, Done):
                assert delta.usage.completion_tokens >= 1

    try:
        after_30 = 0.0
        for number in range(120):
            if number % 3 == 0:  # the same question again: its state is used again, not replaced
                await turn(again)
            else:
                await turn([system, Message("user", f"Request {number}: " + f"tell me about room {number}. " * 4)])
            if number == 29:
                await engine.wait_idle()
                after_30 = rss_mib()
        await engine.wait_idle()
        assert engine.prompt_cache_stats["bytes"] <= 8 * 2**20
        assert rss_mib() <= after_30 * 1.10, (after_30, rss_mib())
    finally:
        await engine.close()
