"""Each language's compiled templates kept on disk, so a start reads them instead of parsing;
and the language identifier's big table, mapped from disk.

Parsing a language's templates takes 0.5-4 s of CPU (all 35: about a minute); reading its
compiled copy back takes tens of milliseconds. A copy is used only when it was made from the
same inputs: the installed hassil and home-assistant-intents, the Python that packed it, and
the files the caller names (the hub's own templates, the older release, the code that compiles
them); any other copy is made again. Writes are atomic (`hub.state_files.write_atomic`); a
copy that cannot be read or written costs only the parse.

A table read by a few entries at a time (py3langid's automaton: 37 MiB, of which a request reads
a few rows) is written once and mapped (`mapped`): only the pages read are resident, and the
system may drop them again.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import pickle
import sys
from array import array
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TypeVar, cast

from hub.state_files import write_atomic

_LOGGER = logging.getLogger(__name__)

FORMAT = 1
_folder: Path | None = None  # set by the composition root (`use`); None: nothing on disk
Compiled = TypeVar("Compiled")


def use(folder: Path | None) -> None:
    """Keep compiled templates in `folder` (None: parse them at every start)."""
    global _folder
    _folder = folder


def compiled(code: str, build: Callable[[str], Compiled | None], inputs: Iterable[Path]) -> Compiled | None:
    """`build(code)`, or its copy on disk when one was made from the same `inputs`."""
    folder = _folder
    if folder is None:
        return build(code)
    path = folder / f"{code}.pickle"
    fingerprint = _fingerprint(code, inputs)
    found: Compiled | None = _read(path, fingerprint)
    if found is None:
        found = build(code)
        _write_compiled(path, fingerprint, found)
    return found


def _fingerprint(code: str, inputs: Iterable[Path]) -> str:
    digest = hashlib.sha256(f"{FORMAT} {code} {sys.version} {version('hassil')} "
                            f"{version('home-assistant-intents')}".encode())
    for path in inputs:
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.is_file() else b"-")
    return digest.hexdigest()


def _read(path: Path, fingerprint: str) -> Any:
    """What `path` holds if it was made from `fingerprint`'s inputs, else None."""
    try:
        with path.open("rb") as handle:
            return pickle.load(handle) if pickle.load(handle) == fingerprint else None
    except FileNotFoundError:
        return None
    except Exception as err:  # damaged or from another version: made again
        _LOGGER.warning("compiled templates %s unreadable (%s): parsing them again", path.name, err)
        return None


def mapped(name: str, table: array[int]) -> Sequence[int]:
    """`table` (of unsigned 32-bit ints) read from a mapping of its copy on disk (`name` says
    what made it), or `table` itself where there is no folder or the copy cannot be made."""
    folder = _folder
    if folder is None or table.typecode != "I":
        return table
    path = folder / f"{name}-{table.typecode}{len(table)}.bin"
    try:
        if not path.is_file() or path.stat().st_size != table.itemsize * len(table):
            write_atomic(path, [memoryview(table)])
        with path.open("rb") as handle:
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        return cast(Sequence[int], memoryview(mapping).cast("I"))  # read as the array reads
    except (OSError, ValueError) as err:
        _LOGGER.warning("could not map %s from %s: %s", name, folder, err)
        return table


def _write_compiled(path: Path, fingerprint: str, made: object) -> None:
    try:
        write_atomic(path, [pickle.dumps(fingerprint, protocol=pickle.HIGHEST_PROTOCOL),
                            pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL)])
    except OSError as err:
        _LOGGER.warning("could not keep %s in %s: %s", path.name, path.parent, err)
