"""The engine the options ask for: the in-process llama.cpp model or a remote server."""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hub.llm.model_source import ModelSource, load_failure, record_load_failure, verified_file
from hub.llm.models import STAND_IN_WARNING, ModelNotFound, resolve_model_path
from hub.llm.types import Engine, EngineError

if TYPE_CHECKING:  # imported when used: a remote engine never loads llama.cpp
    from hub.llm.llama_engine import LlamaEngine
    from hub.llm.openai_engine import OpenAIEngine

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineOptions:
    engine: str  # local | openai
    # local
    model_path: str | None
    model_repo: str | None  # downloaded when model_path is not set (hub.llm.download)
    model_file: str | None
    hf_token: str | None = field(repr=False)
    n_ctx: int
    n_gpu_layers: int
    threads: int
    flash_attn: bool
    kv_cache_type: str
    constrained_tools: str
    queue_size: int
    prompt_cache_mib: int
    draft_tokens: int
    state_dir: Path
    # openai
    remote_url: str | None
    remote_model: str | None
    remote_api_key: str | None = field(repr=False)
    remote_server: str
    turn_timeout: int


async def create_engine(options: EngineOptions) -> Engine:
    """`engine: local` loads the GGUF (in a thread: seconds); `engine: openai` checks that the
    remote server answers and learns its model. Raises EngineError with a plain reason."""
    if options.engine == "openai":
        remote = remote_engine(options)
        try:
            await remote.connect()
        except BaseException:
            await remote.close()
            raise
        return remote
    source = download_source(options)
    downloaded = verified_file(source) if source is not None else None
    if source is None or downloaded is None or load_failure(source, load_setup(options)) is not None:
        return await asyncio.to_thread(local_engine, options)
    try:
        return await asyncio.to_thread(local_engine, options, downloaded)
    except EngineError as err:  # noted, so that no start loads it again: the stand-in serves
        _LOGGER.error("%s could not be loaded (%s): serving with the stand-in", source.label, err)
        try:
            record_load_failure(source, load_setup(options), str(err))
        except OSError as failed:
            _LOGGER.error("could not note that %s does not load: %s", source.label, failed)
        return await asyncio.to_thread(local_engine, options)


def load_setup(options: EngineOptions) -> str:
    """How a downloaded file is loaded: a load that failed is tried again when this changes."""
    try:
        version = importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return (f"llama-cpp-python {version}, n_ctx {options.n_ctx}, n_gpu_layers {options.n_gpu_layers}, "
            f"kv_cache_type {options.kv_cache_type}")


def download_source(options: EngineOptions) -> ModelSource | None:
    """The repository file to download: with `model_repo` and no `model_path`, for a local engine."""
    if options.engine != "local" or options.model_path or not options.model_repo:
        return None
    if not options.model_file:
        raise EngineError(f"model_repo is {options.model_repo} but model_file is not set: name the GGUF file "
                          "in the repository (e.g. name-Q4_K_M.gguf)")
    return ModelSource(options.model_repo, options.model_file, options.hf_token,
                       options.state_dir / "models")


def local_engine(options: EngineOptions, model_path: Path | None = None) -> "LlamaEngine":
    """The GGUF model (blocking: seconds): `model_path` (a downloaded file), else the option's
    file, else the stand-in (meanwhile a download, if one is configured, runs)."""
    from hub.llm.llama_engine import LlamaEngine

    try:
        path, stand_in = (model_path, False) if model_path is not None else resolve_model_path(options.model_path)
    except ModelNotFound as err:
        raise EngineError(str(err)) from None
    if stand_in and options.model_repo:
        _LOGGER.info("serving with the stand-in SmolLM2-135M-Instruct until %s/%s is downloaded",
                     options.model_repo, options.model_file)
    elif stand_in:
        _LOGGER.warning(STAND_IN_WARNING)
    return LlamaEngine(
        path,
        n_ctx=options.n_ctx,
        n_gpu_layers=options.n_gpu_layers,
        threads=options.threads,
        flash_attn=options.flash_attn,
        kv_cache_type=options.kv_cache_type,
        constrained_tools=options.constrained_tools,
        queue_size=options.queue_size,
        prompt_cache_mib=options.prompt_cache_mib,
        draft_tokens=options.draft_tokens,
        is_stand_in=stand_in,
        state_dir=options.state_dir / "prefix_states",
    )


def remote_engine(options: EngineOptions) -> "OpenAIEngine":
    """The remote server's client, not yet connected."""
    from hub.llm.openai_engine import NVIDIA_URL, OpenAIEngine

    server = options.remote_server
    url = options.remote_url or (NVIDIA_URL if server == "nvidia" else None)
    if not url:
        raise EngineError("engine is 'openai' but remote_url is not set (e.g. http://gpu-box:8080/v1)")
    return OpenAIEngine(url, model=options.remote_model, api_key=options.remote_api_key, server=server,
                        constrained_tools=options.constrained_tools, n_ctx=options.n_ctx,
                        queue_size=options.queue_size, timeout_s=float(options.turn_timeout) * 2)
