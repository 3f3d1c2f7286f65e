"""Each persona keeps its own warm prefix: with Gemma 3 270M, a home conversation and a persona
conversation taking turns each re-evaluate only their new tokens (evaluated-token counts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hub.agent.personas import Persona, PersonaBook, home_persona
from hub.agent.prompt import ASSISTANT_INSTRUCTIONS
from hub.agent.types import TurnRequest
from hub.core.tools import ToolContext, ToolResult, ToolTraits
from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import ToolSpec

from perf.agent_rig import RecordingEngine, build_agent, demo_store

pytestmark = pytest.mark.slow

SMITH = Persona(key="smith", name="Brom", tools=("price_of",), instructions=(
    "You are Brom, the blacksmith of Eastwatch. Stay in character. You sell swords, axes and "
    "horseshoes and you name the price of anything you sell when asked."))


class PriceTool(ToolTraits):
    spec = ToolSpec("price_of", "The price of an item in the forge", {
        "type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]})

    async def execute(self, args: dict, ctx: ToolContext) -> ToolResult:
        return ToolResult(ok=True, data={"item": args["item"], "gold": 12})


@pytest.fixture
async def engine(gemma_path: Path) -> RecordingEngine:
    recording = RecordingEngine(LlamaEngine(gemma_path, n_ctx=4096, seed=7))
    yield recording
    await recording.close()


async def test_two_personas_taking_turns_each_pay_only_for_their_new_tokens(engine: RecordingEngine) -> None:
    agent, _, registry = build_agent(engine, demo_store(), constrained_tools="never")
    home_tools = registry.names()
    registry.register(PriceTool())
    agent.personas = PersonaBook(home_persona(ASSISTANT_INSTRUCTIONS), [SMITH], home_tools=home_tools)

    async def turn(text: str, conversation: str, persona: str | None) -> tuple[int, int, int]:
        await agent.ask(TurnRequest(text, conversation_id=conversation, persona=persona))
        await agent.wait_primed()
        first = engine.take()[0]  # the turn's first model round
        return first.usage.prompt_tokens, first.usage.evaluated_prompt_tokens, \
            engine.count_tokens(first.request.messages[-1].content)

    home_1 = await turn("say something kind about the bedroom", "home", None)  # chit-chat: a stand-in is handed it
    smith_1 = await turn("good morning, what do you sell?", "forge", "smith")
    assert home_1[1] == home_1[0] and smith_1[1] >= smith_1[0] - 8  # both cold: different prefixes

    home_2 = await turn("now say something kind about the kitchen", "home", None)
    smith_2 = await turn("how much is a sword?", "forge", "smith")
    for before, after in ((home_1, home_2), (smith_1, smith_2)):
        added = after[0] - before[0]  # the history since its last turn and the new message
        assert 0 < after[1] <= added, (before, after)
        assert after[1] < before[0] / 4  # never the persona's stable prefix again


async def test_every_personas_prefix_is_primed_before_its_first_turn(engine: RecordingEngine) -> None:
    agent, _, registry = build_agent(engine, demo_store(), constrained_tools="never")
    home_tools = registry.names()
    registry.register(PriceTool())
    agent.personas = PersonaBook(home_persona(ASSISTANT_INSTRUCTIONS), [SMITH], home_tools=home_tools)
    await agent.start()
    try:
        for _ in range(3000):  # the primers settle for 2 s, then evaluate while the engine is idle
            if agent.priming.primer.primes and all(p.primes for p in agent.priming.persona_primers):
                break
            await asyncio.sleep(0.1)
        assert [p.primes for p in agent.priming.persona_primers] == [1]
        await agent.ask(TurnRequest("good morning, what do you sell?", conversation_id="forge", persona="smith"))
        first = engine.take()[0]
        own = engine.count_tokens(first.request.messages[-1].content)
        assert "You are Brom" in first.request.messages[0].content
        assert first.usage.evaluated_prompt_tokens <= own + 16, first.usage  # not a cold start
    finally:
        await agent.stop()
