"""Loading a GGUF into llama-cpp-python with the hub's settings, its failures as EngineErrors.

GPU: `n_gpu_layers` is passed through to llama.cpp; it only has an effect when llama-cpp-python
was built with a GPU backend, e.g. `CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=87"`
(Jetson Orin) at `pip install` time. Images for other CPUs need `-DGGML_NATIVE=OFF`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from llama_cpp import Llama

from hub.llm.amx import extra_buffers_fail, without_extra_buffers
from hub.llm.inspect import GGUFReport, inspect_gguf
from hub.llm.llama_internals import KV_TYPES, buffer_sizes, log_to_debug, parameter_count, trained_context
from hub.memory import file_resident_bytes
from hub.llm.types import EngineError, ModelInfo

_LOGGER = logging.getLogger(__name__)
log_to_debug()


@dataclass(frozen=True)
class LoadedModel:
    llm: Llama
    report: GGUFReport
    type_v: int  # the V cache's type: f16 when a quantized one needs flash attention that is off
    n_threads: int
    buffers: dict[str, int]  # llama.cpp's host memory by kind (`llama_internals.buffer_sizes`)

    def memory(self, path: Path) -> dict[str, int]:
        """The model's resident memory by part (`hub.memory`): its weights (the file's pages
        read, and any copy), KV cache and compute buffers (allocated: resident as far as used)."""
        return {"weights": file_resident_bytes(path) + self.buffers.get("weights", 0),
                "kv_cache": self.buffers.get("kv_cache", 0), "compute": self.buffers.get("compute", 0)}

    def info(self, path: Path, is_stand_in: bool) -> ModelInfo:
        llm = self.llm
        return ModelInfo(name=str(llm.metadata.get("general.name") or path.stem),
                         architecture=self.report.architecture, path=str(path), n_ctx=llm.n_ctx(),
                         n_ctx_train=trained_context(llm), n_params=parameter_count(llm), is_stand_in=is_stand_in,
                         languages=self.report.languages)


def _auto_threads() -> int:
    """One thread per core but one: llama.cpp's threads wait for each other by spinning, so with
    every core taken a turn crawls as soon as anything else (a test, the event loop, HA) runs."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def load_llama(path: Path, *, n_ctx: int, n_gpu_layers: int, threads: int, flash_attn: bool,
               kv_cache_type: str) -> LoadedModel:
    """The model at `path` with a context of `n_ctx` tokens (blocking: seconds)."""
    report = inspect_gguf(path, n_ctx=n_ctx, kv_cache_type=kv_cache_type)  # clear file errors
    if report.n_ctx_train and n_ctx > report.n_ctx_train:
        raise EngineError(
            f"n_ctx {n_ctx} is more than the {report.n_ctx_train} tokens {path.name} was trained for: "
            f"set n_ctx to {report.n_ctx_train} or less"
        )
    type_v = KV_TYPES[kv_cache_type]
    if kv_cache_type != "f16" and not flash_attn:
        _LOGGER.warning("a quantized V cache needs flash_attn: keeping V at f16, K at %s", kv_cache_type)
        type_v = KV_TYPES["f16"]
    n_threads = threads or _auto_threads()
    try:
        with without_extra_buffers(extra_buffers_fail(path)), buffer_sizes() as buffers:
            llm = Llama(
                str(path),
                n_ctx=n_ctx,
                n_gpu_layers=n_gpu_layers,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                flash_attn=flash_attn,
                type_k=KV_TYPES[kv_cache_type],
                type_v=type_v,
                verbose=False,
            )
    except ValueError as err:
        if "context" in str(err).lower():
            raise EngineError(
                f"could not set up a {n_ctx}-token context for {path.name}: not enough memory? "
                f"Lower n_ctx or use kv_cache_type q8_0"
            ) from None
        raise EngineError(
            f"could not load {path}: llama.cpp rejected it (corrupt or truncated file, or an "
            f"architecture ({report.architecture}) this llama-cpp-python build does not support)"
        ) from None
    return LoadedModel(llm, report, type_v, n_threads, buffers)
