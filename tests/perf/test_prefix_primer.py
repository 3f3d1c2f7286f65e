"""Priming: after the entity list changes, the stable prefix is evaluated before the next turn
needs it (real agent, demo home, Gemma 3 270M; checked by evaluated-token counts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hub.agent.prefix_primer import PrefixPrimer
from hub.agent.types import TurnRequest
from hub.home.entities import Entity
from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest, TextDelta

from perf.agent_rig import RecordingEngine, build_agent, demo_store, stable_request

pytestmark = pytest.mark.slow


async def wait_for(condition, timeout: float = 300) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_first_turn_after_the_entity_list_changed_finds_the_prefix_primed(gemma_path: Path) -> None:
    engine = RecordingEngine(LlamaEngine(gemma_path, n_ctx=4096, seed=7))
    store = demo_store()
    agent, view, registry = build_agent(engine, store)
    primer = PrefixPrimer(engine.engine, lambda: stable_request(view, registry), poll_s=0.05, settle_s=0.1)
    await primer.start()
    try:
        await wait_for(lambda: primer.primes == 1)
        await agent.ask(TurnRequest("turn on the kitchen light", conversation_id="a"))
        first = engine.take()[0]
        own = engine.count_tokens(first.request.messages[-1].content)
        # its own message, turn markers and the constrained-call opener: not a cold start
        assert first.usage.evaluated_prompt_tokens <= own + 16, first.usage

        store.upsert(Entity("light.pantry", "Pantry light", "off", area="Kitchen", source="demo"))
        await wait_for(lambda: primer.primes == 2)
        await agent.ask(TurnRequest("switch off the floor lamp", conversation_id="b"))
        second = engine.take()[0]
        assert "light.pantry" in second.request.messages[0].content  # the overview changed early on
        own = engine.count_tokens(second.request.messages[-1].content)
        assert second.usage.evaluated_prompt_tokens <= own + 16, second.usage
    finally:
        await primer.stop()
        await engine.close()


@pytest.mark.parametrize("priming", [True, False])
async def test_the_agent_primes_each_conversation_after_its_turn(gemma_path: Path, priming: bool) -> None:
    """Another conversation and a state change come in between two turns of a conversation; the
    agent primed its continuation (tool results and reply) after the first, so the second
    evaluates its new message and nothing else. Without priming (an engine with no `prime`),
    the same turn pays for its history too: the control that shows the priming at work."""
    engine = RecordingEngine(LlamaEngine(gemma_path, n_ctx=4096, seed=7), priming=priming)
    store = demo_store()
    agent, _, _ = build_agent(engine, store)
    try:
        await agent.ask(TurnRequest("turn on the kitchen light", conversation_id="a"))
        await agent.wait_primed()
        await agent.ask(TurnRequest("switch off the floor lamp", conversation_id="b"))
        await agent.wait_primed()
        store.update_state("light.living_room", "off", {})
        engine.take()
        await agent.ask(TurnRequest("and set the bedroom blinds to 30%", conversation_id="a"))
        again = engine.take()[0]
        own = engine.count_tokens(again.request.messages[-1].content)
        if priming:
            assert again.usage.evaluated_prompt_tokens <= own + 16, again.usage
            assert again.usage.prompt_tokens > 4 * own  # the rest (prefix and history) came from the cache
        else:
            assert again.usage.evaluated_prompt_tokens > own + 16, again.usage
    finally:
        await engine.close()


async def test_priming_gives_way_to_requests(gemma_path: Path) -> None:
    engine = LlamaEngine(gemma_path, n_ctx=4096, seed=7)
    long_system = Message("system", "House rules. " + " ".join(f"Lamp {i} is in room {i % 9}." for i in range(300)))
    try:
        running = engine.stream(GenerationRequest([Message("user", "Count to fifty.")], max_tokens=50))
        assert isinstance(await running.__anext__(), (TextDelta, Done))
        assert await engine.prime(GenerationRequest([long_system])) is False  # busy: skipped
        await running.aclose()
        await engine.wait_idle()
        priming = asyncio.create_task(engine.prime(GenerationRequest([long_system])))
        await asyncio.sleep(0.3)
        deltas = [d async for d in engine.stream(GenerationRequest([long_system, Message("user", "Hi")], max_tokens=2))]
        assert isinstance(deltas[-1], Done)  # the request interrupted priming and ran
        assert isinstance(await asyncio.wait_for(priming, 60), bool)
    finally:
        await engine.close()


async def test_priming_does_not_take_a_place_in_the_queue(gemma_path: Path) -> None:
    """queue_size 1: one request may wait behind a running one. Priming is not a running request:
    with priming under way, one request takes its place and one more may still wait."""
    engine = LlamaEngine(gemma_path, n_ctx=4096, seed=7, queue_size=1)
    long_system = Message("system", "House rules. " + " ".join(f"Lamp {i} is in room {i % 9}." for i in range(300)))
    try:
        priming = asyncio.create_task(engine.prime(GenerationRequest([long_system])))
        await asyncio.sleep(0.3)
        assert not priming.done()

        async def ask(text: str) -> list:
            return [d async for d in engine.stream(GenerationRequest([Message("user", text)], max_tokens=2))]

        first, second = await asyncio.gather(ask("Hi"), ask("Hello"))
        assert isinstance(first[-1], Done) and isinstance(second[-1], Done)
        await asyncio.wait_for(priming, 60)
    finally:
        await engine.close()
