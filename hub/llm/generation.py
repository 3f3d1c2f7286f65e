"""The generation loop in the engine's worker: sampled tokens as deltas, free text or under a grammar."""

from __future__ import annotations

import codecs
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from hub.llm.chat_format import ChatFormat, RenderedPrompt
from hub.llm.grammar import constrained_delta
from hub.llm.llama_internals import end_of_generation_test
from hub.llm.prompt_lookup import PromptLookupDecoder
from hub.llm.reasoning import DecodeLoop, OutOfContext, run_decode_loop
from hub.llm.types import Delta, Done, EngineError, GenerationRequest, ToolCallDelta, Usage

_SAMPLING = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0}
# the longest a decode gate holds one generation (a voice turn whose TTS hangs must not)
GATE_WAIT_MAX_S = 3.0


class Cancelled(Exception):
    """Raised inside the worker when the consumer went away."""


@dataclass
class Failure:
    error: EngineError


@dataclass
class Job:
    request: GenerationRequest
    emit: Callable[[Any], None]
    cancelled: threading.Event
    gate_wait_left_s: float = field(default_factory=lambda: GATE_WAIT_MAX_S)  # the decode gate's hold left


class Generation:
    """Decodes jobs on the engine's llama, whose prompt is already in place (worker thread only).

    `evaluated` counts the tokens the llama has evaluated so far (the engine's counting `eval`):
    what it adds before the first token is the prompt's uncached part.
    """

    def __init__(self, llm: Llama, chat_format: ChatFormat, n_ctx: int, seed: int | None,
                 drafter: PromptLookupDecoder | None, evaluated: Callable[[], int]) -> None:
        self._llm = llm
        self._chat_format = chat_format
        self._n_ctx = n_ctx
        self._seed = seed
        self._drafter = drafter
        self._evaluated = evaluated

    def free(self, job: Job, prompt: list[int], rendered: RenderedPrompt, started: float) -> None:
        request = job.request
        usage = Usage(prompt_tokens=len(prompt))
        loop = DecodeLoop.for_format(self._chat_format, request.reasoning, request.max_tokens,
                                     start_in_thinking=rendered.starts_in_thinking)
        sampling = self._sampling(request)
        sequence = list(prompt)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

        def token_texts(bridge: str) -> Iterator[str]:
            if bridge:
                sequence.extend(self._llm.tokenize(bridge.encode("utf-8"), add_bos=False, special=True))
                if len(sequence) >= self._n_ctx - 1:
                    raise OutOfContext
            for token in self._tokens(job, sequence, sampling, None, usage, started):
                sequence.append(token)
                yield decoder.decode(self._llm.detokenize([token], special=True))
                if len(sequence) >= self._n_ctx - 1:
                    raise OutOfContext

        def emit_all(deltas: list[Delta]) -> None:
            for delta in deltas:
                job.emit(delta)

        run_decode_loop(loop, token_texts, emit_all)
        loop.fill(usage)
        self._finish(job, usage, started)

    def constrained(self, job: Job, prompt: list[int], grammar: LlamaGrammar, started: float) -> None:
        usage = Usage(prompt_tokens=len(prompt))
        generated: list[int] = []
        reason = "length"
        for token in self._tokens(job, list(prompt), self._sampling(job.request), grammar, usage, started):
            generated.append(token)
            if len(generated) >= job.request.max_tokens or len(prompt) + len(generated) >= self._n_ctx - 1:
                break
        else:
            reason = "stop"
        text = self._llm.detokenize(generated, special=True).decode("utf-8", errors="replace").strip()
        delta = constrained_delta(text, "call_1", reason)
        if isinstance(delta, ToolCallDelta):
            reason = "tool_call"
        job.emit(delta)
        usage.completion_tokens = len(generated)
        usage.stop_reason = reason
        self._finish(job, usage, started)

    @staticmethod
    def _finish(job: Job, usage: Usage, started: float) -> None:
        if job.request.halt.is_set():
            usage.stop_reason = "halted"
        usage.total_s = time.perf_counter() - started
        if usage.first_token_s:
            usage.decode_s = max(0.0, usage.total_s - usage.first_token_s)
        job.emit(Done(usage))

    def _sampling(self, request: GenerationRequest) -> dict[str, Any]:
        self._llm.set_seed(self._seed if self._seed is not None else random.randrange(2**31))
        return {"temp": max(0.0, request.temperature), **_SAMPLING}

    def _tokens(self, job: Job, sequence: list[int], sampling: dict[str, Any], grammar: LlamaGrammar | None,
                usage: Usage, started: float) -> Iterator[int]:
        """Sampled tokens for `sequence` (EOG excluded); notes prefill figures on the first one.
        Ends when the consumer halts the job, raises Cancelled when it left."""
        is_eog = end_of_generation_test(self._llm)
        first = usage.first_token_s == 0.0
        evaluated_before = self._evaluated()
        generate_started = time.perf_counter()
        if self._drafter is not None:
            generator = self._drafter.generate(sequence, sampling, grammar)
        else:
            generator = self._llm.generate(sequence, grammar=grammar, **sampling)
        try:
            for token in generator:
                if first:
                    now = time.perf_counter()
                    usage.prefill_s = now - generate_started
                    usage.first_token_s = now - started
                    usage.evaluated_prompt_tokens = self._evaluated() - evaluated_before
                    usage.reused_prompt_tokens = usage.prompt_tokens - usage.evaluated_prompt_tokens
                    first = False
                if job.cancelled.is_set():
                    raise Cancelled
                _wait_for_gate(job)
                if is_eog(token) or job.request.halt.is_set():
                    return
                yield token
        finally:
            generator.close()


def _wait_for_gate(job: Job) -> None:
    """Waits while the request's decode gate is cleared: GATE_WAIT_MAX_S at most over the whole
    job, and never past the consumer leaving or halting it."""
    gate = job.request.decode_gate
    while (gate is not None and not gate.is_set() and job.gate_wait_left_s > 0
           and not job.cancelled.is_set() and not job.request.halt.is_set()):
        started = time.monotonic()
        gate.wait(min(0.05, job.gate_wait_left_s))
        job.gate_wait_left_s -= time.monotonic() - started
