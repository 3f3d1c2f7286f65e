"""A voice turn's prompt up to the user's words is evaluated while its audio is transcribed
(`Agent.prepare`), so the turn evaluates only its words (real agent, demo home, the SmolLM2
stand-in; checked by evaluated-token counts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.agent.prompt import user_message_head
from hub.agent.types import TurnRequest
from hub.llm.llama_engine import LlamaEngine

from perf.agent_rig import RecordingEngine, build_agent, demo_store

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("prepared", [True, False])
async def test_a_prepared_turn_evaluates_only_its_words(smollm_path: Path, prepared: bool) -> None:
    """A minute after the conversation's first turn the clock line is new. Prepared (what the
    voice pipeline does when the audio starts), the priming evaluates that line and no word of
    the user, and the turn evaluates its words alone; unprepared, the control, the turn pays for
    the clock line too."""
    clock = ["Monday 2026-11-30 08:00"]
    engine = RecordingEngine(LlamaEngine(smollm_path, n_ctx=4096, seed=7))
    agent, _, _ = build_agent(engine, demo_store(), clock_text=lambda: clock[0])
    words = "Tell me a short story about a lighthouse keeper."
    try:
        first = await agent.ask(TurnRequest("Tell me a short story about a cat.", conversation_id="a", language="en"))
        assert first.path == "model", first  # the conversation's prompt is in the cache
        await agent.wait_primed()
        engine.take()
        clock[0] = "Monday 2026-11-30 08:01"
        head_text = user_message_head("en", clock[0])
        head = engine.count_tokens(head_text)
        evaluated_before = engine.engine._eval_count
        if prepared:
            agent.prepare(TurnRequest("", conversation_id="a", language="en"))
            await agent.wait_primed()
            primed = engine.engine._eval_count - evaluated_before
            assert head <= primed <= head + 8  # the clock line and turn markers: not one word
        turn = await agent.ask(TurnRequest(words, conversation_id="a", language="en"))
        assert turn.ok and turn.path == "model"
        generation = engine.take()[0]
        content, usage = generation.request.messages[-1].content, generation.usage
        assert content.startswith(head_text) and content.endswith(words)
        own = engine.count_tokens(content[len(head_text):])  # the words (and any live states)
        if prepared:
            assert usage.evaluated_prompt_tokens <= own + 8, usage
        else:
            assert usage.evaluated_prompt_tokens >= own + head, usage
    finally:
        await engine.close()
