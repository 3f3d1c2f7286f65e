"""Saved KV states, so each conversation's prefix survives the other conversations' turns.

llama-cpp-python keeps one KV cache and reuses the longest common token prefix with the
previous call: conversation B's turn throws away A's history from the cache, and A's next turn
pays for all of it again. So after each generation the engine saves the sequence's KV state
(`llama_state_seq_get_data`: a few ms for a 3,000-token prefix) keyed by its tokens, and before
the next generation it restores the saved state that shares the longest prefix with the new
prompt, when that beats what is resident (`llama_state_seq_set_data`: about 2 ms). The tokens
are the key, so the engine needs no conversation ids; least recently used states go first when
the memory cap is reached.

The high-level `Llama.save_state`/`LlamaRAMCache` are not used: they copy the whole logits
array (n_batch × vocabulary floats, 512 MiB for Gemma), which takes seconds.

Each saved state's bytes live in an anonymous mapping of their own (`state_buffer`), returned to
the system the moment the state is evicted. From malloc, a state of a few MiB went into glibc's
heaps once the first one was freed (its mmap threshold slides up to the largest chunk freed,
up to 32 MiB), and the holes evicted states left grew the process in steps: 635.6 MiB at turn
40 with the 32 MiB cache full, 710 at turn 200, 743 at turn 340 (`bench/bench_memory.py`).
"""

from __future__ import annotations

import itertools
import logging
import mmap
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from llama_cpp import Llama

from hub.llm.llama_internals import read_sequence_state, resident_tokens, sequence_state_size, write_sequence_state

_LOGGER = logging.getLogger(__name__)

# A restore must win at least this many tokens over what is resident to be worth it.
MIN_GAIN_TOKENS = 16
# A saved state that a newer one repeats up to its last few tokens is superseded by it
# (the previous turn of the conversation that just went on).
SUPERSEDE_SLACK_TOKENS = 16


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common prefix of two token arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if differ.size else n


@dataclass(eq=False)  # identity, never field equality: that would compare numpy arrays
class SavedState:
    tokens: np.ndarray  # int32, the tokens whose KV entries `data` holds
    data: np.ndarray  # uint8, llama.cpp's serialized sequence state
    last_used: int

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.tokens.nbytes)


class PrefixStateCache:
    """LRU store of one llama context's sequence states, under a byte cap (0 disables it).

    Works on a `Llama` object's sequence `seq_id` (0 is the one llama-cpp-python uses) and keeps
    `Llama.input_ids`/`n_tokens` in step with the KV cache after a restore, so llama-cpp-python's
    own prefix reuse (and evaluated-token counting) go on working.
    """

    def __init__(self, llm: Llama, max_bytes: int, *, seq_id: int = 0) -> None:
        self._llm = llm
        self.max_bytes = max(0, max_bytes)
        self._seq_id = seq_id
        self._states: list[SavedState] = []
        self._clock = itertools.count(1)
        self.restores = 0
        self.saves = 0

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    @property
    def states(self) -> tuple[SavedState, ...]:
        return tuple(self._states)

    @property
    def total_bytes(self) -> int:
        return sum(s.nbytes for s in self._states)

    def clear(self) -> None:
        self._states.clear()

    def resident_tokens(self) -> np.ndarray:
        return resident_tokens(self._llm)

    def restore_best(self, prompt: Sequence[int]) -> int:
        """Load the saved state sharing most of `prompt`, if it beats the resident one.

        Returns the number of prompt tokens the restored state covers (0: nothing restored).
        """
        if not self._states:
            return 0
        wanted = np.asarray(prompt, dtype=np.intc)
        resident = common_prefix(self.resident_tokens(), wanted)
        best, best_shared = None, resident
        for state in self._states:
            shared = common_prefix(state.tokens, wanted)
            if shared > best_shared:
                best, best_shared = state, shared
        if best is None or best_shared - resident < MIN_GAIN_TOKENS:
            return 0
        if not self._load(best):
            return 0
        best.last_used = next(self._clock)
        self.restores += 1
        _LOGGER.debug("restored a saved state of %d tokens (%d shared with the prompt, %d before)",
                      len(best.tokens), best_shared, resident)
        return best_shared

    def save(self) -> SavedState | None:
        """Save what the KV cache holds now (call after a generation); returns the saved state
        (None when the cache is off or the state does not fit)."""
        if not self.enabled or self._llm.n_tokens == 0:
            return None
        tokens = self.resident_tokens().copy()
        for state in self._states:
            if len(state.tokens) == len(tokens) and common_prefix(state.tokens, tokens) == len(tokens):
                state.last_used = next(self._clock)
                return state
        size = sequence_state_size(self._llm, self._seq_id)
        if size == 0 or size + tokens.nbytes > self.max_bytes:
            return None
        data = read_sequence_state(self._llm, self._seq_id, state_buffer(size))
        if not data.size:
            _LOGGER.warning("llama.cpp could not save a sequence state of %d tokens", len(tokens))
            return None
        return self.add(tokens, data)

    def add(self, tokens: np.ndarray, data: np.ndarray) -> SavedState | None:
        """Keep a state saved earlier (e.g. read from disk); None when it cannot fit the cap."""
        saved = SavedState(np.asarray(tokens, dtype=np.intc), data, next(self._clock))
        if not self.enabled or saved.nbytes > self.max_bytes:
            return None
        self._states = [s for s in self._states if not _superseded(s, saved)]
        self._states.append(saved)
        self.saves += 1
        self._evict()
        return saved

    def discard(self, state: SavedState) -> None:
        self._states = [s for s in self._states if s is not state]

    def _load(self, state: SavedState) -> bool:
        if not write_sequence_state(self._llm, self._seq_id, state.tokens, state.data):
            _LOGGER.warning("llama.cpp could not restore a saved state: dropping it")
            self.discard(state)
            return False
        return True

    def _evict(self) -> None:
        total = self.total_bytes
        while total > self.max_bytes and len(self._states) > 1:
            oldest = min(self._states, key=lambda s: s.last_used)
            self.discard(oldest)
            total -= oldest.nbytes


def state_buffer(size: int) -> np.ndarray:
    """`size` bytes (uint8) in an anonymous mapping of their own, unmapped when the last array
    viewing them goes (see the module docstring)."""
    return np.frombuffer(mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE), dtype=np.uint8)[:size]


def _superseded(old: SavedState, new: SavedState) -> bool:
    """The new state repeats the old one but for its last few tokens: a conversation went on."""
    return common_prefix(old.tokens, new.tokens) >= len(old.tokens) - SUPERSEDE_SLACK_TOKENS
