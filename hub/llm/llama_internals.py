"""Every use of llama-cpp-python beyond its public `Llama` API, in one module.

The hub needs what the high-level API does not offer: the KV cache's sequence states
(`llama_state_seq_*`: milliseconds, where `save_state` copies the whole logits array), rewinding
the KV cache to a position, a sampler and a batch decoded with logits at chosen positions
(prompt-lookup drafts), the vocabulary's token attributes and end-of-generation tokens, the
model's trained context and size, llama.cpp's log, the model parameters' extra buffer types, and
counting what `Llama.generate` evaluates. Each is a small function here, so a new
llama-cpp-python release is checked in one place: tests/llm/test_llama_internals.py fails when
the installed one lacks a name, a signature or a behaviour these rely on.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import re
import threading
from typing import Any, Callable, Iterator, Sequence

import llama_cpp
import llama_cpp.llama_cpp as low_level
import numpy as np
from llama_cpp import Llama
from llama_cpp._internals import LlamaSampler
from llama_cpp.llama_grammar import LlamaGrammar

_LLAMA_LOGGER = logging.getLogger("hub.llm.llama_cpp")
_PARAMS_PATCH = threading.Lock()

KV_TYPES = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0, "q4_0": llama_cpp.GGML_TYPE_Q4_0}
_CONTROL = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN


# --- loading ------------------------------------------------------------------------------------


@llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]  # ctypes types CFUNCTYPE's instances loosely
def _llama_log(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
    recording: dict[str, int] | None = getattr(_BUFFERS, "sizes", None)
    if recording is None and not _LLAMA_LOGGER.isEnabledFor(logging.DEBUG):
        return
    line = text.decode("utf-8", errors="replace").rstrip()
    _LLAMA_LOGGER.debug("%s", line)
    found = _BUFFER_LINE.search(line) if recording is not None else None
    if recording is not None and found is not None and _in_host_memory(found[1]):
        kind = _BUFFER_KINDS[found[2]] if found[1] != "CPU_Mapped" else "weights_mapped"
        recording[kind] = recording.get(kind, 0) + round(float(found[3]) * 2**20)


# llama.cpp's "load_tensors: CPU_REPACK model buffer size = 12.66 MiB", "llama_kv_cache: CPU KV
# buffer size = …", "sched_reserve: CPU compute buffer size = …" (CPU_Mapped: the file's pages)
_BUFFER_LINE = re.compile(r"(\S+)\s+(model|KV|compute|output) buffer size\s*=\s*([\d.]+) MiB")
_BUFFER_KINDS = {"model": "weights", "KV": "kv_cache", "compute": "compute", "output": "compute"}
_BUFFERS = threading.local()


def _in_host_memory(buffer: str) -> bool:
    """Whether a llama.cpp buffer type holds host memory (CPU, CPU_REPACK, CUDA_Host), not a GPU's."""
    return buffer.startswith("CPU") or buffer.endswith("_Host")


@contextlib.contextmanager
def buffer_sizes() -> Iterator[dict[str, int]]:
    """The host memory llama.cpp allocates in this thread meanwhile (its log says it), in bytes
    by kind: weights (copies of the file's: repacked, or read without mmap), weights_mapped (the
    file's mapping: resident as far as it was read), kv_cache, compute (allocated; resident as
    far as used)."""
    sizes: dict[str, int] = {}
    _BUFFERS.sizes = sizes
    try:
        yield sizes
    finally:
        _BUFFERS.sizes = None


def log_to_debug() -> None:
    """llama.cpp's own chatter goes to debug logging (`hub.llm.llama_cpp`), never to stderr."""
    llama_cpp.llama_log_set(_llama_log, ctypes.c_void_p(0))


@contextlib.contextmanager
def without_extra_buffer_types() -> Iterator[None]:
    """While loading a `Llama`: `use_extra_bufts` false (llama-cpp-python has no argument for it)."""
    with _PARAMS_PATCH:
        default = low_level.llama_model_default_params

        def params():  # type: ignore[no-untyped-def]
            values = default()
            values.use_extra_bufts = False
            return values

        low_level.llama_model_default_params = params
        try:
            yield
        finally:
            low_level.llama_model_default_params = default


def trained_context(llm: Llama) -> int:
    return llm._model.n_ctx_train()


def parameter_count(llm: Llama) -> int:
    return llm._model.n_params()


# --- the vocabulary -------------------------------------------------------------------------------


def adds_bos(llm: Llama) -> bool:
    """Whether the model's prompts start with its BOS token."""
    return bool(llm._model.add_bos_token()) and llm.token_bos() >= 0


def token_text(llm: Llama, token: int) -> str:
    """A token's text as the vocabulary holds it ("" for none, -1)."""
    return llm._model.token_get_text(token) if token >= 0 else ""


def control_token_test(llm: Llama) -> Callable[[int], bool]:
    """Whether a token is a control (or unknown) token: markup, never text."""
    vocab = llm._model.vocab
    return lambda token: bool(llama_cpp.llama_vocab_get_attr(vocab, token) & _CONTROL)


def end_of_generation_test(llm: Llama) -> Callable[[int], bool]:
    vocab = llm._model.vocab
    return lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))


# --- the KV cache ---------------------------------------------------------------------------------


def resident_tokens(llm: Llama) -> np.ndarray:
    """The tokens whose KV entries the context holds now, in order (a view)."""
    return np.asarray(llm.input_ids[: llm.n_tokens], dtype=np.intc)


def rewind(llm: Llama, position: int) -> None:
    """The next `eval` goes on from `position`: it drops the KV entries from there first."""
    llm.n_tokens = position


def drop_from(llm: Llama, position: int, seq_id: int = -1) -> None:
    """Drop the KV entries from `position` on, now."""
    llm._ctx.kv_cache_seq_rm(seq_id, position, -1)
    llm.n_tokens = position


def count_evaluations(llm: Llama, evaluate: Callable[[Sequence[int]], None]) -> Callable[[Sequence[int]], None]:
    """Route what `Llama.generate` evaluates through `evaluate`; returns the original `eval`,
    which `evaluate` calls."""
    original = llm.eval
    llm.eval = evaluate  # type: ignore[method-assign, assignment]
    return original


def sequence_state_size(llm: Llama, seq_id: int) -> int:
    """Bytes of a sequence's serialized KV state."""
    return int(llama_cpp.llama_state_seq_get_size(llm._ctx.ctx, seq_id))


def read_sequence_state(llm: Llama, seq_id: int, into: np.ndarray) -> np.ndarray:
    """A sequence's serialized KV state, written into `into` (uint8, `sequence_state_size`
    bytes): the part written (empty when llama.cpp could not write it)."""
    written = llama_cpp.llama_state_seq_get_data(llm._ctx.ctx, _pointer(into), into.nbytes, seq_id)
    return into[:written]


def write_sequence_state(llm: Llama, seq_id: int, tokens: np.ndarray, data: np.ndarray) -> bool:
    """Load a state `read_sequence_state` gave (for `tokens`) and put the llama in step with it.
    False: llama.cpp refused it, and the context starts from nothing."""
    ok = llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, _pointer(data), data.nbytes, seq_id)
    if ok == 0:  # the sequence may be half-cleared now
        llm._ctx.kv_cache_seq_rm(seq_id, -1, -1)
        llm.reset()
        return False
    n = len(tokens)
    llm.input_ids[:n] = tokens
    llm.n_tokens = n
    llm._requires_eval = True  # logits are not part of the saved state
    return True


def _pointer(array: np.ndarray) -> ctypes._Pointer[ctypes.c_uint8]:
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))


# --- sampling at chosen positions (prompt-lookup drafts) ------------------------------------------


def new_sampler(llm: Llama, grammar: LlamaGrammar | None, sampling: dict[str, Any]) -> LlamaSampler:
    """A sampler as `Llama.generate` builds one (the llama keeps it, as generate does)."""
    sampler: LlamaSampler = llm._init_sampler(grammar=grammar, **sampling)
    llm._sampler = sampler  # type: ignore[assignment]  # declared None; generate sets it the same way
    return sampler


def sample_at(llm: Llama, sampler: LlamaSampler, position: int) -> int:
    """A token sampled from the logits of the last batch's `position` (-1: its last)."""
    return sampler.sample(llm._ctx, position)


def decode_with_logits(llm: Llama, batch: list[int], n_past: int) -> None:
    """Decode `batch` after the first `n_past` tokens, with logits at every position."""
    llm._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llm._batch.set_batch(batch=batch, n_past=n_past, logits_all=True)
    llm._ctx.decode(llm._batch)
    llm.input_ids[n_past: n_past + len(batch)] = batch
    llm.n_tokens = n_past + len(batch)
    llm._requires_eval = False
