"""Admission to the model's queue: can a generation still be done by its caller's deadline?

Every generation waits for the one model in arrival order. A request that would only get the
model after its caller gave up (the turn timeout) is better refused at once with "busy" than
left to time out (and the queue is shared fairly by the interfaces asking at once:
`FairAdmission`). So the queue keeps a moving average of how long recent generations held the
model, and of how much they varied (as TCP estimates round trips), and admits a request only if
the generations ahead of it and its own fit before its deadline; a request that finds the model
free always starts (nothing could serve it sooner). A waiting request re-checks as the estimate
moves, and leaves (busy) once even an immediate start would not be done in time. Before any
generation has finished (a cold start), the running one's time so far stands in for the mean.
A running generation that has already taken longer than generations usually do (an OpenAI
client's long completion) may hold the model until its own deadline: a request that could not
wait that long is told "busy" then, not after waiting most of its time for it. "At once" means
within GRACE_S: the generation ahead may be ending just then (its client left; the hub notices
within a poll and the generation stops at its next token), and a refusal then would be wrong.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Callable

from hub.llm.types import EngineBusy

RECHECK_S = 0.25  # how often a request waiting with a deadline re-checks that it still fits
SMOOTHING = 0.3  # weight of the newest duration in the averages
SPREAD = 2.0  # a request's own generation counts as its mean plus this many mean deviations
CUT_S = 1.0  # how long a generation past its deadline may take to be cut (its next token)
GRACE_S = 0.5  # how long requests that cannot start at once are gathered before they are decided


@dataclass(frozen=True)
class RunningGeneration:
    """The generation holding the model: since when, and its caller's deadline (None: none)."""

    since: float
    until: float | None

    def elapsed(self) -> float:
        return time.monotonic() - self.since

    def longest_left(self) -> float:
        """The longest it may still hold the model: to its deadline and its cut; without a
        deadline, or past its cut, there is no telling."""
        if self.until is None:
            return math.inf
        left = self.until + CUT_S - time.monotonic()
        return left if left >= 0 else math.inf


class QueueEstimate:
    """Moving averages of generation durations, and whether a request still fits its deadline."""

    def __init__(self) -> None:
        self.mean_s = 0.0  # 0 until a first generation finished: everything fits
        self.deviation_s = 0.0

    def record(self, seconds: float) -> None:
        """One finished generation held the model for `seconds`."""
        if self.mean_s == 0.0:
            self.mean_s, self.deviation_s = seconds, seconds / 2
            return
        self.deviation_s += SMOOTHING * (abs(seconds - self.mean_s) - self.deviation_s)
        self.mean_s += SMOOTHING * (seconds - self.mean_s)

    def fits(self, ahead: int, seconds_left: float, running: RunningGeneration | None = None) -> bool:
        """Whether a generation with `ahead` generations before it (running or waiting; 0: only
        its own) would most likely be done within `seconds_left`, behind `running`."""
        elapsed = running.elapsed() if running is not None else 0.0
        mean = self.mean_s or elapsed  # a cold start: the running one's time so far
        own = mean + SPREAD * self.deviation_s
        if running is not None and self.mean_s and elapsed > own:
            # it overran what generations take: count on it holding the model as long as it may
            return running.longest_left() + max(ahead - 1, 0) * mean + own <= seconds_left
        return ahead * mean + own <= seconds_left


# (requests admitted besides those waiting already, seconds left to its deadline) → whether it fits
Fits = Callable[[int, float], bool]


@dataclass
class _Asking:
    source: str  # its interface (GenerationRequest.source)
    deadline: float | None
    fits: Fits
    admitted: asyncio.Future[bool]


class FairAdmission:
    """Which requests may wait for the model, fairly across the interfaces they come from.

    A request that finds the model free (and nobody waiting or being decided) starts at once.
    The others are decided together GRACE_S after the first of them arrived, so that a burst
    of REST asks that reached the hub a moment before a burst of MQTT asks does not take the
    whole queue: they take turns by source (arrival order within one), each admitted while the
    requests ahead of it and its own still fit before its deadline; the rest hear "busy" then,
    within GRACE_S of arriving (and the generation ahead may have ended meanwhile)."""

    def __init__(self) -> None:
        self._asking: list[_Asking] = []
        self._deciding: asyncio.TimerHandle | None = None

    async def admitted(self, source: str, deadline: float | None, starts_now: bool, fits: Fits) -> bool:
        if starts_now and self._deciding is None:
            return True
        loop = asyncio.get_running_loop()
        asking = _Asking(source, deadline, fits, loop.create_future())
        self._asking.append(asking)
        if self._deciding is None:
            self._deciding = loop.call_later(GRACE_S, self._decide)
        return await asking.admitted

    def _decide(self) -> None:
        self._deciding = None
        asking, self._asking = self._asking, []
        admitted = 0
        for request in taking_turns(asking):
            if request.admitted.done():  # its caller left
                continue
            left = math.inf if request.deadline is None else request.deadline - time.monotonic()
            fits = request.fits(admitted, left)
            admitted += fits
            request.admitted.set_result(fits)


def taking_turns(asking: list[_Asking]) -> list[_Asking]:
    """The requests in turns across their sources: each source's first (in the order the
    sources first asked), then each one's second, …"""
    by_source: dict[str, list[_Asking]] = {}
    for request in asking:
        by_source.setdefault(request.source, []).append(request)
    rounds = max((len(requests) for requests in by_source.values()), default=0)
    return [requests[turn] for turn in range(rounds) for requests in by_source.values() if turn < len(requests)]


async def acquire_in_time(gate: asyncio.Lock, deadline: float, fits: Callable[[float], bool]) -> None:
    """Take the model in arrival order; leave the queue (EngineBusy) once even an immediate start
    would no longer be done by `deadline` (`fits(seconds_left)`), re-estimated while waiting."""
    acquire = asyncio.ensure_future(gate.acquire())
    try:
        while not acquire.done():
            if not fits(deadline - time.monotonic()):
                raise EngineBusy("the model is busy: this request would not be done in time")
            await asyncio.wait({acquire}, timeout=RECHECK_S)
    except BaseException:
        if acquire.done() and not acquire.cancelled():
            gate.release()  # it got the model just as the wait ended
        else:
            acquire.cancel()
        raise
