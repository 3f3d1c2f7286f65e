"""The benches' shortcuts leave what they measure as it was (real agent, demo home, Gemma 3 270M;
checked by token counts): a turn cut at its first token has the prompt and the evaluated tokens
of the whole turn, and a primed prefix put back by `restore_only` is what a turn right after
priming finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.agent.types import TurnRequest
from hub.llm.llama_engine import LlamaEngine

from perf.agent_rig import (
    RecordingEngine, build_agent, demo_store, make_cold, restore_only, saved_state, stable_request,
)

pytestmark = pytest.mark.slow

COMMAND = "turn on the kitchen light"


async def test_a_turn_cut_at_its_first_token_evaluates_what_the_whole_turn_does(gemma_path: Path) -> None:
    engine = RecordingEngine(LlamaEngine(gemma_path, n_ctx=4096, seed=7), priming=False)
    try:
        usages = []
        for first_token_only in (False, True):
            agent, _, _ = build_agent(engine, demo_store())  # the whole turn switched the light on
            await make_cold(engine)
            engine.first_token_only = first_token_only
            await agent.ask(TurnRequest(COMMAND, conversation_id=f"cut-{first_token_only}"))
            usages.append(engine.take()[0].usage)
        whole, cut = usages
        assert cut.completion_tokens == 1 < whole.completion_tokens
        assert cut.prompt_tokens == whole.prompt_tokens
        assert cut.evaluated_prompt_tokens == whole.evaluated_prompt_tokens == whole.prompt_tokens
    finally:
        await engine.close()


async def test_a_restored_primed_prefix_is_what_a_turn_right_after_priming_finds(gemma_path: Path) -> None:
    engine = RecordingEngine(LlamaEngine(gemma_path, n_ctx=4096, seed=7), priming=False, first_token_only=True)
    agent, view, registry = build_agent(engine, demo_store())
    request = stable_request(view, registry)
    prefix = engine.engine.prompt_tokens(request, add_generation_prompt=False)
    try:
        assert await engine.engine.prime(request)
        state = saved_state(engine, prefix)
        await agent.ask(TurnRequest(COMMAND, conversation_id="primed"))
        primed = engine.take()[0].usage
        assert primed.evaluated_prompt_tokens < primed.prompt_tokens - len(prefix) + 16, primed

        await restore_only(engine, state)
        assert engine.engine.prompt_cache_stats["states"] == 1
        await agent.ask(TurnRequest(COMMAND, conversation_id="restored"))
        restored = engine.take()[0].usage
        assert restored.evaluated_prompt_tokens == primed.evaluated_prompt_tokens, (restored, primed)

        # the control: without it, the same prompt finds the previous turn's state
        await agent.ask(TurnRequest(COMMAND, conversation_id="again"))
        assert engine.take()[0].usage.evaluated_prompt_tokens < primed.evaluated_prompt_tokens
    finally:
        await engine.close()
