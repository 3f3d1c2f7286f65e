"""The model file fetched from a Hugging Face repository (options `model_repo`, `model_file`, `hf_token`).

huggingface_hub does the transfer: a HEAD of `/<repo>/resolve/<revision>/<file>` for the file's
size, ETag and commit (`X-Linked-Size`, `X-Linked-Etag`, `X-Repo-Commit`, through redirects), then
a GET that resumes a cut connection with `Range`, into `<data folder>/models/<owner>--<name>/`
(laid out as the repository: `Q4_K_M/x.gguf` lands in its `Q4_K_M/`); `HF_ENDPOINT` names a mirror
(read at each download, not at import). Before: the machine's memory must hold the file (and
its context), a partial download an earlier run left (it cannot be resumed) is deleted and said,
then the free disk space is checked. After: the file must
be a GGUF of the announced size whose sha256 is the LFS ETag, or it is deleted; a file found there
that fails is downloaded again once. The note beside the file (hub.llm.model_source) records a
checked file (used with no network at all), and a repository file that is no GGUF (not fetched
again until it changes). Every failure, the system's included, is a `DownloadFailed` with a
sentence for the user and what to do about it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any, cast

from hub.llm.download_progress import DownloadCancelled, DownloadFailed, DownloadProgress, size_text
from hub.llm.model_source import (ModelNote, ModelSource, RemoteFile, record_rejected, rejected_problem,
                                  write_note)
from hub.state_files import SetAside, record

GGUF_MAGIC = b"GGUF"
NOT_GGUF = "it is not a GGUF model file (check model_file)"
SPACE_MARGIN = 256 << 20  # left free beside the file: the hub still writes its states and settings
MEMORY_MARGIN = 1 << 30  # memory besides the file's: its context (KV cache), the hub itself (~0.8 GB)
MEMINFO = Path("/proc/meminfo")
CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_DISK_FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


def remote_file(source: ModelSource) -> RemoteFile:
    """The repository's answer to a HEAD of the file (raises DownloadFailed)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    try:
        meta = get_hf_file_metadata(hf_hub_url(source.repo, source.filename, endpoint=_endpoint()),
                                    token=source.token or False)
    except Exception as err:
        raise translated(err, source) from None
    etag = (meta.etag or "").lower()
    return RemoteFile(meta.size, etag if _SHA256.match(etag) else None, meta.commit_hash)


def free_bytes(folder: Path) -> int:
    """Free space where `folder` is (or would be created)."""
    for path in (folder, *folder.parents):
        if path.exists():
            return shutil.disk_usage(path).free
    return 0


def check_space(source: ModelSource, size: int | None) -> None:
    if size is None:
        return
    free = free_bytes(source.folder)
    if free < size + SPACE_MARGIN:
        raise DownloadFailed("disk_full", (
            f"Not enough disk space for {source.label}: it needs {size_text(size + SPACE_MARGIN)} "
            f"and {source.folder} has {size_text(free)} free. Free some space (or set data_dir to a "
            "larger disk): the hub tries again in a few minutes."), transient=True)


def memory_bytes() -> int | None:
    """The memory the hub's container may use: the machine's, or its cgroup's limit when lower."""
    try:
        total = next(int(line.split()[1]) << 10 for line in MEMINFO.read_text().splitlines()
                     if line.startswith("MemTotal:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    for limit in CGROUP_LIMITS:
        try:
            total = min(total, int(limit.read_text().strip()))
        except (OSError, ValueError):  # absent, or "max"
            continue
    return total


def check_memory(source: ModelSource, size: int | None) -> None:
    """A model larger than the machine can hold is not downloaded: loading it would be killed
    for want of memory (and restarted, and killed again)."""
    total = memory_bytes()
    if size is None or total is None or total >= size + MEMORY_MARGIN:
        return
    raise DownloadFailed("too_little_memory", (
        f"{source.label} needs about {size_text(size + MEMORY_MARGIN)} of memory (the file, its context and "
        f"the hub) and this machine has {size_text(total)}: the stand-in keeps serving. Choose a smaller "
        "file (model_file, e.g. a Q3_K or an E2B model), or serve the model from a larger machine "
        "(engine: openai)."))


def download_plan(source: ModelSource) -> list[str]:
    """What `bolt-hub check` says of a download still to come: the file, its size, the disk's room."""
    lines = [f"Model download: {source.label} into {source.repo_folder} (the stand-in serves until it is "
             "downloaded and checked)"]
    try:
        remote = remote_file(source)
        memory = memory_bytes()
        lines.append(f"  size {size_text(remote.size)}, {size_text(free_bytes(source.folder))} free there, "
                     f"{size_text(memory) if memory else 'unknown'} of memory")
        check_space(source, remote.size)
        check_memory(source, remote.size)
        lines.append("  the disk and the memory have room")
    except DownloadFailed as err:
        lines.append(f"  download problem ({err.reason}): {err}")
    return lines


def fetch(source: ModelSource, progress: DownloadProgress) -> Path:
    """Download (or find) the file and check it; blocking: run it in a thread. Raises
    DownloadFailed (or DownloadCancelled), never anything else."""
    try:
        progress.enter("checking")
        remote = remote_file(source)
        progress.total_bytes = remote.size
        if (problem := rejected_problem(source, remote)) is not None:
            raise DownloadFailed("bad_file", f"{source.label} was not downloaded again: {problem} (found at an "
                                             "earlier start; the hub fetches it when the repository's file changes).")
        _clear_leftovers(source)
        found = source.path.is_file()
        if not found:  # a complete file there already needs no space
            check_space(source, remote.size)
        check_memory(source, remote.size)
        for attempt in (1, 2):
            _download(source, progress)
            try:
                verify(source, remote, progress)
                break
            except DownloadFailed as err:
                if not found or attempt == 2 or err.reason not in ("bad_file", "bad_checksum"):
                    raise
                record(SetAside(source.path, None, f"the model file found there failed its check: {err}",
                                "deleted and downloaded again", time.time()))
                check_space(source, remote.size)
        write_note(source, ModelNote(source.path.stat().st_size, remote.sha256, remote.commit))
        return source.path
    except (DownloadFailed, DownloadCancelled):
        raise
    except OSError as err:  # the folder, the note, the file's check: the system's errors
        raise translated(err, source) from None


def _download(source: ModelSource, progress: DownloadProgress) -> None:
    from huggingface_hub import hf_hub_download

    progress.enter("downloading")
    source.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        hf_hub_download(source.repo, source.filename, local_dir=source.repo_folder, token=source.token or False,
                        endpoint=_endpoint(), library_name="bolt-hub", tqdm_class=cast(Any, _bar(progress)))
    except DownloadCancelled:
        raise
    except Exception as err:
        raise translated(err, source) from None


def _clear_leftovers(source: ModelSource) -> None:
    """Delete the partial files an earlier run left (killed, or a full disk): huggingface_hub
    writes each download to a file of its own and never resumes another's, so they only take
    the room the next free-space check counts."""
    for leftover in (source.repo_folder / ".cache" / "huggingface" / "download").rglob("*.incomplete"):
        size = leftover.stat().st_size
        leftover.unlink()
        record(SetAside(leftover, None, f"a partial download of {size_text(size)} left by an earlier run",
                        "deleted (it cannot be resumed); the file is downloaded again", time.time()))


def verify(source: ModelSource, remote: RemoteFile, progress: DownloadProgress) -> None:
    """A GGUF header, the announced size, the LFS sha256; a file failing any is deleted (one that
    is no GGUF is noted, so that it is not downloaded again). The file is fsynced before its
    note says it is checked."""
    progress.enter("verifying")
    path = source.path
    problem = ""
    size = path.stat().st_size
    progress.total_bytes = size
    with path.open("rb") as file:
        if file.read(4) != GGUF_MAGIC:
            problem = NOT_GGUF
        elif remote.size is not None and size != remote.size:
            problem = f"it has {size} bytes where the repository announced {remote.size}"
        elif remote.sha256 is not None:
            digest = hashlib.sha256(GGUF_MAGIC)
            progress.advance(4)
            while chunk := file.read(1 << 20):
                digest.update(chunk)
                progress.advance(len(chunk))
            if digest.hexdigest() != remote.sha256:
                problem = "its sha256 checksum does not match the repository's (the file was corrupted)"
        if not problem:
            os.fsync(file.fileno())
    if problem:
        path.unlink(missing_ok=True)
        if problem == NOT_GGUF:
            record_rejected(source, remote, problem)
        raise DownloadFailed("bad_checksum" if "sha256" in problem else "bad_file",
                             f"The downloaded {source.label} was deleted: {problem}. "
                             + ("It is not downloaded again until the repository's file changes." if problem == NOT_GGUF
                                else "It will be fetched again at the next start."))


def translated(err: BaseException, source: ModelSource) -> DownloadFailed:
    """huggingface_hub's and the system's errors as a sentence for the user."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status == 401:
        return DownloadFailed("unauthorized", (
            f"The repository {source.repo} needs a Hugging Face token (or does not exist): set hf_token "
            "to a token with read access, accept the model's license on its page, and restart."
            if not source.token else
            f"Hugging Face rejected hf_token for {source.repo}: check the token (read access) and restart."))
    if status == 403:
        return DownloadFailed("forbidden", (
            f"Hugging Face refused access to {source.repo} with this token: accept the model's license "
            "on its page with the token's account, or use a token with read access, then restart."))
    if status == 404:
        return DownloadFailed("not_found", (
            f"{source.label} was not found: check model_repo and model_file (the file name is case-"
            "sensitive, e.g. name-Q4_K_M.gguf), then restart."))
    if isinstance(err, OSError) and err.errno in _DISK_FULL:
        return DownloadFailed("disk_full", (
            f"The disk filled up while downloading {source.label} ({source.folder}): free some space "
            "(or set data_dir to a larger disk): the hub tries again in a few minutes."), transient=True)
    if isinstance(err, OSError) and err.errno in _NOT_WRITABLE:
        return DownloadFailed("not_writable", (
            f"The hub cannot write the model into {source.folder} ({err.strerror}): check that the data "
            "folder is writable; the hub tries again in a few minutes."), transient=True)
    if isinstance(err, OSError) and err.filename is not None:
        return DownloadFailed("file_error", (
            f"The hub could not write or read the model's files in {source.folder} ({err.strerror or err}): "
            "it tries again in a few minutes."), transient=True)
    if _offline(err):
        return DownloadFailed("offline", (
            f"Could not reach Hugging Face ({_endpoint() or 'huggingface.co'}) to download {source.label}: "
            "check the network (or HF_ENDPOINT). The hub tries again in a few minutes."), transient=True)
    return DownloadFailed("interrupted", (
        f"The download of {source.label} was cut off ({short_error(err)}). The hub tries again in a few "
        "minutes."), transient=True)


def _offline(err: BaseException) -> bool:
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    names = {type(e).__name__ for e in _chain(err)}
    return isinstance(err, (LocalEntryNotFoundError, OfflineModeIsEnabled)) or bool(
        names & {"ConnectError", "ConnectTimeout", "OfflineModeIsEnabled"})


def _chain(err: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _bar(progress: DownloadProgress) -> type:
    """A class huggingface_hub takes for tqdm: it reports the bytes to `progress`."""

    class Bar:
        def __init__(self, *args: Any, total: int | None = None, initial: int = 0, **kwargs: Any) -> None:
            progress.restart_at(initial, total)

        def update(self, count: int = 1) -> None:
            progress.advance(count)

        def close(self) -> None:
            return None

        def __enter__(self) -> "Bar":
            return self

        def __exit__(self, *_: object) -> None:
            return None

    return Bar


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def short_error(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
