"""The model file of a Hugging Face repository, where the hub keeps it, and the note beside it.

The note (`<file>.verified`, hub.state_files) says what the hub learned of the file, so that a
start needs no network and repeats no mistake:
- `size`, `sha256`, `commit`: the file was downloaded and checked (a GGUF of the announced size
  and checksum); a start loads it without asking the repository;
- `load_failed`: it was checked, but llama.cpp could not load it with this setup (the file's size
  and modification time, the llama-cpp-python version and the model options): the stand-in
  serves, and it is not loaded again until one of those changes — no crash loop at start;
- `rejected`: the repository's file is no GGUF (its checksum and size): it is not downloaded
  again until the repository's file changes.
A damaged note is set aside, as every state file, and the file checked again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hub.state_files import JsonStateFile, Reading


@dataclass(frozen=True)
class ModelSource:
    """One file of a repository (`filename` may be in a folder of it), and where the hub keeps it."""

    repo: str
    filename: str
    token: str | None = field(repr=False)
    folder: Path  # <data folder>/models

    @property
    def repo_folder(self) -> Path:
        """The repository's files, laid out as in the repository (huggingface_hub's `local_dir`)."""
        return self.folder / self.repo.replace("/", "--")

    @property
    def path(self) -> Path:
        return self.repo_folder / self.filename

    @property
    def label(self) -> str:
        return f"{self.repo}/{self.filename}"


@dataclass(frozen=True)
class RemoteFile:
    size: int | None
    sha256: str | None  # the LFS ETag; None for a small file kept in git
    commit: str | None


@dataclass(frozen=True)
class LoadFailure:
    size: int
    mtime_ns: int
    setup: str  # how it was loaded: llama-cpp-python's version and the model options
    error: str


@dataclass(frozen=True)
class ModelNote:
    size: int | None = None  # the checked file's size; None: not checked
    sha256: str | None = None
    commit: str | None = None
    load_failed: LoadFailure | None = None
    rejected: dict[str, Any] | None = None  # the repository's file that is no GGUF: sha256, size, problem


def _note_file(source: ModelSource) -> JsonStateFile[ModelNote]:
    def read(saved: Any) -> Reading[ModelNote]:
        failed = saved.get("load_failed")
        rejected = saved.get("rejected")
        return Reading(ModelNote(saved.get("size"), saved.get("sha256"), saved.get("commit"),
                                 LoadFailure(**failed) if failed else None, dict(rejected) if rejected else None))

    def dump(note: ModelNote) -> dict[str, Any]:
        return {k: v for k, v in asdict(note).items() if v is not None}

    return JsonStateFile(source.path.with_name(source.path.name + ".verified"), read,
                         lambda text: Reading(ModelNote(), ("unreadable",), "the model file is checked again"), dump)


def read_note(source: ModelSource) -> ModelNote:
    return _note_file(source).load() or ModelNote()


def write_note(source: ModelSource, note: ModelNote) -> None:
    """Raises OSError when the folder cannot be written."""
    _note_file(source).save(note)


def verified_file(source: ModelSource) -> Path | None:
    """The file when it was downloaded and checked before (no network)."""
    size = read_note(source).size
    try:
        return source.path if size is not None and source.path.stat().st_size == size else None
    except OSError:
        return None


def load_failure(source: ModelSource, setup: str) -> str | None:
    """Why the checked file could not be loaded, when it is the same file and `setup` as then."""
    failed = read_note(source).load_failed
    try:
        stat = source.path.stat()
    except OSError:
        return None
    if failed is None or (failed.size, failed.mtime_ns, failed.setup) != (stat.st_size, stat.st_mtime_ns, setup):
        return None
    return failed.error


def record_load_failure(source: ModelSource, setup: str, error: str) -> None:
    """Remember that the file does not load with `setup` (a note that cannot be written: logged
    by the caller; the next start tries once more)."""
    stat = source.path.stat()
    write_note(source, replace(read_note(source), load_failed=LoadFailure(stat.st_size, stat.st_mtime_ns, setup,
                                                                          error)))


def rejected_problem(source: ModelSource, remote: RemoteFile) -> str | None:
    """Why the repository's file was refused before, when it is still the same file."""
    rejected = read_note(source).rejected
    if rejected is None or (rejected.get("sha256"), rejected.get("size")) != (remote.sha256, remote.size):
        return None
    return str(rejected.get("problem") or "it is not a GGUF model file")


def record_rejected(source: ModelSource, remote: RemoteFile, problem: str) -> None:
    write_note(source, ModelNote(rejected={"sha256": remote.sha256, "size": remote.size, "problem": problem}))
