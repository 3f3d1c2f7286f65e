"""The hub's own timers: start, cancel, pause, resume, add or remove time, ask what is left.

A timer belongs to the request that started it (its ToolContext: conversation, language,
interface, satellite, device and the speaker's area), so its "done" is reported there and "the
kitchen timer" is the one started in the kitchen. A timer may carry a delayed command, run as a
new turn of its device, area and language when it ends (HA's `conversation_command`). The tools
are `hub.home.timer_tools`. Timers are kept in `timers.json` in the
state folder, written on every change (hub.state_files), so a restart keeps them: each fires at its
wall-clock end, or at once after start when that end passed while the hub was down (the report
says how late). A damaged file is set aside; the timers it still holds run.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from hub.core.tools import ToolContext
from hub.home.normalize import fold
from hub.home.watches import OutcomeSink
from hub.locales import join_list, phrase, plural_phrase
from hub.state_files import JsonStateFile, Reading

_LOGGER = logging.getLogger(__name__)

TIMERS_FILE = "timers.json"
MAX_TIMER_S = 24 * 3600
MAX_NAME_CHARS = 60
_CHECK_EVERY_S = 30.0  # re-read the wall clock at least this often (it can jump)
# a delayed command's turn ("turn off the lights in 10 minutes"): (the command, who set it) → the reply
CommandRunner = Callable[[str, ToolContext], Awaitable[str]]


def spoken_duration(seconds: float, language: str) -> str:
    """1:30:05 → "1 hour, 30 minutes and 5 seconds" in the language (`unit.hour` … phrases)."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [plural_phrase(language, f"unit.{unit}", n)
             for n, unit in ((hours, "hour"), (minutes, "minute"), (secs, "second")) if n]
    return join_list(parts, language) if parts else plural_phrase(language, "unit.second", 0)


@dataclass
class Timer:
    id: str
    name: str | None
    duration_s: int
    ends_at: float  # epoch seconds (while it runs)
    ctx: ToolContext
    paused_left: float | None = None  # seconds left when paused; None: running
    command: str | None = None  # a delayed command, run as a new turn when it ends (not listed)

    @property
    def active(self) -> bool:
        return self.paused_left is None

    @property
    def area(self) -> str | None:
        """The area of the device that started it (where "the kitchen timer" runs)."""
        return self.ctx.area

    def label(self, language: str) -> str:
        """What the timer is called when spoken: its name, else its duration."""
        return self.name or spoken_duration(self.duration_s, language)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "duration_s": self.duration_s,
                "ends_at": self.ends_at, "ctx": asdict(self.ctx), "paused_left": self.paused_left,
                "command": self.command}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Timer":
        ctx = ToolContext(**{k: data["ctx"][k] for k in ToolContext.__dataclass_fields__ if k in data["ctx"]})
        name = data.get("name")
        paused, command = data.get("paused_left"), data.get("command")
        return cls(str(data["id"]), str(name) if name else None, int(data["duration_s"]),
                   float(data["ends_at"]), ctx, float(paused) if paused is not None else None,
                   str(command) if command else None)


class TimerService:
    """start/stop component; tools call `add`, `cancel`, `find`, `remaining_s`."""

    def __init__(self, state_dir: Path, report: OutcomeSink,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(state_dir) / TIMERS_FILE
        self._file = JsonStateFile(self.path, _read_timers, _no_timers,
                                   lambda timers: {"version": 1, "timers": [t.to_json() for t in timers]})
        self._report = report
        self._clock = clock
        self._timers: dict[str, Timer] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._running = False
        self._commands: CommandRunner | None = None

    def run_commands(self, runner: CommandRunner) -> None:
        """Run delayed commands with `runner` (the agent, connected by the composition root)."""
        self._commands = runner

    @property
    def runs_commands(self) -> bool:
        return self._commands is not None

    async def start(self) -> None:
        self._timers = {t.id: t for t in self._load()}
        self._running = True
        for timer in self._timers.values():
            self._schedule(timer)
        if self._timers:
            _LOGGER.info("%d timer(s) restored from %s", len(self._timers), self.path)

    async def stop(self) -> None:
        """Stop counting; the timers stay saved and resume at the next start."""
        self._running = False
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

    # --- public API ---------------------------------------------------------------------------

    def add(self, duration_s: int, name: str | None, ctx: ToolContext, command: str | None = None) -> Timer:
        if not 1 <= duration_s <= MAX_TIMER_S:
            raise ValueError(f"a timer runs 1 s to {MAX_TIMER_S} s, not {duration_s} s")
        timer = Timer(uuid.uuid4().hex[:8], (name or "").strip()[:MAX_NAME_CHARS] or None,
                      int(duration_s), self._clock() + duration_s, ctx, command=command)
        self._timers[timer.id] = timer
        self._save()
        self._schedule(timer)
        _LOGGER.info("timer %s (%s, %d s) started in %s", timer.id, timer.name or "unnamed",
                     duration_s, ctx.conversation_id)
        return timer

    def cancel(self, timer_id: str) -> Timer | None:
        timer = self._timers.pop(timer_id, None)
        if timer is None:
            return None
        self._unschedule(timer_id)
        self._save()
        _LOGGER.info("timer %s cancelled", timer_id)
        return timer

    def pause(self, timer_id: str) -> Timer | None:
        timer = self._timers.get(timer_id)
        if timer is None or not timer.active:
            return timer
        timer.paused_left = self.remaining_s(timer)
        self._unschedule(timer_id)
        self._save()
        return timer

    def resume(self, timer_id: str) -> Timer | None:
        timer = self._timers.get(timer_id)
        if timer is None or timer.paused_left is None:
            return timer
        timer.ends_at, timer.paused_left = self._clock() + timer.paused_left, None
        self._save()
        self._schedule(timer)
        return timer

    def add_time(self, timer_id: str, seconds: float) -> Timer | None:
        """More time (`seconds` < 0: less; a timer brought to 0 ends now)."""
        timer = self._timers.get(timer_id)
        if timer is None:
            return None
        if timer.paused_left is not None:
            timer.paused_left = min(MAX_TIMER_S, max(0.0, timer.paused_left + seconds))
            if not timer.paused_left:  # a paused one too, as HA's: it ends now
                timer.paused_left, timer.ends_at = None, self._clock()
                self._schedule(timer)
        else:
            timer.ends_at = self._clock() + min(MAX_TIMER_S, max(0.0, self.remaining_s(timer) + seconds))
            self._unschedule(timer_id)
            self._schedule(timer)
        self._save()
        return timer

    def timers(self, commands: bool = False) -> list[Timer]:
        """The timers people ask about, soonest first: a delayed command's is none of them (as in
        HA); with `commands`, those too."""
        return sorted((t for t in self._timers.values() if commands or t.command is None), key=self.remaining_s)

    def remaining_s(self, timer: Timer) -> float:
        if timer.paused_left is not None:
            return timer.paused_left
        return max(0.0, timer.ends_at - self._clock())

    def find(self, name: str | None, ctx: ToolContext, duration_s: int | None = None,
             area: str | None = None) -> list[Timer]:
        """As Home Assistant finds a timer: by name, by the area it was started in and by the
        duration it was started with ("the 5 minute timer"), as far as each is said; of several,
        this conversation's, else this satellite's or device's, else those of the speaker's area;
        else all that fit."""
        timers = [t for t in self.timers() if duration_s is None or t.duration_s == duration_s]
        if name and name.strip():
            timers = _named(timers, name)
        if area:
            timers = [t for t in timers if _same_area(t.area, area)]
        sameness: tuple[Callable[[Timer], bool], ...] = (
            lambda t: t.ctx.conversation_id == ctx.conversation_id,
            lambda t: bool(ctx.satellite_id) and t.ctx.satellite_id == ctx.satellite_id,
            lambda t: bool(ctx.device_id) and t.ctx.device_id == ctx.device_id,
            lambda t: _same_area(t.area, ctx.area))
        for same in sameness:
            found = [t for t in timers if same(t)]
            if found:
                return found
        return timers

    # --- running ------------------------------------------------------------------------------

    def _unschedule(self, timer_id: str) -> None:
        task = self._tasks.pop(timer_id, None)
        if task is not None:
            task.cancel()

    def _schedule(self, timer: Timer) -> None:
        if self._running and timer.active and timer.id not in self._tasks:
            self._tasks[timer.id] = asyncio.create_task(self._run(timer), name=f"timer {timer.id}")

    async def _run(self, timer: Timer) -> None:
        while (left := self.remaining_s(timer)) > 0:
            await asyncio.sleep(min(left, _CHECK_EVERY_S))
        late_s = max(0.0, self._clock() - timer.ends_at)
        self._tasks.pop(timer.id, None)
        if self._timers.pop(timer.id, None) is None:
            return  # cancelled meanwhile
        self._save()
        if timer.command is not None:
            await self._run_command(timer, timer.command)
            return
        language = timer.ctx.language
        text = phrase(language, "timer.finished", name=timer.label(language))
        _LOGGER.info("timer %s done (%.1f s late)", timer.id, late_s)
        await self._report(timer.ctx, text, "timer", {"timer_id": timer.id, "name": timer.name,
                                                      "duration_s": timer.duration_s,
                                                      "late_s": round(late_s, 1)})

    async def _run_command(self, timer: Timer, command: str) -> None:
        """A delayed command's turn, reported as any later outcome (its reply, kind "command")."""
        _LOGGER.info("timer %s done: running %r", timer.id, command)
        try:
            if self._commands is None:
                raise RuntimeError("no agent runs delayed commands")
            reply = await self._commands(command, timer.ctx)
        except Exception:  # the command's failure must not end the timers
            _LOGGER.exception("the delayed command %r failed", command)
            reply = phrase(timer.ctx.language, "error.generic")
        await self._report(timer.ctx, reply, "command", {"timer_id": timer.id, "command": command,
                                                         "duration_s": timer.duration_s})

    # --- persistence --------------------------------------------------------------------------

    def _load(self) -> list[Timer]:
        return self._file.load() or []

    def _save(self) -> None:
        self._file.save(self.timers(commands=True))


def _read_timers(saved: Any) -> Reading[list[Timer]]:
    entries = saved["timers"]
    if not isinstance(entries, list):
        raise ValueError("'timers' is not a list")
    timers, problems = [], []
    for entry in entries:
        try:
            timers.append(Timer.from_json(entry))
        except (KeyError, TypeError, ValueError, AttributeError):
            problems.append(f"a timer could not be read: {str(entry)[:80]}")
    return Reading(timers, tuple(problems), f"{len(timers)} of {len(entries)} timers run")


def _no_timers(text: str | None) -> Reading[list[Timer]]:
    return Reading([], ("unreadable",), "started without timers; they are in the copy")


def _named(timers: list[Timer], name: str) -> list[Timer]:
    """The timers called `name`: exactly, else holding it, else whose name's words were all said
    ("my pizza" said, "pizza" named)."""
    wanted = name.strip().casefold()
    exact = [t for t in timers if (t.name or "").casefold() == wanted]
    within = [t for t in timers if t.name and wanted in t.name.casefold()]
    said = set(wanted.split())
    return exact or within or [t for t in timers if t.name and set(t.name.casefold().split()) <= said]


def _same_area(started_in: str | None, said: str | None) -> bool:
    """Whether a timer started in `started_in` (an area id or name) is in the area `said`."""
    if not started_in or not said:
        return False

    def key(text: str) -> str:
        return "".join(ch for ch in fold(text) if ch.isalnum())
    return key(started_in) == key(said)
