"""Through the real agent, demo home and Gemma 3 270M: another conversation and a state change
between two turns of a conversation cost it only its new tokens, never the stable prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.agent.types import TurnRequest
from hub.llm.llama_engine import LlamaEngine

from perf.agent_rig import RecordingEngine, build_agent, demo_store

pytestmark = pytest.mark.slow


@pytest.fixture
async def engine(gemma_path: Path) -> RecordingEngine:
    recording = RecordingEngine(LlamaEngine(gemma_path, n_ctx=4096, seed=7))
    yield recording
    await recording.close()


async def test_state_change_and_other_conversation_cost_only_the_new_message(engine: RecordingEngine) -> None:
    store = demo_store()
    agent, _, _ = build_agent(engine, store)
    await agent.ask(TurnRequest("turn on the kitchen light", conversation_id="kitchen"))
    first = engine.take()[0]
    # instructions, overview and tool declarations: all of the prompt but the user message
    stable_tokens = first.usage.prompt_tokens - engine.count_tokens(first.request.messages[-1].content)
    assert first.usage.evaluated_prompt_tokens == first.usage.prompt_tokens  # cold start

    await agent.ask(TurnRequest("switch off the floor lamp", conversation_id="living"))
    other = engine.take()[0]
    own_message = engine.count_tokens(other.request.messages[-1].content)
    # a new conversation pays for its own message (and turn markers), not for the stable prefix
    assert other.usage.evaluated_prompt_tokens <= own_message + 8, other.usage

    version = store.version
    store.update_state("light.living_room", "off", {})
    store.update_state("cover.bedroom_blinds", "open", {"current_position": 60})
    assert store.version == version  # states only: the entity list is unchanged
    await agent.ask(TurnRequest("and set the bedroom blinds to 30%", conversation_id="kitchen"))
    again = engine.take()[0]
    added = again.usage.prompt_tokens - first.usage.prompt_tokens  # history since its last turn + new message
    assert "position 60%" in again.request.messages[-1].content  # the new state reached the prompt
    assert again.usage.evaluated_prompt_tokens <= added, (first.usage, again.usage)
    assert again.usage.evaluated_prompt_tokens < stable_tokens / 4
