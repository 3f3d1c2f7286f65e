"""Conversational mode and reasoning through the real agent and SmolLM2-135M-Instruct: the prompt
the model sees, thinking switched off, and a forced-thinking turn closed by the hub's budget.

SmolLM2's embedded ChatML template has no thinking switch and no conversational variable: the
hub forces thinking open with `<think>` and asks for spoken replies by instruction."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from hub.agent.agent import Agent
from hub.agent.prompt import CONVERSATIONAL_INSTRUCTIONS, WRITTEN_INSTRUCTIONS
from hub.agent.types import ReplyChunk, TurnDone, TurnRequest, TurnResult
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolRegistry
from hub.llm.llama_engine import LlamaEngine
from hub.llm.types import Delta, Done, GenerationRequest, Reasoning, ReasoningMode, TextDelta, ThinkingDelta
from hub.locales import phrase
from hub.settings import RuntimeSettings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
QUESTION = "Tell me a story about the blue sky."  # chit-chat: a stand-in is handed no question of fact


class RecordingEngine:
    """The real engine, recording the exact prompt text and the deltas of each generation (to
    its Done, also when the agent halts it: a reply that repeats a sentence, or one at
    `max_reply_chars`, is ended there)."""

    def __init__(self, engine: LlamaEngine) -> None:
        self.engine = engine
        self.info = engine.info
        self.uses_constrained_tools = engine.uses_constrained_tools
        self.prompts: list[str] = []
        self.deltas: list[list[Delta]] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        self.prompts.append(self.engine.render(request).text)
        seen: list[Delta] = []
        self.deltas.append(seen)
        async for delta in self.engine.stream(request):
            seen.append(delta)
            yield delta

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    async def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def smollm(smollm_path: Path) -> LlamaEngine:
    engine = LlamaEngine(smollm_path, n_ctx=4096, seed=7)
    yield engine
    asyncio.run(engine.close())


def make_agent(smollm: LlamaEngine, **options: Any) -> tuple[Agent, RecordingEngine]:
    engine = RecordingEngine(smollm)
    config = validate({"fast_path": False, "max_tokens": 40, "reasoning": "off", **options})
    agent = Agent(engine=engine, registry=ToolRegistry(), settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent,
                  clock_text=lambda: "Monday 2026-11-30 08:00")
    return agent, engine


async def turn(agent: Agent, request: TurnRequest) -> tuple[str, TurnResult]:
    chunks: list[str] = []
    async for event in agent.run(request):
        if isinstance(event, ReplyChunk):
            chunks.append(event.text)
        elif isinstance(event, TurnDone):
            return "".join(chunks), event.result
    raise AssertionError("no TurnDone")


async def test_conversational_mode_changes_the_prompt_the_model_sees(smollm: LlamaEngine) -> None:
    assert smollm.chat_format.capabilities.conversational_variable is None  # by instruction, then
    agent, engine = make_agent(smollm)
    await turn(agent, TurnRequest(QUESTION, conversation_id="on", conversational=True))
    await turn(agent, TurnRequest(QUESTION, conversation_id="off", conversational=False))
    spoken, written = engine.prompts
    assert spoken.startswith("<|im_start|>system\n") and written.startswith("<|im_start|>system\n")
    assert CONVERSATIONAL_INSTRUCTIONS in spoken and WRITTEN_INSTRUCTIONS not in spoken
    assert WRITTEN_INSTRUCTIONS in written and CONVERSATIONAL_INSTRUCTIONS not in written
    # the instruction is the only difference, and it sits in the system turn
    assert spoken.replace(CONVERSATIONAL_INSTRUCTIONS, WRITTEN_INSTRUCTIONS) == written
    assert spoken.index(CONVERSATIONAL_INSTRUCTIONS) < spoken.index("<|im_end|>")


async def test_reasoning_off_yields_no_thinking(smollm: LlamaEngine) -> None:
    agent, engine = make_agent(smollm)
    chunks, result = await turn(agent, TurnRequest(QUESTION, reasoning=Reasoning(ReasoningMode.OFF)))
    assert not engine.prompts[0].endswith("<think>\n")
    [deltas] = engine.deltas
    assert not any(isinstance(d, ThinkingDelta) for d in deltas)
    assert result.ok and result.reply and chunks == result.reply
    assert result.timings.model.thinking_tokens == 0 and result.timings.model.thinking_s == 0.0


async def test_forced_thinking_under_a_16_token_budget_is_closed_and_answered(smollm: LlamaEngine) -> None:
    agent, engine = make_agent(smollm)
    chunks, result = await turn(agent, TurnRequest(QUESTION, reasoning=Reasoning(ReasoningMode.BUDGET, 16)))
    assert engine.prompts[0].endswith("<|im_start|>assistant\n<think>\n")  # forced open
    [deltas] = engine.deltas
    thinking = "".join(d.text for d in deltas if isinstance(d, ThinkingDelta)).strip()
    answer = "".join(d.text for d in deltas if isinstance(d, TextDelta)).strip()
    usage = next(d.usage for d in deltas if isinstance(d, Done))
    assert thinking and answer, deltas
    # the hub closed it (the answer may hit max_tokens, or be halted when SmolLM2 repeats a sentence
    # or says one the judge does not let through)
    assert usage.stop_reason in ("budget", "length", "halted")
    assert 16 <= usage.thinking_tokens <= 18
    assert result.ok and result.reply and result.reply != phrase("en", "action.done")  # the model's answer
    assert chunks == result.reply
    assert thinking not in result.reply and "<think>" not in result.reply and "</think>" not in result.reply
    assert result.timings.model.thinking_tokens == usage.thinking_tokens and result.timings.model.thinking_s > 0
    if usage.stop_reason == "halted":  # a sentence said again, or one the judge stopped: the reply ends before it
        assert answer.startswith(result.reply.strip()) and result.withheld, (answer, result.reply, result.withheld)


async def test_thinking_that_never_closes_under_reasoning_on_still_gets_an_answer(smollm: LlamaEngine) -> None:
    agent, engine = make_agent(smollm, max_tokens=16)
    _, result = await turn(agent, TurnRequest("Think step by step, then tell me a joke about numbers.",
                                              reasoning=Reasoning(ReasoningMode.ON)))
    [deltas] = engine.deltas
    usage = next(d.usage for d in deltas if isinstance(d, Done))
    assert any(isinstance(d, ThinkingDelta) for d in deltas)
    assert usage.thinking_tokens <= 16 + 2
    assert any(isinstance(d, TextDelta) and d.text.strip() for d in deltas), deltas
    assert result.ok and result.reply


async def test_a_reply_capped_by_max_reply_chars_counts_the_tokens_of_its_round(smollm: LlamaEngine) -> None:
    """The agent halts the generation at the cap, then reads its Done: the tokens evaluated and
    written up to there are the turn's usage (metrics, REST and bench figures read it)."""
    agent, engine = make_agent(smollm, max_tokens=200, max_reply_chars=40)
    chunks, result = await turn(agent, TurnRequest("Tell me a long story about a lighthouse keeper."))
    [deltas] = engine.deltas
    [usage] = [d.usage for d in deltas if isinstance(d, Done)]
    assert usage.stop_reason == "halted" and result.ok and 0 < len(result.reply) <= 40, (usage, result.reply)
    timings = result.timings
    assert timings.model_rounds == 1 and timings.model.prompt_tokens == usage.prompt_tokens > 0
    assert 0 < timings.model.completion_tokens == usage.completion_tokens < 200
    written = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    assert len(written) < 200, "the engine stopped at the halt, not at max_tokens"
