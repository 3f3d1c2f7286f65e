"""Primed prefix states on disk, so the first turn after a restart is as warm as the others.

Priming a persona's stable prefix (instructions, tools, the home) takes seconds on a CPU, and a
turn that arrives meanwhile pays the whole prefill. So each primed state (llama.cpp's sequence
state, as the prompt cache keeps it in memory) is also written to the data folder, one file per
primed prefix (`slot`: a persona), and read back at start.

A file carries what makes its state valid: the model file (path, size, modification time), the
llama-cpp-python version and KV cache layout, the chat format, and the prompt's tokens. A file
made for anything else is deleted; one that does not read back whole (checked by a digest) is set
aside (hub.state_files: moved, the newest one kept) and reported; neither is ever loaded. A loaded
state is only ever used for the tokens it shares with a prompt (the prompt cache matches by
tokens), so a changed home evaluates from where its prompt differs. Writes are atomic and fsynced
(hub.state_files) and the folder stays under a byte cap: the slots written least recently go first.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hub.state_files import set_aside, write_atomic

_LOGGER = logging.getLogger(__name__)

MAGIC = "bolt-hub-prefix-state"
VERSION = 1
SUFFIX = ".kvstate"


@dataclass(frozen=True)
class StoredState:
    slot: str
    tokens: np.ndarray  # int32
    data: np.ndarray  # uint8, llama.cpp's serialized sequence state


def model_identity(path: Path, **layout: object) -> str:
    """What a saved KV state is only valid for: this model file under this KV layout."""
    stat = path.stat()
    fields = {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, **layout}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


class StateStore:
    """One folder of prefix states for one model identity and chat format, under `max_bytes`."""

    def __init__(self, folder: Path, identity: str, chat_format: str, max_bytes: int) -> None:
        self.folder = folder
        self._header = {"magic": MAGIC, "version": VERSION, "model": identity, "format": chat_format}
        self.max_bytes = max_bytes
        self._digests: dict[str, str] = {}  # slot → digest of the file written or read for it

    def load(self) -> list[StoredState]:
        """The states saved for this model and format; every other file is deleted."""
        try:
            paths = sorted(self.folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime_ns)
        except OSError:
            return []
        states = []
        for path in paths:
            state = self._read(path)
            if state is None:
                _LOGGER.info("discarding %s: saved for another model, format or version", path.name)
                _remove(path)
            elif isinstance(state, str):
                try:
                    set_aside(path, state, "its prompt is primed again", move=True, keep=1)
                except OSError as err:
                    _LOGGER.warning("could not set aside the damaged %s (%s): deleting it", path, err)
                    _remove(path)
            else:
                states.append(state)
                self._digests[state.slot] = _digest(state.tokens, state.data)
        return states

    def save(self, slot: str, tokens: np.ndarray, data: np.ndarray) -> bool:
        """Write `slot`'s state (replacing its previous one); False when it does not fit the cap
        or the folder cannot be written. Skips the write when the file already holds it."""
        tokens = np.asarray(tokens, dtype=np.intc)
        digest = _digest(tokens, data)
        if self._digests.get(slot) == digest:
            return True
        size = tokens.nbytes + data.nbytes
        if size > self.max_bytes:
            _LOGGER.info("not saving the %s prefix state to disk: %d MiB is over the cap", slot, size >> 20)
            return False
        path = self._path(slot)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._make_room(size, keep=path)
            header = {**self._header, "slot": slot, "n_tokens": int(tokens.size), "n_bytes": int(data.nbytes),
                      "sha256": digest}
            # a partial file would keep a full disk full: write_atomic leaves none
            write_atomic(path, [json.dumps(header).encode() + b"\n", tokens.tobytes(),
                                np.ascontiguousarray(data).data])
        except OSError as err:
            _LOGGER.warning("could not save a prefix state in %s: %s", self.folder, err)
            return False
        self._digests[slot] = digest
        _LOGGER.debug("saved the %s prefix state (%d tokens, %.1f MiB)", slot, tokens.size, size / 2**20)
        return True

    def _path(self, slot: str) -> Path:
        return self.folder / (hashlib.sha256(slot.encode()).hexdigest()[:24] + SUFFIX)

    def _make_room(self, size: int, keep: Path) -> None:
        others = sorted((p for p in self.folder.glob(f"*{SUFFIX}") if p != keep), key=lambda p: p.stat().st_mtime_ns)
        total = sum(p.stat().st_size for p in others)
        while others and total + size > self.max_bytes:
            oldest = others.pop(0)
            total -= oldest.stat().st_size
            _remove(oldest)

    def _read(self, path: Path) -> StoredState | str | None:
        """The state; None: made for another model, format or version; else what is damaged."""
        try:
            with open(path, "rb") as source:
                header = json.loads(source.readline(1 << 16))
                if not isinstance(header, dict):
                    return "its header is not the hub's"
                if any(header.get(k) != v for k, v in self._header.items()):
                    return None
                tokens = np.frombuffer(source.read(4 * int(header["n_tokens"])), dtype=np.intc)
                data = np.frombuffer(source.read(int(header["n_bytes"])), dtype=np.uint8)
                if source.read(1):
                    return "it is longer than its header says"
        except (OSError, ValueError, KeyError, TypeError) as err:
            return f"it cannot be read ({type(err).__name__})"
        if tokens.size != header["n_tokens"] or data.size != header["n_bytes"] or not tokens.size:
            return "it is cut short"
        if _digest(tokens, data) != header["sha256"] or not isinstance(header.get("slot"), str):
            return "its checksum does not match"
        return StoredState(header["slot"], tokens, data)


def _digest(tokens: np.ndarray, data: np.ndarray) -> str:
    digest = hashlib.sha256(np.asarray(tokens, dtype=np.intc).tobytes())
    digest.update(np.ascontiguousarray(data).data)
    return digest.hexdigest()


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
