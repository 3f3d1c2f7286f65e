"""What the hub's memory is made of: its resident memory (RSS) split into parts.

The parts are measured each in its own way: the model's weights by the pages of its file that
are resident (`file_resident_bytes`, from /proc/self/smaps) plus any copy llama.cpp made of them,
its KV cache and the saved prompt states by the buffers holding them (written whole, so
resident), and the hub's own structures (templates, the home) by the Python objects reachable
from them (`object_bytes`: each object's `sys.getsizeof`, once). What no part claims is "the
rest": the interpreter, the libraries' code and data, language identification, llama.cpp's
compute buffers as far as they were touched, and the allocators' slack.

The hub's own memory is what it holds beside the model: RSS less the model's weights, its KV
cache and the prompt-state cache (the bar a box that also runs the model is sized by).
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import sys
import threading
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

MODEL_PARTS = ("weights", "kv_cache", "prompt_states")  # what the hub's own memory leaves out
# an object its container alone refers to, as `object_bytes` meets it: the container, the list of
# referents holding it, the loop's name for it and getrefcount's argument
_ONE_REFERENCE = 4
_MALLOC_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None)
# the code, and what runs it (an event loop reaches everything): not followed
_NOT_FOLLOWED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                 types.CodeType, types.FrameType, types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType,
                 asyncio.AbstractEventLoop, asyncio.Future, asyncio.Handle, threading.Thread)


def give_back() -> None:
    """Hand the allocator's free memory back to the system. glibc keeps what threads freed in
    their arenas: after the languages' preparation, 70-80 MiB of a served hub's RSS was free
    memory held so (`malloc_trim`; a no-op where the C library has none)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def resident_bytes(pid: int | str = "self") -> int:
    """The process's resident memory (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise OSError("no VmRSS in /proc/status")


def file_resident_bytes(path: Path, pid: int | str = "self") -> int:
    """The resident pages of the process's mappings of the file at `path`."""
    wanted, total, inside = str(path.resolve()), 0, False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):  # a mapping's first line
            inside = len(fields) > 5 and " ".join(fields[5:]) == wanted
        elif inside and fields[:1] == ["Rss:"]:
            total += int(fields[1]) * 1024
    return total


def object_bytes(roots: Iterable[object], counted: set[int] | None = None) -> int:
    """Bytes of the Python objects reachable from `roots`, each once: not through modules,
    classes or functions (the code), nor through an object in `counted` (another part's; the
    ones found here are added to it). A dict's string keys are not counted (the garbage
    collector's traversal passes them by): names shared by many, mostly.

    Only objects more than one reference leads to are noted in `counted` (one only its
    container leads to is met once): the ids of every object reached were millions of ints,
    and the memory they took stayed with the process (up to +100 MiB over a few walks)."""
    counted = set() if counted is None else counted
    total, pending = 0, list(roots)
    while pending:
        found = []
        for item in pending:
            if isinstance(item, _NOT_FOLLOWED) or id(item) in counted:
                continue
            if sys.getrefcount(item) > _ONE_REFERENCE:
                counted.add(id(item))
            total += sys.getsizeof(item)
            found.append(item)
        pending = gc.get_referents(*found)
    return total


@dataclass
class MemoryReport:
    """The process's RSS and the parts measured in it (bytes); `detail`: a part's own split."""

    resident: int
    parts: dict[str, int]
    detail: dict[str, dict[str, int]] = field(default_factory=dict)
    languages: dict[str, str] = field(default_factory=dict)  # each prepared language: "full" | "compact"

    @property
    def rest(self) -> int:
        return self.resident - sum(self.parts.values())

    @property
    def own(self) -> int:
        """The hub's own memory: RSS less the model's weights, KV cache and prompt states."""
        return self.resident - sum(self.parts.get(part, 0) for part in MODEL_PARTS)

    def as_json(self) -> dict[str, object]:
        return {"rss": self.resident, "own": self.own, "parts": {**self.parts, "rest": self.rest},
                "detail": self.detail, "languages": self.languages}
