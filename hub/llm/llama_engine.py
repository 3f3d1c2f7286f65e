"""The in-process model engine: a GGUF model run by llama-cpp-python, streamed as typed deltas.

One generation runs at a time, in the engine's one worker thread; requests wait in a bounded
queue (`EngineBusy` when it is full, or when the queue says a request's deadline cannot be met:
`admission`). Tokens go to the event loop as they come; a consumer that stops iterating stops
the worker at the next token (or the next prompt batch), and one that sets `request.halt` gets
the Done of what was done up to the next token. Nothing else touches the llama context:
llama.cpp aborts the process when two threads use one context at once, so benches and tools
that need the raw model go through `exclusive`, and tokenizing outside the worker
(`count_tokens`) uses only the vocabulary.

Prompts are rendered by the model's chat format (`llama_prompt`) and evaluated through
`Llama.generate` (the decode loop: `generation`), which reuses the longest common token prefix
with what is already in the KV cache: keep the stable part of the prompt first and
byte-identical. Each generation's KV state is also saved, keyed by its tokens, and restored when
a later prompt shares more with it than with what is resident (`kv_cache`): conversations that
take turns keep their prefixes. `prime` evaluates a prompt start ahead of need, and with a data
folder the primed states are kept on disk for the next start (`kept_prefixes`, `state_store`).
Text from outside (messages, entity names, tool results) never becomes control tokens
(`control_tokens`). `Done.usage` reports how many prompt tokens were actually evaluated,
measured by counting the tokens passed to `Llama.eval`. `draft_tokens` > 0 turns on
prompt-lookup speculative decoding (`prompt_lookup`). Loading the model and its options:
`llama_loading`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, AsyncGenerator, Callable, Sequence, TypeVar

import llama_cpp
import numpy as np
from llama_cpp import Llama

from hub.llm.admission import FairAdmission, QueueEstimate, RunningGeneration, acquire_in_time
from hub.llm.chat_format import ChatFormat, RenderedPrompt
from hub.llm.generation import Cancelled, Failure, Generation, Job
from hub.llm.grammar import tool_call_grammar
from hub.llm.kept_prefixes import KeptPrefixes
from hub.llm.kv_cache import PrefixStateCache, SavedState, common_prefix
from hub.llm.llama_prompt import LlamaPrompt
from hub.llm.llama_internals import count_evaluations, drop_from, resident_tokens, rewind
from hub.llm.llama_loading import load_llama
from hub.llm.prompt_lookup import PromptLookupDecoder
from hub.llm.state_store import StateStore, model_identity
from hub.llm.types import (
    Delta,
    Done,
    EngineBusy,
    EngineError,
    GenerationRequest,
    PromptTooLong,
    SMALL_MODEL_PARAMS,
)

_LOGGER = logging.getLogger(__name__)

T = TypeVar("T")


class LlamaEngine:
    """Engine protocol over llama-cpp-python. Construction loads the model (blocking: seconds).

    Use `hub.llm.factory.local_engine(options)` in the hub (in a thread: `asyncio.to_thread`), or the
    constructor directly in tests and tools.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_gpu_layers: int = 0,
        threads: int = 0,
        flash_attn: bool = True,
        kv_cache_type: str = "f16",
        constrained_tools: str = "auto",
        queue_size: int = 32,
        is_stand_in: bool = False,
        seed: int | None = None,
        prompt_cache_mib: int = 512,
        draft_tokens: int = 0,
        state_dir: Path | None = None,
    ) -> None:
        path = Path(model_path)
        if constrained_tools not in ("auto", "always", "never"):
            raise EngineError(f"constrained_tools must be auto, always or never, not {constrained_tools!r}")
        loaded = load_llama(path, n_ctx=n_ctx, n_gpu_layers=n_gpu_layers, threads=threads,
                            flash_attn=flash_attn, kv_cache_type=kv_cache_type)
        self._llm = loaded.llm
        self._memory: Callable[[], dict[str, int]] = lambda: loaded.memory(path)  # its parts (hub.memory)
        self._original_eval = count_evaluations(self._llm, self._counting_eval)
        self._eval_count = 0
        self._cancel_current: threading.Event | None = None
        self._priming: threading.Event | None = None  # set to interrupt a running prime()
        self._cached_before_last_request = 0  # tokens in the KV cache when the last request began
        self._n_batch = self._llm.n_batch
        self._prompt_cache = PrefixStateCache(self._llm, prompt_cache_mib * 2**20)
        # prompt-lookup speculative decoding (0: off); see prompt_lookup.py for when it pays
        self._drafter = (PromptLookupDecoder(self._llm, self._counting_eval, max_draft=draft_tokens)
                         if draft_tokens > 0 else None)
        self.constrained_tools, self._prompt = constrained_tools, LlamaPrompt(self._llm)
        self.chat_format: ChatFormat = self._prompt.chat_format
        self._generation = Generation(self._llm, self.chat_format, self._llm.n_ctx(), seed, self._drafter,
                                      lambda: self._eval_count)
        self.info = loaded.info(path, is_stand_in)
        self._queue_size, self._waiting = queue_size, 0
        self.queue = QueueEstimate()  # admission by deadline (`GenerationRequest.deadline`)
        self._admission = FairAdmission()  # and fairly across the interfaces asking
        self._running: RunningGeneration | None = None  # the generation holding the model
        self._gate: asyncio.Lock | None = None
        self._gate_loop: asyncio.AbstractEventLoop | None = None
        self._executor, self._closed = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama"), False
        store = None if state_dir is None or not self._prompt_cache.enabled else StateStore(
            state_dir, model_identity(path, llama_cpp=llama_cpp.__version__, type_k=kv_cache_type,
                                      type_v=loaded.type_v, flash_attn=flash_attn),
            f"{self.chat_format.name}:{_digest_of(getattr(self.chat_format, 'template', ''))}",
            self._prompt_cache.max_bytes)
        self._kept = KeptPrefixes(self._prompt_cache, store)
        _LOGGER.info(
            "loaded %s (%s, %.0fM params, n_ctx %d, %d threads, format %s)",
            self.info.name, self.info.architecture, self.info.n_params / 1e6, self.info.n_ctx, loaded.n_threads,
            self.chat_format.name,
        )

    # --- small public helpers ------------------------------------------------------------------

    @property
    def uses_constrained_tools(self) -> bool:
        """Whether tool calls should go through the grammar (`constrained_tools` option)."""
        if self.constrained_tools == "auto":
            return self.info.n_params < SMALL_MODEL_PARAMS
        return self.constrained_tools == "always"

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` as message text (any thread: only the vocabulary, not the context)."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def render(self, request: GenerationRequest) -> RenderedPrompt:
        """The exact prompt text a request is evaluated as (what `stream` feeds the model)."""
        return self._prompt.text(request)

    def prompt_tokens(self, request: GenerationRequest, *, add_generation_prompt: bool = True) -> list[int]:
        """The token ids `stream` evaluates for `request` (or `prime`, without the generation
        prompt): control tokens come only from the chat format's markup. Any thread."""
        return self._prompt.tokens(request, add_generation_prompt=add_generation_prompt)

    @property
    def prompt_cache_stats(self) -> dict[str, int]:
        """Saved states, their bytes, saves and restores (a snapshot; for metrics and tests)."""
        cache = self._prompt_cache
        return {"states": len(cache.states), "bytes": cache.total_bytes, "saves": cache.saves,
                "restores": cache.restores}

    def memory(self) -> dict[str, int]:  # the model's resident memory by part, and the prompt states
        return {**self._memory(), "prompt_states": self._prompt_cache.total_bytes}

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._cancel_current is not None:
            self._cancel_current.set()
        await asyncio.to_thread(self._executor.shutdown, wait=True)
        await self._kept.close()
        self._llm.close()

    # --- streaming -----------------------------------------------------------------------------

    async def stream(self, request: GenerationRequest) -> AsyncGenerator[Delta, None]:
        """Text/thinking/tool-call deltas, then one Done (only that once `request.halt` is set:
        the worker stops at its next token). EngineError (EngineBusy when the queue is full or
        would not be done by `request.deadline`, PromptTooLong) is raised from the iteration."""
        self._validate(request)
        gate = self._gate_for_running_loop()
        await self._admit(request, gate)
        loop = asyncio.get_running_loop()
        deltas: asyncio.Queue[Any] = asyncio.Queue()
        cancelled = threading.Event()

        def emit(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(deltas.put_nowait, item)
            except RuntimeError:  # the loop is gone: nobody is listening any more
                cancelled.set()

        self._start_worker(Job(request, emit, cancelled), gate)
        try:
            while True:
                item = await deltas.get()
                if isinstance(item, Failure):
                    raise item.error
                if isinstance(item, Done):
                    yield item
                    return
                if not request.halt.is_set():  # halted: what the worker sent since is not output
                    yield item
        finally:
            cancelled.set()

    async def _admit(self, request: GenerationRequest, gate: asyncio.Lock) -> None:
        """Wait for the model, then hold `gate`; EngineBusy when the queue is full or the request
        would not be done by its deadline."""
        # priming gives way at once, so the request that interrupts it is next, not waiting
        places = self._queue_size + (self._priming is not None)
        if self._waiting >= places:
            raise EngineBusy(f"the model is busy: {self._waiting} requests are already waiting")

        def fits(admitted: int, seconds_left: float) -> bool:
            if self._waiting + admitted >= places:  # those decided together share the places left
                return False
            ahead = self._waiting + self._generating(gate) + admitted  # 0: it starts now
            return not ahead or self.queue.fits(ahead, seconds_left, self._running)

        starts_now = not self._waiting + self._generating(gate)
        if not await self._admission.admitted(request.source, request.deadline, starts_now, fits):
            raise EngineBusy("the model is busy: the requests ahead would not be done in time")
        ahead = self._waiting + self._generating(gate)
        self._waiting += 1
        if self._priming is not None:
            self._priming.set()  # a request goes first; it reuses what priming evaluated so far
        try:
            if ahead and request.deadline is not None:
                await acquire_in_time(gate, request.deadline, lambda left: self.queue.fits(0, left, self._running))
            else:
                await gate.acquire()
        finally:
            self._waiting -= 1
        if self._closed:
            gate.release()
            raise EngineError("the model engine was closed")

    def _start_worker(self, job: Job, gate: asyncio.Lock) -> None:
        """Run `job` in the worker; `gate` is released, and its time recorded, when it ends."""
        try:
            worker = asyncio.get_running_loop().run_in_executor(self._executor, self._run, job)
        except BaseException:
            gate.release()
            raise
        started = time.monotonic()
        self._running = RunningGeneration(started, job.request.deadline)

        def release(_: Any) -> None:
            # however it ended (done, cut, failed), that is how long the queue waited for it
            self.queue.record(time.monotonic() - started)
            self._running = None
            gate.release()

        worker.add_done_callback(release)

    def _generating(self, gate: asyncio.Lock) -> bool:
        """Whether a generation holds the model and goes on: priming gives way at once, and a
        generation whose consumer left ends at its next token."""
        if not gate.locked() or self._priming is not None:
            return False
        return self._cancel_current is None or not self._cancel_current.is_set()

    async def prime(self, request: GenerationRequest, *, keep_as: str | None = None) -> bool:
        """Evaluate the stable start of `request` (its messages, no generation prompt) while the
        engine is idle, so the next turn finds it in the KV cache; e.g. after the entity list changed.

        Skipped (False) when a request runs or waits. A request arriving meanwhile interrupts it
        and reuses whatever was evaluated so far. With `keep_as` (a name for this prefix, e.g. a
        persona) the primed state is also written to the data folder in the background, replacing
        the one kept under that name, and read back at the next start.
        """
        self._validate(request)
        gate = self._gate_for_running_loop()
        if gate.locked() or self._waiting:
            return False
        await gate.acquire()
        interrupt = threading.Event()
        self._priming = interrupt
        loop = asyncio.get_running_loop()
        try:
            primed = await loop.run_in_executor(self._executor, self._prime, request, interrupt, keep_as)
        finally:
            interrupt.set()
            self._priming = None
            gate.release()
        if isinstance(primed, SavedState) and keep_as is not None:
            self._kept.write(keep_as, primed)
        return primed is not False

    async def exclusive(self, work: Callable[[Llama], T]) -> T:
        """Run `work(llm)` in the engine's worker between requests and return its result: the one
        way for a bench or tool to use the raw `Llama` (and its context) without racing the engine."""
        if self._closed:
            raise EngineError("the model engine is closed")
        gate = self._gate_for_running_loop()
        async with gate:
            return await asyncio.get_running_loop().run_in_executor(self._executor, work, self._llm)

    async def wait_idle(self) -> None:
        """Return once no request runs or waits (and the last one's state is saved, in memory
        and, for a kept prefix, on disk)."""
        async with self._gate_for_running_loop():
            pass
        await self._kept.written()

    def _validate(self, request: GenerationRequest) -> None:
        if self._closed:
            raise EngineError("the model engine is closed")
        if not request.messages:
            raise EngineError("cannot generate from an empty message list")
        if request.max_tokens < 1:
            raise EngineError(f"max_tokens must be at least 1, not {request.max_tokens}")

    def _gate_for_running_loop(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate_loop is not loop:
            self._gate, self._gate_loop = asyncio.Lock(), loop
        return self._gate

    # --- the worker ----------------------------------------------------------------------------

    def _counting_eval(self, tokens: Sequence[int]) -> None:
        """`Llama.eval`, batch by batch, counting tokens and stopping early when cancelled."""
        for start in range(0, len(tokens), self._n_batch):
            if self._cancel_current is not None and self._cancel_current.is_set():
                raise Cancelled
            batch = tokens[start : start + self._n_batch]
            self._original_eval(batch)
            self._eval_count += len(batch)

    def _run(self, job: Job) -> None:
        self._cancel_current = job.cancelled
        try:
            self._generate(job)
            self._prompt_cache.save()  # after Done: the consumer does not wait for it
        except Cancelled:
            if self._closed:  # a consumer may still be waiting: tell it why nothing more comes
                job.emit(Failure(EngineError("the model engine was closed")))
            else:
                self._prompt_cache.save()  # what was evaluated is consistent: keep it
        except EngineError as err:
            job.emit(Failure(err))
        except Exception as err:  # llama.cpp failures surface as RuntimeError/ValueError
            _LOGGER.debug("generation failed", exc_info=True)
            job.emit(Failure(EngineError(f"the model failed while generating: {err}")))
        finally:
            self._cancel_current = None

    def _prime(self, request: GenerationRequest, interrupt: threading.Event,
               keep_as: str | None) -> SavedState | bool:
        """True, or the saved state to keep when `keep_as` is given; False when interrupted."""
        self._cancel_current = interrupt
        try:
            tokens = self.prompt_tokens(request, add_generation_prompt=False)
            if len(tokens) >= self.info.n_ctx:
                return False
            self._prompt_cache.restore_best(tokens)
            shared = common_prefix(resident_tokens(self._llm), np.asarray(tokens, dtype=np.intc))
            if shared < len(tokens):
                rewind(self._llm, shared)
                self._counting_eval(tokens[shared:])
            elif keep_as is None:
                return True
            elif self._llm.n_tokens > len(tokens):  # the state to keep holds this prefix alone
                drop_from(self._llm, len(tokens))
            saved = self._prompt_cache.save()
            if keep_as is None or saved is None:
                return True
            self._kept.keep(keep_as, saved)
            return saved
        except Cancelled:
            return False
        finally:
            self._cancel_current = None

    def _generate(self, job: Job) -> None:
        started = time.perf_counter()
        request = job.request
        grammar = tool_call_grammar(request.tools, request.constraint) if request.constraint else None
        rendered, tokens = self._prompt.evaluated(request)
        n_ctx = self.info.n_ctx
        if len(tokens) >= n_ctx:
            raise PromptTooLong(
                f"the prompt is {len(tokens)} tokens, more than the context window of {n_ctx} (n_ctx): "
                f"shorten the history or raise n_ctx"
            )
        self._cached_before_last_request = self._llm.n_tokens
        self._prompt_cache.restore_best(tokens)  # another conversation may have evicted this one
        if _LOGGER.isEnabledFor(logging.DEBUG):
            _LOGGER.debug("prompt: %d tokens, %d shared with the KV cache", len(tokens),
                          common_prefix(resident_tokens(self._llm), np.asarray(tokens, dtype=np.intc)))
        if grammar is not None:
            self._generation.constrained(job, tokens, grammar, started)
        else:
            self._generation.free(job, tokens, rendered, started)


def _digest_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
