"""Serving with the stand-in while the configured model downloads, then switching to it.

`ModelUpgrade.run()` fetches the file (hub.llm.download) in a thread, loads it in a thread (its own
llama context and worker: one thread per context, as every engine), and hands the loaded engine to
`switch`, which primes it and makes it the one every later turn uses (the composition root's
job: the agent holds the engine). A failure leaves the stand-in serving and says why; a transient
one (offline, a cut connection, a full disk, an error nobody foresaw) is tried again after
`retry_s`. A file that does not load is noted (hub.llm.model_source): the next start does not
load it again until it, or the way it is loaded, changes.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Awaitable, Callable

from hub.llm.download import fetch, short_error
from hub.llm.download_progress import DownloadCancelled, DownloadFailed, DownloadProgress
from hub.llm.model_source import ModelSource, record_load_failure
from hub.llm.types import Engine

_LOGGER = logging.getLogger(__name__)


class ModelUpgrade:
    def __init__(self, source: ModelSource, load: Callable[[Path], Engine],
                 switch: Callable[[Engine], Awaitable[None]], *, setup: str, retry_s: float = 300.0) -> None:
        self.progress = DownloadProgress(source)
        self._source = source
        self._setup = setup  # how the file is loaded (hub.llm.factory.load_setup): a failure is noted with it
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
            except Exception as err:  # EngineError, or llama.cpp's own
                await asyncio.to_thread(self._note_load_failure, str(err))
                self._failed(load_failed(self._source, str(err)))
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
            except Exception as err:  # a bug must not leave /health at "verifying" with nothing retried
                _LOGGER.exception("the model download failed")
                self._failed(DownloadFailed("error", f"The download of {self._source.label} failed "
                                                     f"({short_error(err)}). The hub tries again in a few minutes.",
                                            transient=True))
            await asyncio.sleep(self._retry_s)

    def _note_load_failure(self, error: str) -> None:
        try:
            record_load_failure(self._source, self._setup, error)
        except OSError as err:
            _LOGGER.error("could not note that %s does not load (%s): the next start tries it once more",
                          self._source.label, err)

    def _failed(self, error: DownloadFailed) -> None:
        self.progress.failed(error)
        _LOGGER.error("model download failed (%s): %s", error.reason, error)


def load_failed(source: ModelSource, error: str) -> DownloadFailed:
    """A downloaded file that llama.cpp does not load: what the page and /health say."""
    return DownloadFailed("load_failed", f"{source.label} could not be loaded: {error}. The stand-in keeps "
                                         "serving; the file is not loaded again until it changes (or llama-cpp-"
                                         "python, n_ctx, n_gpu_layers or kv_cache_type do).")
