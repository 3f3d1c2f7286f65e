"""How far the hub is in starting: the "warming" state the page, `/health` and the log show.

Loading a model and priming its prompt take 30 s and more on a CPU; without a sign of progress
a hub that warms up looks like a hub that hangs. Stages go forward only; each is logged once.
While the configured model downloads (`downloading`), the hub already serves with the stand-in:
`/health` says ok, and carries the download's progress (`download`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

_LOGGER = logging.getLogger("hub")

# stage -> (share of the warm-up done when it starts, what the log and the page say)
STAGES: dict[str, tuple[float, str]] = {
    "starting": (0.0, "starting"),
    "loading_model": (0.05, "loading the model"),
    "loading_home": (0.6, "loading the home (entities and devices)"),
    "preparing": (0.75, "preparing the fast path and the listeners"),
    "priming": (0.85, "priming the model's prompt"),
    "downloading": (0.9, "serving with the stand-in while the model downloads"),
    "ready": (1.0, "ready"),
}
_ORDER = list(STAGES)
SERVING = frozenset({"downloading", "ready"})  # every route answers


@dataclass
class StartupProgress:
    stage: str = "starting"
    started: float = 0.0
    stage_started: float = 0.0
    download: Callable[[], dict[str, object]] | None = None  # the model download's state, when there is one

    def __post_init__(self) -> None:
        self.started = self.stage_started = time.monotonic()

    @property
    def ready(self) -> bool:
        return self.stage == "ready"

    def advance(self, stage: str) -> None:
        """Enter `stage` (an earlier or the same stage is ignored)."""
        if _ORDER.index(stage) <= _ORDER.index(self.stage):
            return
        self.stage, self.stage_started = stage, time.monotonic()
        elapsed = self.stage_started - self.started
        if stage == "ready":
            _LOGGER.info("warm-up done in %.1f s: ready", elapsed)
        else:
            _LOGGER.info("warming up (%d%%): %s", round(STAGES[stage][0] * 100), STAGES[stage][1])

    def as_dict(self) -> dict[str, object]:
        share, label = STAGES[self.stage]
        now = time.monotonic()
        shown: dict[str, object] = {
            "stage": self.stage, "label": label, "progress": share, "elapsed_s": round(now - self.started, 1),
            "stage_elapsed_s": round(now - self.stage_started, 1)}
        if self.download is not None:
            shown["download"] = self.download()
        return shown
