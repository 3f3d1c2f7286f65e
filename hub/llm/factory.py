"""The engine the options ask for: the in-process llama.cpp model or a remote server."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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
    remote_api_key: str | None
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
    return await asyncio.to_thread(local_engine, options)


def local_engine(options: EngineOptions) -> "LlamaEngine":
    """The GGUF model (blocking: seconds)."""
    from hub.llm.llama_engine import LlamaEngine

    try:
        path, stand_in = resolve_model_path(options.model_path)
    except ModelNotFound as err:
        raise EngineError(str(err)) from None
    if stand_in:
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
