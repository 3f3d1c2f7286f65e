"""The files the hub keeps in its state folder (names, settings, lists, timers, prompt states, the
model's notes, the API token), written and read back one way.

A write is atomic and durable: a temporary file beside the target, flushed and fsynced, renamed
over it, then the folder fsynced, so a crash or a power cut leaves the old file or the new one,
never a mix. A file that does not read back (cut short, edited by hand, a failing disk) is never
silently dropped: its content is set aside beside it (`names.json.damaged-<UTC time>`, the newest
few kept), the log says what the hub made of it, and `set_aside_under` lists it for `/health`
and the page. What could be read is written back at once, so the next start reads the same;
a file whose content could not be set aside is not written over.

The list of files set aside is kept per process, not handed down: the files are read by parts
built deep inside the composition (the engine's prompt states, the timers), and each hub asks
for those under its own state folder.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Iterable, TypeVar

_LOGGER = logging.getLogger(__name__)

DAMAGED = ".damaged-"  # names.json → names.json.damaged-20261215-101500
KEPT_COPIES = 3  # set-aside copies kept per file: a disk that damages a file at every start stays bounded
T = TypeVar("T")


@dataclass(frozen=True)
class SetAside:
    """A state file the hub could not use as it was."""

    path: Path
    copy: Path | None  # where its content is now; None: not copied (`outcome` says what became of it)
    problem: str  # what was wrong with it
    outcome: str  # what the hub does instead
    at: float  # time.time()


_ledger: list[SetAside] = []
_ledger_lock = threading.Lock()


def set_aside_under(folder: Path) -> list[SetAside]:
    """The files set aside under `folder` since this process started, oldest first."""
    root = folder.resolve()
    with _ledger_lock:
        return [entry for entry in _ledger if entry.path.resolve().is_relative_to(root)]


def record(entry: SetAside) -> None:
    """Remember and log a file set aside (or a leftover deleted)."""
    with _ledger_lock:
        _ledger.append(entry)
    kept = f" (kept as {entry.copy.name})" if entry.copy is not None else ""
    _LOGGER.error("damaged %s%s: %s; %s", entry.path, kept, entry.problem, entry.outcome)


def set_aside(path: Path, problem: str, outcome: str, *, move: bool = False, keep: int = KEPT_COPIES) -> SetAside:
    """Keep `path`'s content beside it under a `.damaged-<time>` name (a copy, or the file itself
    with `move`: a large one), drop older copies but the newest `keep`, and record it. Raises
    OSError when the content cannot be kept (then the file stays as it is)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    copy = path.with_name(f"{path.name}{DAMAGED}{stamp}")
    count = 1
    while copy.exists():
        copy, count = path.with_name(f"{path.name}{DAMAGED}{stamp}-{count}"), count + 1
    if move:
        os.replace(path, copy)
    else:
        write_atomic(copy, path.read_bytes())
    _sync_folder(path.parent)
    for older in sorted(path.parent.glob(f"{path.name}{DAMAGED}*"), key=lambda p: p.stat().st_mtime_ns)[:-keep]:
        with contextlib.suppress(OSError):
            older.unlink()
    entry = SetAside(path, copy, problem, outcome, time.time())
    record(entry)
    return entry


def write_atomic(path: Path, content: bytes | Iterable[bytes | memoryview], *, mode: int = 0o644) -> None:
    """Write `content` (bytes, or chunks of them) as `path`, whole or not at all: OSError leaves
    the previous file and no temporary one."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.unlink(missing_ok=True)  # a leftover would keep its own mode
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(descriptor, "wb") as out:
            for chunk in [content] if isinstance(content, bytes) else content:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (some file systems cannot: then it is as durable as they are)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(descriptor)


@dataclass(frozen=True)
class Reading(Generic[T]):
    """What a part made of its file: the value, and what it had to leave out."""

    value: T
    problems: tuple[str, ...] = ()  # each left-out part, in a few words; none: the file was whole
    outcome: str = ""  # with problems: what the hub does with what it read ("kept 2 of 3 timers")


class NotWritten(OSError):
    """The file is damaged and its content could not be set aside: it is not written over."""


class JsonStateFile(Generic[T]):
    """One JSON file of the state folder, read by `read` (the parsed JSON → a Reading; it may
    raise ValueError, TypeError, KeyError or AttributeError for a shape it cannot use) and, when
    that fails, by `salvage` (the file's text, None when not a byte could be read); written
    from `dump`'s JSON."""

    def __init__(self, path: Path, read: Callable[[Any], Reading[T]], salvage: Callable[[str | None], Reading[T]],
                 dump: Callable[[T], Any]) -> None:
        self.path = path
        self._read = read
        self._salvage = salvage
        self._dump = dump
        self._kept_in_place: str | None = None  # damaged, not set aside: never written over

    def load(self) -> T | None:
        """The file's value (None when there is none); a damaged one is set aside, and what
        could be read of it written back."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            reading = self._salvage(None)
            return self._damaged(reading, f"it cannot be read ({err.strerror or err})", readable=False)
        try:
            reading = self._read(json.loads(raw))
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            reading = self._salvage(raw.decode("utf-8", "replace"))
            return self._damaged(reading, f"it is not the JSON the hub wrote ({err})")
        if reading.problems:
            return self._damaged(reading, "; ".join(reading.problems[:3])
                                 + (f" (and {len(reading.problems) - 3} more)" if len(reading.problems) > 3 else ""))
        return reading.value

    def save(self, value: T) -> None:
        """Write `value` (atomically); OSError (NotWritten for a damaged file kept in place) when
        it cannot be."""
        if self._kept_in_place is not None:
            raise NotWritten(errno.EIO, f"{self.path.name} is damaged and could not be set aside "
                                        f"({self._kept_in_place}): fix or remove it, then restart")
        write_json(self.path, self._dump(value))

    def _damaged(self, reading: Reading[T], problem: str, *, readable: bool = True) -> T:
        try:
            if not readable:
                raise OSError(errno.EIO, "unreadable")
            set_aside(self.path, problem, reading.outcome)
        except OSError as err:
            self._kept_in_place = err.strerror or str(err)
            record(SetAside(self.path, None, problem, f"{reading.outcome}; the file could not be set aside "
                            f"({self._kept_in_place}) and is left as it is, never written over", time.time()))
            return reading.value
        try:
            self.save(reading.value)
        except OSError as err:
            _LOGGER.error("could not write back what was read of %s: %s", self.path, err)
        return reading.value
