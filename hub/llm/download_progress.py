"""What the page, `/health` and the log show of the model's download (hub.llm.download), written
by its thread: the stage, bytes, rate and time left; a failure's reason, what to do, and whether
the hub tries again."""

from __future__ import annotations

import logging
import time
from typing import Any

from hub.llm.model_source import ModelSource

_LOGGER = logging.getLogger("hub.llm.download")
_LOG_EVERY_S = 15.0


class DownloadFailed(Exception):
    """`reason` names the failure for the page and tests; the message says what to do.
    `transient` failures (offline, a cut connection, a full disk) are tried again later."""

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
        self.retrying = False  # failed, and tried again in a few minutes
        self._started = self._logged = time.monotonic()
        self._first_bytes = 0  # already there when this attempt started (a resumed download)
        self.cancelled = False  # set by the hub's loop: the thread raises DownloadCancelled

    def enter(self, state: str) -> None:
        self.state, self.reason, self.message, self.retrying = state, "", "", False
        if state in ("downloading", "verifying"):
            self.done_bytes = self._first_bytes = 0
            self._started = time.monotonic()

    def failed(self, error: DownloadFailed) -> None:
        self.state, self.reason, self.message, self.retrying = "failed", error.reason, str(error), error.transient

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
        total = f" of {size_text(self.total_bytes)}" if self.total_bytes else ""
        eta = f", about {duration_text(self.eta_s)} left" if self.eta_s is not None else ""
        return f"{size_text(self.done_bytes)}{total}, {size_text(int(self.rate))}/s{eta}"

    def as_dict(self) -> dict[str, Any]:
        eta = self.eta_s
        return {"repo": self.source.repo, "file": self.source.filename, "state": self.state,
                "bytes": self.done_bytes, "total_bytes": self.total_bytes, "rate_bps": round(self.rate),
                "eta_s": None if eta is None else round(eta), "reason": self.reason or None,
                "message": self.message or None, "retrying": self.retrying}


def size_text(count: int | None) -> str:
    value = float(count or 0)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def duration_text(seconds: float | None) -> str:
    total = round(seconds or 0)
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    return f"{minutes // 60} h {minutes % 60} min"
