"""Serving with the stand-in while the configured model downloads, then switching to it.

`ModelUpgrade.run()` fetches the file (hub.llm.download) in a thread, loads it in a thread (its own
llama context and worker: one thread per context, as every engine), and hands the loaded engine to
`switch`, which primes it and makes it the one every later turn uses (the composition root's
job: the agent holds the engine). A failure leaves the stand-in serving and says why; a transient
one (offline, a cut connection) is tried again after `retry_s`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Awaitable, Callable

from hub.llm.download import DownloadCancelled, DownloadFailed, DownloadProgress, ModelSource, fetch
from hub.llm.types import Engine, EngineError

_LOGGER = logging.getLogger(__name__)


class ModelUpgrade:
    def __init__(self, source: ModelSource, load: Callable[[Path], Engine],
                 switch: Callable[[Engine], Awaitable[None]], *, retry_s: float = 300.0) -> None:
        self.progress = DownloadProgress(source)
        self._source = source
        self._load = load
        self._switch = switch
        self._retry_s = retry_s

    @property
    def running(self) -> bool:
        return self.progress.state not in ("done", "failed")

    async def run(self) -> None:
        """Download, load, switch; never raises but for cancellation."""
        try:
            path = await self._fetched()
            if path is None:
                return
            self.progress.enter("loading")
            _LOGGER.info("%s downloaded and checked: loading it", self._source.label)
            try:
                engine = await asyncio.to_thread(self._load, path)
            except EngineError as err:
                self._failed(DownloadFailed("load_failed", f"{self._source.label} could not be loaded: {err}. "
                                                           "The stand-in keeps serving."))
                return
            self.progress.enter("priming")
            await self._switch(engine)
            self.progress.enter("done")
            _LOGGER.info("switched to %s (%s)", engine.info.name, path)
        finally:
            self.progress.cancelled = True  # a thread still running (cancelled) ends at its next chunk

    async def _fetched(self) -> Path | None:
        while True:
            _LOGGER.info("downloading the model %s into %s (the stand-in serves meanwhile)",
                         self._source.label, self._source.path.parent)
            try:
                return await asyncio.to_thread(fetch, self._source, self.progress)
            except DownloadCancelled:
                return None
            except DownloadFailed as err:
                self._failed(err)
                if not err.transient:
                    return None
            await asyncio.sleep(self._retry_s)

    def _failed(self, error: DownloadFailed) -> None:
        self.progress.failed(error)
        _LOGGER.error("model download failed (%s): %s", error.reason, error)
