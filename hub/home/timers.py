"""The hub's own timers: start, cancel, ask what is left.

A timer belongs to the request that started it (its ToolContext: conversation, language,
interface, satellite), so its "done" is reported there. Timers are kept in `timers.json` in the
state folder, written on every change, so a restart keeps them: each fires at its wall-clock end,
or at once after start when that end passed while the hub was down (the report says how late).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from hub.core.tools import ToolContext, ToolError, ToolResult, ToolTraits
from hub.home.watches import OutcomeSink
from hub.core.messages import ToolSpec
from hub.locales import join_list, phrase, plural_phrase

_LOGGER = logging.getLogger(__name__)

TIMERS_FILE = "timers.json"
MAX_TIMER_S = 24 * 3600
MAX_NAME_CHARS = 60
_CHECK_EVERY_S = 30.0  # re-read the wall clock at least this often (it can jump)


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
    ends_at: float  # epoch seconds
    ctx: ToolContext

    def label(self, language: str) -> str:
        """What the timer is called when spoken: its name, else its duration."""
        return self.name or spoken_duration(self.duration_s, language)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "duration_s": self.duration_s,
                "ends_at": self.ends_at, "ctx": asdict(self.ctx)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Timer":
        ctx = ToolContext(**{k: data["ctx"][k] for k in ToolContext.__dataclass_fields__ if k in data["ctx"]})
        name = data.get("name")
        return cls(str(data["id"]), str(name) if name else None, int(data["duration_s"]),
                   float(data["ends_at"]), ctx)


class TimerService:
    """start/stop component; tools call `add`, `cancel`, `find`, `remaining_s`."""

    def __init__(self, state_dir: Path, report: OutcomeSink,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(state_dir) / TIMERS_FILE
        self._report = report
        self._clock = clock
        self._timers: dict[str, Timer] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._running = False

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

    def add(self, duration_s: int, name: str | None, ctx: ToolContext) -> Timer:
        if not 1 <= duration_s <= MAX_TIMER_S:
            raise ValueError(f"a timer runs 1 s to {MAX_TIMER_S} s, not {duration_s} s")
        timer = Timer(uuid.uuid4().hex[:8], (name or "").strip()[:MAX_NAME_CHARS] or None,
                      int(duration_s), self._clock() + duration_s, ctx)
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
        task = self._tasks.pop(timer_id, None)
        if task is not None:
            task.cancel()
        self._save()
        _LOGGER.info("timer %s cancelled", timer_id)
        return timer

    def timers(self) -> list[Timer]:
        return sorted(self._timers.values(), key=lambda t: t.ends_at)

    def remaining_s(self, timer: Timer) -> float:
        return max(0.0, timer.ends_at - self._clock())

    def find(self, name: str | None, ctx: ToolContext, duration_s: int | None = None) -> list[Timer]:
        """By name when given; else this conversation's, else this satellite's, else all;
        `duration_s`: only those started for that long ("the 5 minute timer")."""
        timers = [t for t in self.timers() if duration_s is None or t.duration_s == duration_s]
        if name and name.strip():
            wanted = name.strip().casefold()
            exact = [t for t in timers if (t.name or "").casefold() == wanted]
            within = [t for t in timers if t.name and wanted in t.name.casefold()]
            said = set(wanted.split())  # "my pizza" said, "pizza" named: the name's words among those said
            return exact or within or [t for t in timers if t.name and set(t.name.casefold().split()) <= said]
        sameness: tuple[Callable[[Timer], bool], ...] = (
            lambda t: t.ctx.conversation_id == ctx.conversation_id,
            lambda t: bool(ctx.satellite_id) and t.ctx.satellite_id == ctx.satellite_id,
            lambda t: bool(ctx.device_id) and t.ctx.device_id == ctx.device_id)
        for same in sameness:
            found = [t for t in timers if same(t)]
            if found:
                return found
        return timers

    # --- running ------------------------------------------------------------------------------

    def _schedule(self, timer: Timer) -> None:
        if self._running and timer.id not in self._tasks:
            self._tasks[timer.id] = asyncio.create_task(self._run(timer), name=f"timer {timer.id}")

    async def _run(self, timer: Timer) -> None:
        while (left := timer.ends_at - self._clock()) > 0:
            await asyncio.sleep(min(left, _CHECK_EVERY_S))
        late_s = max(0.0, self._clock() - timer.ends_at)
        self._tasks.pop(timer.id, None)
        if self._timers.pop(timer.id, None) is None:
            return  # cancelled meanwhile
        self._save()
        language = timer.ctx.language
        text = phrase(language, "timer.finished", name=timer.label(language))
        _LOGGER.info("timer %s done (%.1f s late)", timer.id, late_s)
        await self._report(timer.ctx, text, "timer", {"timer_id": timer.id, "name": timer.name,
                                                      "duration_s": timer.duration_s,
                                                      "late_s": round(late_s, 1)})

    # --- persistence --------------------------------------------------------------------------

    def _load(self) -> list[Timer]:
        if not self.path.exists():
            return []
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8"))["timers"]
            if not isinstance(entries, list):
                raise ValueError("'timers' is not a list")
        except (OSError, ValueError, KeyError, TypeError) as err:
            kept = self.path.with_name(f"{self.path.name}.bad-{int(self._clock())}")
            os.replace(self.path, kept)
            _LOGGER.error("unreadable %s (%s): kept it as %s and started without timers", self.path, err, kept)
            return []
        timers = []
        for entry in entries:
            try:
                timers.append(Timer.from_json(entry))
            except (KeyError, TypeError, ValueError) as err:
                _LOGGER.error("skipping an unreadable timer in %s (%s): %r", self.path, err, entry)
        return timers

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        data = {"version": 1, "timers": [t.to_json() for t in self.timers()]}
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)


# --- tools --------------------------------------------------------------------------------------

_NAME = {"type": "string", "maxLength": MAX_NAME_CHARS, "description": "what the timer is for"}
_DURATION = {"hours": {"type": "integer", "minimum": 0, "maximum": 24},
             "minutes": {"type": "integer", "minimum": 0, "maximum": 1440},
             "seconds": {"type": "integer", "minimum": 0, "maximum": 86400}}
# the timer a cancel or status call means: its name, or the duration it was started with
_WHICH_TIMER = {"type": "object", "additionalProperties": False, "properties": {"name": _NAME, **_DURATION}}


def _seconds(args: dict[str, Any]) -> int:
    return int(args.get("hours", 0) * 3600 + args.get("minutes", 0) * 60 + args.get("seconds", 0))


class StartTimer(ToolTraits):
    spec = ToolSpec("start_timer", "Start a timer; the user is told when it ends.", {
        "type": "object", "additionalProperties": False, "properties": {**_DURATION, "name": _NAME}})

    def __init__(self, service: TimerService) -> None:
        self._service = service

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        total = _seconds(args)
        if not 1 <= total <= MAX_TIMER_S:
            raise ToolError(f"Give a duration between 1 second and {MAX_TIMER_S // 3600} hours "
                            "in hours, minutes and/or seconds.", code="invalid_arguments")
        timer = self._service.add(total, args.get("name"), ctx)
        duration = spoken_duration(total, ctx.language)
        return ToolResult(ok=True, pending=True, speech=phrase(ctx.language, "timer.started", duration=duration),
                          data={"timer_id": timer.id, "name": timer.name, "duration_s": total,
                                "status": "pending",
                                "message": "Timer running. The user will be told when it ends."})


def _one_timer(service: TimerService, args: dict[str, Any], ctx: ToolContext) -> list[Timer]:
    found = service.find(args.get("name"), ctx, _seconds(args) or None)
    if not found:
        raise ToolError(phrase(ctx.language, "entity.not_found", name=args.get("name") or phrase(ctx.language, "timer.word")),
                        code="no_timer", running=[t.name or t.id for t in service.timers()])
    return found


class CancelTimer(ToolTraits):
    spec = ToolSpec("cancel_timer", "Cancel a running timer (by its name or the duration it was started with).",
                    _WHICH_TIMER)

    def __init__(self, service: TimerService) -> None:
        self._service = service

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        found = _one_timer(self._service, args, ctx)
        if len(found) > 1:
            options = join_list([t.label(ctx.language) for t in found], ctx.language)
            raise ToolError(phrase(ctx.language, "entity.ambiguous", options=options), code="ambiguous",
                            timers=[{"name": t.name, "duration_s": t.duration_s} for t in found])
        timer = self._service.cancel(found[0].id)
        return ToolResult(ok=True, speech=phrase(ctx.language, "action.done"),
                          data={"cancelled": found[0].id, "name": timer.name if timer else None})


class TimerStatus(ToolTraits):
    spec = ToolSpec("timer_status", "How much time is left on the running timers.", _WHICH_TIMER)

    def __init__(self, service: TimerService) -> None:
        self._service = service

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        found = _one_timer(self._service, args, ctx)
        left = [(t, self._service.remaining_s(t)) for t in found]
        if len(left) == 1:
            speech = spoken_duration(left[0][1], ctx.language) + "."
        else:
            speech = "; ".join(f"{t.label(ctx.language)}: {spoken_duration(s, ctx.language)}"
                               for t, s in left) + "."
        return ToolResult(ok=True, speech=speech, data={"timers": [
            {"name": t.name, "duration_s": t.duration_s, "remaining_s": round(s)} for t, s in left]})


def build_timer_tools(service: TimerService) -> list[Any]:
    return [StartTimer(service), CancelTimer(service), TimerStatus(service)]
