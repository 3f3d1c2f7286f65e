"""The prompt cache keeps each conversation's KV state across other conversations' turns.

Checked by evaluated-token counts (never by time) with the real Gemma 3 270M model.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from hub.llm.kv_cache import common_prefix
from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest, TextDelta, Usage

pytestmark = pytest.mark.slow

SYSTEM = Message("system", "You control a home. " + " ".join(
    f"Lamp {i} is in the {room}." for i, room in enumerate(["kitchen", "hall", "attic", "cellar", "garage"] * 8)))


def opening(tag: str, topic: str) -> list[Message]:
    """A first turn with a long user message of its own (what a lost cache would re-evaluate)."""
    return [SYSTEM, Message("user", f"Conversation {tag}: " + f"tell me about the {topic} and what it does. " * 6)]


def follow_up(messages: list[Message], reply: str, question: str) -> list[Message]:
    return messages + [Message("assistant", reply), Message("user", question)]


async def usage_of(engine: LlamaEngine, messages: list[Message]) -> Usage:
    done = None
    async for delta in engine.stream(GenerationRequest(messages, max_tokens=3, temperature=0.0)):
        if isinstance(delta, Done):
            done = delta
    assert done is not None
    return done.usage


async def test_interleaved_conversations_each_evaluate_only_their_new_tokens(gemma_path: Path) -> None:
    engine = LlamaEngine(gemma_path, n_ctx=2048, seed=7)
    try:
        a, b = opening("A", "kitchen lamps"), opening("B", "cellar heating")
        a1 = await usage_of(engine, a)
        b1 = await usage_of(engine, b)
        assert a1.evaluated_prompt_tokens == a1.prompt_tokens  # cold
        assert b1.evaluated_prompt_tokens < b1.prompt_tokens / 2  # shares the system part with A
        for turn in range(2):
            a = follow_up(a, "Sure.", f"And lamp {turn}?")
            a2 = await usage_of(engine, a)
            b = follow_up(b, "Fine.", f"And the garage {turn}?")
            b2 = await usage_of(engine, b)
            # only what was added since the conversation's last turn: B's turn did not evict A
            assert 0 < a2.evaluated_prompt_tokens <= a2.prompt_tokens - a1.prompt_tokens, (a1, a2)
            assert 0 < b2.evaluated_prompt_tokens <= b2.prompt_tokens - b1.prompt_tokens, (b1, b2)
            a1, b1 = a2, b2
        assert engine._prompt_cache.restores >= 4
    finally:
        await engine.close()


async def test_without_the_cache_the_other_conversation_evicts_the_history(gemma_path: Path) -> None:
    """The control: the same interleaving with the cache off re-evaluates A's whole first turn."""
    engine = LlamaEngine(gemma_path, n_ctx=2048, seed=7, prompt_cache_mib=0)
    try:
        a = opening("A", "kitchen lamps")
        a1 = await usage_of(engine, a)
        await usage_of(engine, opening("B", "cellar heating"))
        a2 = await usage_of(engine, follow_up(a, "Sure.", "And lamp 0?"))
        own_first_turn = engine.count_tokens(a[1].content)
        assert a2.evaluated_prompt_tokens >= a2.prompt_tokens - a1.prompt_tokens + own_first_turn
    finally:
        await engine.close()


async def test_memory_cap_evicts_the_least_recently_used_state(gemma_path: Path) -> None:
    engine = LlamaEngine(gemma_path, n_ctx=2048, seed=7)
    try:
        a, b, c = opening("A", "kitchen lamps"), opening("B", "cellar heating"), opening("C", "garden pump")
        await usage_of(engine, a)
        await engine.wait_idle()
        state_bytes = engine._prompt_cache.total_bytes
        engine._prompt_cache.max_bytes = int(state_bytes * 2.5)  # room for two conversations
        b1 = await usage_of(engine, b)
        c1 = await usage_of(engine, c)  # saving C evicts A, the least recently used
        await engine.wait_idle()
        assert len(engine._prompt_cache.states) == 2
        assert engine._prompt_cache.total_bytes <= engine._prompt_cache.max_bytes
        c2 = await usage_of(engine, follow_up(c, "Sure.", "And then?"))
        b2 = await usage_of(engine, follow_up(b, "Sure.", "And then?"))
        assert c2.evaluated_prompt_tokens <= c2.prompt_tokens - c1.prompt_tokens
        assert b2.evaluated_prompt_tokens <= b2.prompt_tokens - b1.prompt_tokens
        a2 = await usage_of(engine, follow_up(a, "Sure.", "And then?"))
        assert a2.evaluated_prompt_tokens >= engine.count_tokens(a[1].content)  # A's turn was evicted
    finally:
        await engine.close()


async def test_a_corrupt_saved_state_is_dropped_and_the_turn_still_runs(
    gemma_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = LlamaEngine(gemma_path, n_ctx=2048, seed=7)
    try:
        a, b = opening("A", "kitchen lamps"), opening("B", "cellar heating")
        await usage_of(engine, a)
        await usage_of(engine, b)
        await engine.wait_idle()
        a_prompt = np.asarray(engine.prompt_tokens(GenerationRequest(a)))
        saved_a = next(s for s in engine._prompt_cache.states if common_prefix(s.tokens, a_prompt) == len(a_prompt))
        saved_a.data = saved_a.data[: saved_a.data.size // 2]
        caplog.set_level(logging.WARNING, logger="hub.llm.kv_cache")
        messages = follow_up(a, "Sure.", "And then?")
        deltas = [d async for d in engine.stream(GenerationRequest(messages, max_tokens=3, temperature=0.0))]
        assert isinstance(deltas[-1], Done) and deltas[-1].usage.completion_tokens >= 1
        usage = deltas[-1].usage
        assert "could not restore" in caplog.text
        assert usage.evaluated_prompt_tokens >= engine.count_tokens(a[1].content)  # from scratch, correctly
        await engine.wait_idle()
        assert all(s is not saved_a for s in engine._prompt_cache.states)
    finally:
        await engine.close()
