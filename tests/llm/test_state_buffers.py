"""Saved prompt states give their memory back when evicted (issue #30: the served hub's RSS rose
in steps after its prompt-state cache had filled).

States of a few MiB taken from malloc went into glibc's heaps once the first one was freed (its
mmap threshold slides up to the largest chunk freed), and the holes evicted states left kept
the process growing. Each state now lives in a mapping of its own (`state_buffer`). The
replay below is the cache's life in a served hub: states of 6–15 MiB saved from a worker thread
under a 32 MiB cap, each save evicting the oldest, with the other allocations of a turn in
between; the process holds no more than the live states and a little slack."""

from __future__ import annotations

import mmap
import os
import random
import threading

import numpy as np

from hub.llm import kv_cache
from hub.llm.kv_cache import PrefixStateCache, state_buffer

CAP = 32 * 2**20
SLACK_MIB = 20  # besides the live states: the turns' other allocations and allocator rounding


def rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_a_state_buffer_is_a_writable_mapping_of_its_own() -> None:
    data = state_buffer(3 * 2**20 + 5)
    assert data.nbytes == 3 * 2**20 + 5 and data.dtype == np.uint8 and data.flags.writeable
    base = data
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def replay(saves: int = 300) -> list[tuple[float, float]]:
    """(RSS above the start, live state MiB) after each save, from a worker thread."""
    cache = PrefixStateCache(None, max_bytes=CAP)  # type: ignore[arg-type]  # add/evict only
    rng = random.Random(30)
    start = rss_mib()
    points: list[tuple[float, float]] = []
    others: list[bytearray] = []

    def run() -> None:
        for number in range(saves):
            size = rng.randint(6 * 2**20, 15 * 2**20)
            data = kv_cache.state_buffer(size)
            data[:] = 1  # llama.cpp writes every byte of it
            cache.add(np.arange(number * 1000, number * 1000 + 600, dtype=np.intc), data)
            others.append(bytearray(rng.randint(1_000, 300_000)))  # a turn's other allocations
            if len(others) > 40:
                others.pop(rng.randrange(len(others)))
            points.append((rss_mib() - start, cache.total_bytes / 2**20))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return points


def test_evicted_states_give_their_memory_back() -> None:
    """From malloc (np.empty), this replay held 95 MiB beyond the live states; now under 20."""
    points = replay()
    worst = max(above - live for above, live in points)
    assert worst <= SLACK_MIB, f"{worst:.0f} MiB held beyond the live states (curve: {points[::30]})"
