"""The model file fetched from a Hugging Face repository (options `model_repo`, `model_file`, `hf_token`).

huggingface_hub does the transfer: a HEAD of `/<repo>/resolve/<revision>/<file>` for the file's
size, ETag and commit (`X-Linked-Size`, `X-Linked-Etag`, `X-Repo-Commit`, through redirects), then
a GET that resumes a cut connection with `Range`, into `<data folder>/models/<owner>--<name>/`;
`HF_ENDPOINT` names a mirror (read at each download, not at import). Before: the free disk space is
checked. After: the file must be a GGUF of the announced size whose sha256 is the LFS ETag, or it
is deleted. A file that passed once (its `.verified` note beside it) is used with no network at all.
Every failure is a `DownloadFailed` with a sentence for the user and what to do about it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

_LOGGER = logging.getLogger(__name__)
GGUF_MAGIC = b"GGUF"
SPACE_MARGIN = 256 << 20  # left free beside the file: the hub still writes its states and settings
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_LOG_EVERY_S = 15.0
_DISK_FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


@dataclass(frozen=True)
class ModelSource:
    """One file of a repository, and where the hub keeps it."""

    repo: str
    filename: str
    token: str | None
    folder: Path  # <data folder>/models

    @property
    def path(self) -> Path:
        return self.folder / self.repo.replace("/", "--") / self.filename

    @property
    def label(self) -> str:
        return f"{self.repo}/{self.filename}"


@dataclass(frozen=True)
class RemoteFile:
    size: int | None
    sha256: str | None  # the LFS ETag; None for a small file kept in git
    commit: str | None


class DownloadFailed(Exception):
    """`reason` names the failure for the page and tests; the message says what to do.
    `transient` failures (offline, a cut connection) are tried again later."""

    def __init__(self, reason: str, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.transient = transient


class DownloadCancelled(Exception):
    """The hub stops: the download's thread ends at its next chunk."""


class DownloadProgress:
    """What the page, `/health` and the log show of a download (written by its thread)."""

    def __init__(self, source: ModelSource) -> None:
        self.source = source
        self.state = "pending"  # pending|checking|downloading|verifying|loading|priming|done|failed
        self.done_bytes = 0
        self.total_bytes: int | None = None
        self.reason = ""
        self.message = ""
        self._started = self._logged = time.monotonic()
        self._first_bytes = 0  # already there when this attempt started (a resumed download)
        self.cancelled = False  # set by the hub's loop: the thread raises DownloadCancelled

    def enter(self, state: str) -> None:
        self.state = state
        if state in ("downloading", "verifying"):
            self.done_bytes = self._first_bytes = 0
            self._started = time.monotonic()

    def failed(self, error: DownloadFailed) -> None:
        self.state, self.reason, self.message = "failed", error.reason, str(error)

    def advance(self, count: int) -> None:
        if self.cancelled:
            raise DownloadCancelled(self.source.label)
        self.done_bytes += count
        if time.monotonic() - self._logged >= _LOG_EVERY_S:
            self._logged = time.monotonic()
            _LOGGER.info("%s %s: %s", self.state, self.source.label, self.summary())

    def restart_at(self, done: int, total: int | None) -> None:
        """huggingface_hub opens its bar: `done` bytes were there already (resumed)."""
        self.done_bytes = self._first_bytes = done
        self.total_bytes = total if total is not None else self.total_bytes

    @property
    def rate(self) -> float:
        """Bytes per second since this stage started."""
        elapsed = time.monotonic() - self._started
        return (self.done_bytes - self._first_bytes) / elapsed if elapsed > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        if not self.total_bytes or self.rate <= 0:
            return None
        return max(0.0, (self.total_bytes - self.done_bytes) / self.rate)

    def summary(self) -> str:
        total = f" of {_size(self.total_bytes)}" if self.total_bytes else ""
        eta = f", about {_duration(self.eta_s)} left" if self.eta_s is not None else ""
        return f"{_size(self.done_bytes)}{total}, {_size(int(self.rate))}/s{eta}"

    def as_dict(self) -> dict[str, Any]:
        eta = self.eta_s
        return {"repo": self.source.repo, "file": self.source.filename, "state": self.state,
                "bytes": self.done_bytes, "total_bytes": self.total_bytes, "rate_bps": round(self.rate),
                "eta_s": None if eta is None else round(eta), "reason": self.reason or None,
                "message": self.message or None}


def verified_file(source: ModelSource) -> Path | None:
    """The file when it was downloaded and checked before (no network)."""
    note = _note_path(source)
    try:
        size = json.loads(note.read_text(encoding="utf-8"))["size"]
        return source.path if source.path.stat().st_size == size else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
            f"Not enough disk space for {source.label}: it needs {_size(size + SPACE_MARGIN)} "
            f"and {source.folder} has {_size(free)} free. Free some space (or set data_dir to a "
            "larger disk), then restart the hub."))


def download_plan(source: ModelSource) -> list[str]:
    """What `bolt-hub check` says of a download still to come: the file, its size, the disk's room."""
    lines = [f"Model download: {source.label} into {source.path.parent} (the stand-in serves until it is "
             "downloaded and checked)"]
    try:
        remote = remote_file(source)
        lines.append(f"  size {_size(remote.size)}, {_size(free_bytes(source.folder))} free there")
        check_space(source, remote.size)
        lines.append("  the disk has room")
    except DownloadFailed as err:
        lines.append(f"  download problem ({err.reason}): {err}")
    return lines


def fetch(source: ModelSource, progress: DownloadProgress) -> Path:
    """Download (or find) the file and check it; blocking: run it in a thread."""
    from huggingface_hub import hf_hub_download

    progress.enter("checking")
    remote = remote_file(source)
    progress.total_bytes = remote.size
    if not source.path.is_file():  # a complete file there already needs no space
        check_space(source, remote.size)
    progress.enter("downloading")
    source.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        hf_hub_download(source.repo, source.filename, local_dir=source.path.parent, token=source.token or False,
                        endpoint=_endpoint(), library_name="bolt-hub", tqdm_class=cast(Any, _bar(progress)))
    except DownloadCancelled:
        raise
    except Exception as err:
        raise translated(err, source) from None
    progress.enter("verifying")
    verify(source, remote, progress)
    _note_path(source).write_text(json.dumps({"size": source.path.stat().st_size, "sha256": remote.sha256,
                                              "commit": remote.commit}), encoding="utf-8")
    return source.path


def verify(source: ModelSource, remote: RemoteFile, progress: DownloadProgress) -> None:
    """A GGUF header, the announced size, the LFS sha256; a file failing any is deleted."""
    path = source.path
    problem = ""
    size = path.stat().st_size
    progress.total_bytes = size
    with path.open("rb") as file:
        if file.read(4) != GGUF_MAGIC:
            problem = "it is not a GGUF model file (check model_file)"
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
    if problem:
        path.unlink(missing_ok=True)
        raise DownloadFailed("bad_checksum" if "sha256" in problem else "bad_file",
                             f"The downloaded {source.label} was deleted: {problem}. It will be fetched "
                             "again at the next start.")


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
            "(or set data_dir to a larger disk), then restart."))
    if _offline(err):
        return DownloadFailed("offline", (
            f"Could not reach Hugging Face ({_endpoint() or 'huggingface.co'}) to download {source.label}: "
            "check the network (or HF_ENDPOINT). The hub tries again in a few minutes."), transient=True)
    return DownloadFailed("interrupted", (
        f"The download of {source.label} was cut off ({_short(err)}). The hub tries again in a few "
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


def _note_path(source: ModelSource) -> Path:
    return source.path.with_name(source.path.name + ".verified")


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def _size(count: int | None) -> str:
    value = float(count or 0)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def _duration(seconds: float | None) -> str:
    total = round(seconds or 0)
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    return f"{minutes // 60} h {minutes % 60} min"
