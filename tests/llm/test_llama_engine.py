"""LlamaEngine with the real small models: streaming, formats, grammar, prefix reuse, thinking
budget, the queue, cancellation and bad input."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import string
from pathlib import Path
from typing import AsyncIterator

import pytest

from hub.config import validate
from hub.llm.llama_engine import LlamaEngine
from hub.llm.factory import local_engine
from hub.options import hub_options
from hub.llm.types import EngineBusy, PromptTooLong
from hub.llm.models import STAND_IN_WARNING
from hub.core.messages import Message, ToolSpec
from hub.llm.types import (
    Delta,
    Done,
    EngineError,
    GenerationRequest,
    Reasoning,
    ReasoningMode,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolConstraint,
)

pytestmark = pytest.mark.slow

TURN_ON = ToolSpec("turn_on", "Turn a device on", {
    "type": "object", "properties": {"entity_id": {"type": "string", "description": "the device"}},
    "required": ["entity_id"]}, entity_args=("entity_id",))
TURN_OFF = ToolSpec("turn_off", "Turn a device off", {
    "type": "object", "properties": {"entity_id": {"type": "string"}}, "required": ["entity_id"]},
    entity_args=("entity_id",))


@pytest.fixture(scope="module")
def smollm(smollm_path: Path) -> LlamaEngine:
    engine = LlamaEngine(smollm_path, n_ctx=2048, queue_size=8, seed=7)
    yield engine
    asyncio.run(engine.close())


@pytest.fixture(scope="module")
def gemma(gemma_path: Path) -> LlamaEngine:
    engine = LlamaEngine(gemma_path, n_ctx=4096, seed=7)
    yield engine
    asyncio.run(engine.close())


def ask(text: str, **options) -> GenerationRequest:
    return GenerationRequest([Message("system", "You are a helpful assistant."), Message("user", text)], **options)


async def collect(stream: AsyncIterator[Delta]) -> list[Delta]:
    return [delta async for delta in stream]


def done_of(deltas: list[Delta]) -> Done:
    assert sum(isinstance(d, Done) for d in deltas) == 1 and isinstance(deltas[-1], Done)
    return deltas[-1]


def texts(deltas: list[Delta]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, TextDelta))


# --- streaming and formats -------------------------------------------------------------------


async def test_stream_yields_text_deltas_then_one_done(smollm: LlamaEngine) -> None:
    request = ask("What is the capital of France?", max_tokens=24)
    deltas = await collect(smollm.stream(request))
    usage = done_of(deltas).usage
    assert sum(isinstance(d, TextDelta) for d in deltas) >= 2 and texts(deltas).strip()
    assert usage.prompt_tokens == len(smollm.prompt_tokens(request))
    assert usage.evaluated_prompt_tokens + usage.reused_prompt_tokens == usage.prompt_tokens
    assert 1 <= usage.completion_tokens <= 24 and usage.stop_reason in ("stop", "length")
    assert usage.thinking_tokens == 0
    assert 0 < usage.first_token_s <= usage.total_s and usage.decode_s >= 0


async def test_smollm_uses_its_embedded_template(smollm: LlamaEngine) -> None:
    assert smollm.chat_format.name == "template"
    assert smollm.render(ask("Hi")).text == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert smollm.info.architecture == "llama" and smollm.info.n_ctx == 2048
    assert smollm.info.n_ctx_train == 8192 and 130e6 < smollm.info.n_params < 140e6


async def test_gemma_without_template_uses_the_builtin_gemma_format(gemma: LlamaEngine) -> None:
    assert gemma.chat_format.name == "gemma3"
    assert gemma._llm.chat_format == "llama-2"  # llama-cpp-python's guess exists, and is never used
    prompt = gemma.render(ask("Hi")).text
    assert prompt == "<start_of_turn>user\nYou are a helpful assistant.\n\nHi<end_of_turn>\n<start_of_turn>model\n"
    deltas = await collect(gemma.stream(ask("Hi", max_tokens=8)))
    usage = done_of(deltas).usage
    # <bos> is added once: the rendered text has none, the model wants one
    tokens = gemma.prompt_tokens(ask("Hi"))
    assert usage.prompt_tokens == len(tokens) and tokens.count(gemma._llm.token_bos()) == 1
    assert "[INST]" not in prompt


# --- constrained tool calls ------------------------------------------------------------------


def random_ids(rng: random.Random, count: int) -> tuple[str, ...]:
    return tuple(f"light.{''.join(rng.choices(string.ascii_lowercase, k=7))}" for _ in range(count))


@pytest.mark.parametrize("engine_name", ["smollm", "gemma"])
async def test_constrained_call_names_only_an_id_from_the_enum(engine_name: str, request) -> None:
    engine: LlamaEngine = request.getfixturevalue(engine_name)
    rng = random.Random(engine_name)
    for _ in range(3):
        ids = random_ids(rng, 3)
        generation = ask("Turn on the light please", tools=[TURN_ON, TURN_OFF], max_tokens=64,
                         constraint=ToolConstraint(("turn_on", "turn_off"), ids))
        deltas = await collect(engine.stream(generation))
        calls = [d.call for d in deltas if isinstance(d, ToolCallDelta)]
        assert len(calls) == 1, deltas
        assert calls[0].name in ("turn_on", "turn_off")
        assert calls[0].arguments == {"entity_id": calls[0].arguments["entity_id"]}
        assert calls[0].arguments["entity_id"] in ids
        assert done_of(deltas).usage.stop_reason == "tool_call"
        assert not any(isinstance(d, TextDelta) for d in deltas)


async def test_impossible_constraint_is_a_clear_error(smollm: LlamaEngine) -> None:
    generation = ask("Turn on", tools=[TURN_ON], constraint=ToolConstraint(("turn_on",), ()))
    with pytest.raises(EngineError, match="constrained tool call impossible"):
        await collect(smollm.stream(generation))


# --- prefix reuse ----------------------------------------------------------------------------


async def test_second_call_with_the_same_prefix_evaluates_only_the_new_tokens(gemma: LlamaEngine) -> None:
    rooms = ["kitchen", "hall", "bedroom", "office", "garage", "attic", "cellar"]
    overview = "\n".join(f"- light.lamp_{i}: lamp number {i} in the {rooms[i % 7]}" for i in range(190))
    system = Message("system", "You control a home. These are its devices:\n" + overview)
    first = GenerationRequest([system, Message("user", "Which lamps are in the attic?")], max_tokens=4)
    usage1 = done_of(await collect(gemma.stream(first))).usage
    assert 2700 <= usage1.prompt_tokens <= 3600, usage1.prompt_tokens
    second = GenerationRequest(
        [system, Message("user", "Which lamps are in the attic?"), Message("assistant", "Lamp 5."),
         Message("user", "And the cellar?")], max_tokens=4)
    usage2 = done_of(await collect(gemma.stream(second))).usage
    new_tokens = usage2.prompt_tokens - usage1.prompt_tokens
    assert 0 < new_tokens < 40
    # only what differs from the cached prompt is evaluated (its tail diverges at the model turn)
    assert usage2.evaluated_prompt_tokens <= new_tokens + 8, usage2
    assert usage2.reused_prompt_tokens >= usage1.prompt_tokens - 8
    # an unrelated prompt shares nothing beyond the turn opener and is evaluated in full
    other = GenerationRequest([Message("user", "Tell me a story about a dragon.")], max_tokens=2)
    usage3 = done_of(await collect(gemma.stream(other))).usage
    assert usage3.evaluated_prompt_tokens >= usage3.prompt_tokens - 4


# --- reasoning -------------------------------------------------------------------------------


async def test_reasoning_off_gives_no_thinking(smollm: LlamaEngine) -> None:
    request = ask("Why is the sky blue?", max_tokens=24, reasoning=Reasoning(ReasoningMode.OFF))
    assert not smollm.render(request).starts_in_thinking
    deltas = await collect(smollm.stream(request))
    assert not any(isinstance(d, ThinkingDelta) for d in deltas)
    assert done_of(deltas).usage.thinking_tokens == 0


@pytest.mark.parametrize("budget", [16, 5])
async def test_thinking_budget_is_closed_by_the_engine_and_the_model_answers(
    smollm: LlamaEngine, budget: int
) -> None:
    request = ask("Why is the sky blue?", max_tokens=24, reasoning=Reasoning(ReasoningMode.BUDGET, budget))
    assert smollm.render(request).starts_in_thinking  # no switch in SmolLM's template: forced open
    deltas = await collect(smollm.stream(request))
    usage = done_of(deltas).usage
    thinking = [i for i, d in enumerate(deltas) if isinstance(d, ThinkingDelta)]
    answer = [i for i, d in enumerate(deltas) if isinstance(d, TextDelta)]
    assert thinking and answer, deltas
    assert max(thinking) < min(answer)  # thinking ends before the answer starts
    assert budget <= usage.thinking_tokens <= budget + 2, usage
    assert texts(deltas).strip()
    assert "<think>" not in texts(deltas) and "</think>" not in texts(deltas)
    assert "".join(d.text for d in deltas if isinstance(d, ThinkingDelta)).strip()
    assert usage.completion_tokens - usage.thinking_tokens <= 24


async def test_budget_zero_closes_thinking_at_once(smollm: LlamaEngine) -> None:
    request = ask("Why is the sky blue?", max_tokens=12, reasoning=Reasoning(ReasoningMode.BUDGET, 0))
    assert not smollm.render(request).starts_in_thinking
    deltas = await collect(smollm.stream(request))
    assert done_of(deltas).usage.thinking_tokens == 0


# --- the queue and cancellation --------------------------------------------------------------


async def test_concurrent_streams_all_complete_one_at_a_time(smollm: LlamaEngine) -> None:
    questions = ["Name a colour.", "Name a fruit.", "Name an animal."]
    results = await asyncio.gather(*(collect(smollm.stream(ask(q, max_tokens=10))) for q in questions))
    for deltas in results:
        assert done_of(deltas).usage.completion_tokens >= 1


async def test_full_queue_raises_engine_busy(smollm_path: Path) -> None:
    engine = LlamaEngine(smollm_path, n_ctx=1024, queue_size=1, seed=3)
    try:
        running = engine.stream(ask("Count to fifty.", max_tokens=200))
        assert isinstance(await running.__anext__(), (TextDelta, ThinkingDelta))  # holds the model
        waiting = asyncio.create_task(collect(engine.stream(ask("Hi", max_tokens=4))))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        with pytest.raises(EngineBusy):
            await collect(engine.stream(ask("Hi", max_tokens=4)))
        await running.aclose()
        done_of(await asyncio.wait_for(waiting, 120))
    finally:
        await engine.close()


async def test_cancelled_stream_frees_the_engine_at_the_next_token(smollm: LlamaEngine) -> None:
    stream = smollm.stream(ask("Write a long story about a lighthouse.", max_tokens=400))
    prompt_tokens = len(smollm.prompt_tokens(ask("Write a long story about a lighthouse.")))
    for _ in range(3):
        await stream.__anext__()
    await stream.aclose()
    deltas = await asyncio.wait_for(collect(smollm.stream(ask("Hi", max_tokens=4))), 120)
    assert done_of(deltas).usage.completion_tokens >= 1
    # the cancelled generation stopped after a few tokens, far from its 400: its tokens are all
    # that the next request found in the cache beyond the prompt
    assert smollm._cached_before_last_request - prompt_tokens < 20


async def test_a_halted_stream_ends_with_the_done_of_what_it_did(smollm: LlamaEngine) -> None:
    request = ask("Write a long story about a lighthouse.", max_tokens=400)
    deltas: list[Delta] = []
    async for delta in smollm.stream(request):
        deltas.append(delta)
        if sum(isinstance(d, TextDelta) for d in deltas) == 3:
            request.halt.set()
    usage = done_of(deltas).usage
    assert sum(isinstance(d, TextDelta) for d in deltas) == 3, "after the halt only its Done came"
    assert usage.stop_reason == "halted"
    assert usage.prompt_tokens == len(smollm.prompt_tokens(request))
    assert usage.evaluated_prompt_tokens + usage.reused_prompt_tokens == usage.prompt_tokens > 0
    # what was generated up to the halt, far from its 400
    assert 3 <= usage.completion_tokens < 100 and 0 < usage.first_token_s <= usage.total_s
    # the KV cache the next request finds holds just what was counted
    done_of(await asyncio.wait_for(collect(smollm.stream(ask("Hi", max_tokens=4))), 120))
    assert smollm._cached_before_last_request - usage.prompt_tokens <= usage.completion_tokens + 1


async def test_cancelling_the_consuming_task_frees_the_engine(smollm: LlamaEngine) -> None:
    async def consume() -> None:
        await collect(smollm.stream(ask("Write a long story about a castle.", max_tokens=400)))

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deltas = await asyncio.wait_for(collect(smollm.stream(ask("Hi", max_tokens=4))), 120)
    done_of(deltas)


# --- bad input -------------------------------------------------------------------------------


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="not found") as caught:
        LlamaEngine(tmp_path / "nope.gguf")
    assert "nope.gguf" in str(caught.value)


def test_corrupt_files_are_clear_errors(tmp_path: Path, smollm_path: Path) -> None:
    noise = tmp_path / "noise.gguf"
    noise.write_bytes(os.urandom(8192))
    with pytest.raises(EngineError, match="not a GGUF") as caught:
        LlamaEngine(noise)
    assert "noise.gguf" in str(caught.value)
    # a valid header whose tensor data is cut off: llama.cpp itself refuses it
    cut = tmp_path / "cut.gguf"
    data = smollm_path.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(EngineError, match="could not load") as caught:
        LlamaEngine(cut, n_ctx=512)
    assert "cut.gguf" in str(caught.value)


def test_context_over_the_training_length_is_a_clear_error(smollm_path: Path) -> None:
    with pytest.raises(EngineError, match="n_ctx 16384 .* 8192 tokens"):
        LlamaEngine(smollm_path, n_ctx=16384)


async def test_empty_messages_and_overlong_prompts_are_clear_errors(smollm_path: Path) -> None:
    engine = LlamaEngine(smollm_path, n_ctx=512, seed=1)
    try:
        with pytest.raises(EngineError, match="empty message list"):
            await collect(engine.stream(GenerationRequest([])))
        with pytest.raises(PromptTooLong, match="context window of 512"):
            await collect(engine.stream(ask("lamp " * 800)))
        # the engine is still usable afterwards
        done_of(await collect(engine.stream(ask("Hi", max_tokens=4))))
    finally:
        await engine.close()


async def test_local_engine_uses_the_options_and_warns_about_the_stand_in(caplog) -> None:
    config = validate({"n_ctx": 1024, "threads": 1, "kv_cache_type": "q8_0", "queue_size": 2})
    with caplog.at_level(logging.WARNING, logger="hub.llm.factory"):
        engine = await asyncio.to_thread(local_engine, hub_options(config).llm)
    try:
        assert STAND_IN_WARNING in caplog.text
        assert engine.info.is_stand_in and engine.info.n_ctx == 1024
        assert engine.uses_constrained_tools  # auto + a 135M model
        done_of(await collect(engine.stream(ask("Hi", max_tokens=4))))
    finally:
        await engine.close()


def test_local_engine_missing_model_path_is_a_clear_error(tmp_path: Path) -> None:
    config = validate({"model_path": str(tmp_path / "gone.gguf")})
    with pytest.raises(EngineError, match="not found"):
        local_engine(hub_options(config).llm)


async def test_closing_the_engine_ends_a_running_stream_with_a_clear_error(smollm_path: Path) -> None:
    engine = LlamaEngine(smollm_path, n_ctx=1024, seed=5)
    stream = engine.stream(ask("Write a long story about a lighthouse.", max_tokens=400))
    await stream.__anext__()
    closing = asyncio.create_task(engine.close())
    with pytest.raises(EngineError, match="closed"):
        async for _ in stream:
            pass
    await asyncio.wait_for(closing, 120)
    with pytest.raises(EngineError, match="closed"):
        await collect(engine.stream(ask("Hi")))
