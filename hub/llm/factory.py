"""The engine the options ask for: the in-process llama.cpp model or a remote server."""

from __future__ import annotations

import asyncio

from hub.config import HubConfig
from hub.llm.types import Engine


async def create_engine(config: HubConfig) -> Engine:
    """`engine: local` loads the GGUF (in a thread: seconds); `engine: openai` checks that the
    remote server answers and learns its model. Raises EngineError with a plain reason."""
    if config.engine == "openai":
        from hub.llm.openai_engine import OpenAIEngine

        remote = OpenAIEngine.from_config(config)
        try:
            await remote.connect()
        except BaseException:
            await remote.close()
            raise
        return remote
    from hub.llm.llama_engine import LlamaEngine

    return await asyncio.to_thread(LlamaEngine.from_config, config)
