"""Engine benchmark: prefix reuse and the engine's overhead over raw llama-cpp-python.

Prints, for one model (Gemma 3 270M by default; `--model PATH` for another GGUF):
1. first-token time for a ~3,000-token prompt, cold (nothing shared with the KV cache) and warm
   (the previous call had the same prompt and only a short new turn follows), and their ratio;
2. wall time of `LlamaEngine.stream` against raw `Llama.create_completion(stream=True)` for the
   same prompt tokens and the same greedy output (so the same number of tokens), run alternately,
   medians, and their ratio.

    python bench/bench_engine.py [--model PATH] [--runs 5] [--tokens 64] [--threads 0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from pathlib import Path

from llama_cpp import Llama

from hub.llm.amx import extra_buffers_fail, without_extra_buffers
from hub.llm.llama_engine import LlamaEngine
from hub.llm.models import gemma3_270m_path
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest, TextDelta

ROOMS = ["kitchen", "hall", "bedroom", "office", "garage", "attic", "cellar"]


def long_system(tag: str, lamps: int) -> Message:
    overview = "\n".join(f"- light.lamp_{i}: lamp number {i} in the {ROOMS[i % 7]}" for i in range(lamps))
    return Message("system", f"[{tag}] You control a home. These are its devices:\n{overview}")


def request(system: Message, turns: list[Message], tokens: int) -> GenerationRequest:
    return GenerationRequest([system, *turns], max_tokens=tokens, temperature=0.0)


async def run_engine(engine: LlamaEngine, generation: GenerationRequest) -> tuple[float, Done, str]:
    started = time.perf_counter()
    text, done = [], None
    async for delta in engine.stream(generation):
        if isinstance(delta, TextDelta):
            text.append(delta.text)
        elif isinstance(delta, Done):
            done = delta
    assert done is not None
    return time.perf_counter() - started, done, "".join(text)


def run_raw(llm: Llama, tokens: list[int], max_tokens: int, stop: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    text = []
    for chunk in llm.create_completion(tokens, max_tokens=max_tokens, temperature=0.0, stream=True, stop=stop):
        text.append(chunk["choices"][0]["text"])
    return time.perf_counter() - started, "".join(text)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: Gemma 3 270M)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=64, help="output tokens per generation")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--lamps", type=int, default=170, help="prompt size knob (170 ≈ 3,000 Gemma tokens)")
    args = parser.parse_args()
    path = args.model or gemma3_270m_path()
    n_ctx = 4096
    engine = LlamaEngine(path, n_ctx=n_ctx, threads=args.threads)
    threads = engine._llm.n_threads
    with without_extra_buffers(extra_buffers_fail(path)):  # as the engine loads it
        raw = Llama(str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, flash_attn=True,
                    verbose=False)
    print(f"model: {engine.info.name} ({engine.info.architecture}), format {engine.chat_format.name}, "
          f"{threads} threads, n_ctx {n_ctx}")

    # 1. cold vs warm first token
    question = [Message("user", "Which lamps are in the attic?")]
    follow_up = question + [Message("assistant", "Lamp 5."), Message("user", "And the cellar?")]
    cold, warm = [], []
    for _ in range(args.runs):
        system = long_system(uuid.uuid4().hex, args.lamps)  # a new first line: nothing cached
        _, done, _ = await run_engine(engine, request(system, question, 4))
        cold.append(done.usage.first_token_s)
        prompt_tokens = done.usage.prompt_tokens
        _, done, _ = await run_engine(engine, request(system, follow_up, 4))
        warm.append(done.usage.first_token_s)
        evaluated = done.usage.evaluated_prompt_tokens
    cold_s, warm_s = statistics.median(cold), statistics.median(warm)
    print(f"prompt: {prompt_tokens} tokens; the warm call evaluated {evaluated} new tokens")
    print(f"first token, cold: {cold_s:.3f} s   warm: {warm_s:.3f} s   warm/cold: {warm_s / cold_s:.4f}")

    # 2. engine vs raw create_completion, same prompt, same greedy output
    system = long_system("fixed", args.lamps)
    generation = request(system, question, args.tokens)
    prompt = engine.prompt_tokens(generation)
    stop = list(engine.chat_format.stop)
    await run_engine(engine, generation)  # both start warm: the prompt is in each KV cache
    run_raw(raw, prompt, args.tokens, stop)
    engine_times, raw_times = [], []
    for _ in range(args.runs):
        seconds, done, engine_text = await run_engine(engine, generation)
        engine_times.append(seconds)
        seconds, raw_text = run_raw(raw, prompt, args.tokens, stop)
        raw_times.append(seconds)
    engine_s, raw_s = statistics.median(engine_times), statistics.median(raw_times)
    same = "same text" if engine_text.strip() == raw_text.strip() else "TEXT DIFFERS"
    print(f"stream, {done.usage.completion_tokens} output tokens ({same}): engine {engine_s:.3f} s   "
          f"raw create_completion {raw_s:.3f} s   engine/raw: {engine_s / raw_s:.3f}")
    print(f"engine decode: {done.usage.decode_tokens_per_s:.1f} tokens/s")
    await engine.close()
    raw.close()


if __name__ == "__main__":
    asyncio.run(main())
