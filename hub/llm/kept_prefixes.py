"""Primed prefixes kept by name (a persona): one state each in the prompt cache, and on disk."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from hub.llm.kv_cache import PrefixStateCache, SavedState, common_prefix
from hub.llm.state_store import StateStore

_LOGGER = logging.getLogger(__name__)


class KeptPrefixes:
    """The primed state last kept under each name. With a store, each one is also written to the
    data folder in the background, and the states found there go into the prompt cache at start."""

    def __init__(self, cache: PrefixStateCache, store: StateStore | None) -> None:
        self._cache = cache
        self._store = store
        self._kept: dict[str, SavedState] = {}
        self._disk = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefix-state-disk")
        self._writes: set[asyncio.Future[bool]] = set()
        if store is not None:
            for stored in store.load():
                state = cache.add(stored.tokens, stored.data)
                if state is not None:
                    self._kept[stored.slot] = state
            if self._kept:
                _LOGGER.info("read %d primed prefix state(s) from %s", len(self._kept), store.folder)

    def keep(self, name: str, saved: SavedState) -> None:
        """`saved` is now the state kept for `name` (in the engine's worker: it edits the cache)."""
        previous = self._kept.get(name)
        if previous is not None and previous is not saved and common_prefix(previous.tokens, saved.tokens) < len(previous.tokens):
            self._cache.discard(previous)  # kept for a prompt that is gone (the home changed)
        self._kept[name] = saved

    def write(self, name: str, state: SavedState) -> None:
        """Write `state` to the data folder in the background, replacing the one kept for `name`."""
        if self._store is None:
            return
        write = asyncio.get_running_loop().run_in_executor(self._disk, self._store.save, name, state.tokens,
                                                           state.data)
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    async def written(self) -> None:
        """Return once the writes started so far are done."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)

    async def close(self) -> None:
        """Finish the writes (the last primed state reaches the disk) and stop the writer."""
        await asyncio.to_thread(self._disk.shutdown, wait=True)
