"""Conversational mode benchmark: reply length with the mode on and off, same model, same prompts.

Each prompt (questions that invite long answers) is asked in a fresh conversation through the real
agent, once with conversational mode on and once off (the per-request override), with the hub's
sampling (temperature option default) under a few fixed seeds, no reply cap while generating
(`max_reply_chars` at its maximum), no fast path and no tools. Prints, per prompt (summed over the
seeds) and as means:
1. completion tokens the model wrote, on / off, and the ratio of the means;
2. the same after the hub's own reply cap: the model's text made speakable and cut at
   `max_reply_chars` (default 400) on a sentence boundary, as the hub would speak it, in tokens
   and characters.

    python bench/bench_conversational.py [--model PATH] [--seeds 3] [--max-tokens 256] [--cap 400]

The default model is SmolLM2-135M-Instruct, the only instruction-tuned model available here: it
follows a style instruction weakly, so its ratio says little about Bolt E4B, whose model card
claims up to 80% fewer output tokens in conversational mode. Pass `--model` with Bolt's GGUF to
measure the real thing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator

from hub.agent.agent import Agent
from hub.agent.speakable import make_speakable
from hub.agent.types import TurnRequest
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolRegistry
from hub.llm.llama_engine import LlamaEngine
from hub.llm.models import smollm2_path
from hub.llm.types import Delta, Done, GenerationRequest, TextDelta
from hub.settings import RuntimeSettings

PROMPTS = [
    "Explain how a heat pump works.",
    "What can you do?",
    "How can I save energy at home in winter?",
    "Tell me about the history of the light bulb.",
    "What should I cook for dinner tonight?",
    "Why is the sky blue?",
    "How does a thermostat keep my house warm?",
    "Give me some tips for sleeping better.",
]


class TextRecorder:
    """The engine, keeping the raw text the model wrote in the last generation."""

    def __init__(self, engine: LlamaEngine) -> None:
        self.engine = engine
        self.info = engine.info
        self.uses_constrained_tools = engine.uses_constrained_tools
        self.last_text = ""
        self.last_stop_reason = ""

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        parts: list[str] = []
        async for delta in self.engine.stream(request):
            if isinstance(delta, TextDelta):
                parts.append(delta.text)
            elif isinstance(delta, Done):
                self.last_stop_reason = delta.usage.stop_reason
            yield delta
        self.last_text = "".join(parts)

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    async def close(self) -> None:
        pass


@dataclass
class Sample:
    tokens: int  # completion tokens the model wrote
    capped_tokens: int  # tokens of the speakable reply cut at the cap
    capped_chars: int
    seconds: float
    ended_by_itself: bool  # the model ended its reply (not max_tokens)


async def ask(agent: Agent, engine: TextRecorder, prompt: str, conversational: bool, cap: int, tag: str) -> Sample:
    started = time.perf_counter()
    result = await agent.ask(TurnRequest(prompt, conversation_id=f"{tag}-{conversational}", language="en",
                                         conversational=conversational))
    seconds = time.perf_counter() - started
    if not result.ok:
        raise SystemExit(f"turn failed ({result.error}): {result.reply}")
    spoken = make_speakable(engine.last_text, "en", cap)
    return Sample(result.timings.model.completion_tokens, engine.count_tokens(spoken) if spoken else 0, len(spoken),
                  seconds, engine.last_stop_reason == "stop")


def change(ratio_on_off: float) -> str:
    if ratio_on_off <= 1:
        return f"{(1 - ratio_on_off) * 100:.0f}% fewer with the mode on"
    return f"{(ratio_on_off - 1) * 100:.0f}% more with the mode on"


def ratio(on: list[int], off: list[int]) -> float:
    return statistics.mean(on) / statistics.mean(off) if statistics.mean(off) else float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--seeds", type=int, default=3, help="sampling seeds per prompt and mode")
    parser.add_argument("--max-tokens", type=int, default=256, help="completion tokens allowed per reply")
    parser.add_argument("--cap", type=int, default=hub_options(validate({})).agent.max_reply_chars, help="max_reply_chars to apply")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()

    path = args.model or smollm2_path()
    options = hub_options(validate({"fast_path": False, "reasoning": "off", "turn_timeout": 600,
                                    "max_tokens": args.max_tokens, "max_reply_chars": 4000}))
    on: list[Sample] = []
    off: list[Sample] = []
    per_prompt: dict[str, dict[bool, list[Sample]]] = {p: {True: [], False: []} for p in PROMPTS}
    for seed in range(1, args.seeds + 1):
        model = LlamaEngine(path, n_ctx=2048, threads=args.threads, seed=seed)
        engine = TextRecorder(model)
        agent = Agent(engine=engine, registry=ToolRegistry(), settings=RuntimeSettings(options.settings), options=options.agent,
                      clock_text=lambda: "Monday 2026-11-30 18:00")
        if seed == 1:
            print(f"model: {model.info.name} ({path.name}, {model.info.n_params / 1e6:.0f}M params), "
                  f"temperature {options.agent.temperature}, seeds 1-{args.seeds}, max_tokens {args.max_tokens}, "
                  f"cap {args.cap} chars, {len(PROMPTS)} prompts", flush=True)
        try:
            for index, prompt in enumerate(PROMPTS):
                # alternate the order so neither mode always runs on a warm prompt cache
                modes = (True, False) if (index + seed) % 2 == 0 else (False, True)
                for mode in modes:
                    sample = await ask(agent, engine, prompt, mode, args.cap, f"s{seed}p{index}")
                    per_prompt[prompt][mode].append(sample)
                    (on if mode else off).append(sample)
        finally:
            await model.close()

    print(f"\n{'prompt (sums over seeds)':44} {'tokens on':>9} {'off':>5}   {'capped on':>9} {'off':>5}   "
          f"{'chars on':>8} {'off':>5}   {'ended on':>8} {'off':>4}")
    for prompt, by_mode in per_prompt.items():
        row_on, row_off = by_mode[True], by_mode[False]
        print(f"{prompt[:44]:44} {sum(s.tokens for s in row_on):9d} {sum(s.tokens for s in row_off):5d}   "
              f"{sum(s.capped_tokens for s in row_on):9d} {sum(s.capped_tokens for s in row_off):5d}   "
              f"{sum(s.capped_chars for s in row_on):8d} {sum(s.capped_chars for s in row_off):5d}   "
              f"{sum(s.ended_by_itself for s in row_on):8d} {sum(s.ended_by_itself for s in row_off):4d}")

    def mean(samples: list[Sample], field: str) -> float:
        return statistics.mean(getattr(s, field) for s in samples)

    raw = ratio([s.tokens for s in on], [s.tokens for s in off])
    capped = ratio([s.capped_tokens for s in on], [s.capped_tokens for s in off])
    print(f"\nmean completion tokens: on {mean(on, 'tokens'):.1f}, off {mean(off, 'tokens'):.1f} "
          f"-> ratio on/off {raw:.2f} ({change(raw)})")
    print(f"after the {args.cap}-char reply cap: on {mean(on, 'capped_tokens'):.1f}, "
          f"off {mean(off, 'capped_tokens'):.1f} tokens -> ratio on/off {capped:.2f} "
          f"({change(capped)})")
    print(f"replies the model ended by itself (not max_tokens): on {sum(s.ended_by_itself for s in on)} "
          f"of {len(on)}, off {sum(s.ended_by_itself for s in off)} of {len(off)}; "
          f"turn time mean {mean(on + off, 'seconds'):.1f} s")
    if args.model is None:
        print("\nnote: SmolLM2-135M follows the spoken-style instruction weakly; this measures the hub's "
              "mechanism, not Bolt E4B, whose model card claims up to 80% fewer output tokens in "
              "conversational mode. Run with --model <Bolt GGUF> for that figure.")


if __name__ == "__main__":
    asyncio.run(main())
