"""The timer tools (HA's timer intents): start (with a delayed command, or not), cancel one or
all, pause, resume, add or remove time, and what is left; over `hub.home.timers.TimerService`.

A timer is meant by its name, the area it was started in ("the kitchen timer") or the duration
it was started with ("the 5 minute timer"); of several, the asking device's and then its area's
(`TimerService.find`). "Cancel all timers" cancels every one, or those of the area said.
"""

from __future__ import annotations

from typing import Any

from hub.core.messages import ToolSpec
from hub.core.tools import ToolContext, ToolError, ToolResult, ToolTraits
from hub.home.timers import MAX_NAME_CHARS, MAX_TIMER_S, Timer, TimerService, spoken_duration
from hub.locales import join_list, phrase

_NAME = {"type": "string", "maxLength": MAX_NAME_CHARS, "description": "what the timer is for"}
_AREA = {"type": "string", "maxLength": 100, "description": "the area it was started in"}
_COMMAND = {"type": "string", "maxLength": 500, "description": "a request to carry out when it ends"}
_DURATION = {"hours": {"type": "integer", "minimum": 0, "maximum": 24},
             "minutes": {"type": "integer", "minimum": 0, "maximum": 1440},
             "seconds": {"type": "integer", "minimum": 0, "maximum": 86400}}
# the timer a call means: its name, its area, or the duration it was started with (a selector,
# not bounded: while timers run the prompt holds every timer tool, and each token of it counts)
_START = {f"start_{unit}": {"type": "integer"} for unit in _DURATION}
_WHICH = {"name": _NAME, "area": _AREA, **_START}
_WHICH_TIMER = {"type": "object", "additionalProperties": False, "properties": _WHICH}


def _seconds(args: dict[str, Any], prefix: str = "") -> int:
    return int(args.get(f"{prefix}hours", 0) * 3600 + args.get(f"{prefix}minutes", 0) * 60
               + args.get(f"{prefix}seconds", 0))


def _found(service: TimerService, args: dict[str, Any], ctx: ToolContext) -> list[Timer]:
    found = service.find(args.get("name"), ctx, _seconds(args, "start_") or None, args.get("area"))
    if not found:
        said = args.get("name") or args.get("area") or phrase(ctx.language, "timer.word")
        raise ToolError(phrase(ctx.language, "entity.not_found", name=said), code="no_timer",
                        running=[t.name or t.id for t in service.timers()])
    return found


def _one(service: TimerService, args: dict[str, Any], ctx: ToolContext, active: bool | None = None) -> Timer:
    """The one timer meant (of those paused or running when `active` says, if that singles one
    out); several: which one?"""
    found = _found(service, args, ctx)
    if active is not None and len(found) > 1:
        found = [t for t in found if t.active == active] or found
    if len(found) > 1:
        options = join_list([t.label(ctx.language) for t in found], ctx.language)
        raise ToolError(phrase(ctx.language, "entity.ambiguous", options=options), code="ambiguous",
                        timers=[{"name": t.name, "duration_s": t.duration_s} for t in found])
    return found[0]


def _state(service: TimerService, timer: Timer) -> dict[str, Any]:
    return {"timer_id": timer.id, "name": timer.name, "area": timer.area, "duration_s": timer.duration_s,
            "remaining_s": round(service.remaining_s(timer)), "active": timer.active}


class _TimerTool(ToolTraits):
    def __init__(self, service: TimerService) -> None:
        self._service = service


class _RunningTimerTool(_TimerTool):
    """A tool for the timers that run: offered while one does."""

    def offered(self) -> bool:
        return bool(self._service.timers())


class StartTimer(_TimerTool):
    spec = ToolSpec("start_timer", "Start a timer; the user is told when it ends. With a command: "
                    "carry out that request when it ends instead (\"turn off the lights in 10 minutes\").", {
        "type": "object", "additionalProperties": False, "properties": {**_DURATION, "name": _NAME, "command": _COMMAND}})

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        total = _seconds(args)
        if not 1 <= total <= MAX_TIMER_S:
            raise ToolError(f"Give a duration between 1 second and {MAX_TIMER_S // 3600} hours "
                            "in hours, minutes and/or seconds.", code="invalid_arguments")
        duration = spoken_duration(total, ctx.language)
        command = (args.get("command") or "").strip()
        if command:
            return self._delayed(total, command, duration, ctx)
        timer = self._service.add(total, args.get("name"), ctx)
        return ToolResult(ok=True, pending=True, speech=phrase(ctx.language, "timer.started", duration=duration),
                          data={"timer_id": timer.id, "name": timer.name, "duration_s": total,
                                "status": "pending",
                                "message": "Timer running. The user will be told when it ends."})


    def _delayed(self, total: int, command: str, duration: str, ctx: ToolContext) -> ToolResult:
        if not self._service.runs_commands:
            raise ToolError(phrase(ctx.language, "error.not_understood"), code="unsupported",
                            detail="delayed commands need the agent")
        timer = self._service.add(total, None, ctx, command=command)
        return ToolResult(ok=True, speech=phrase(ctx.language, "timer.command_set", duration=duration),
                          data={"timer_id": timer.id, "command": command, "duration_s": total,
                                "message": "The command will be carried out when the timer ends."})


class CancelTimer(_RunningTimerTool):
    spec = ToolSpec("cancel_timer", "Cancel a running timer (by its name, its area or the duration it was "
                    "started with).", _WHICH_TIMER)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timer = _one(self._service, args, ctx)
        self._service.cancel(timer.id)
        return ToolResult(ok=True, speech=phrase(ctx.language, "timer.cancelled"),
                          data={"cancelled": timer.id, "name": timer.name})


class CancelAllTimers(_RunningTimerTool):
    spec = ToolSpec("cancel_all_timers", "Cancel every timer, or every timer of one area.", {
        "type": "object", "additionalProperties": False, "properties": {"area": _AREA}})

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        area = args.get("area")
        meant = [t for t in self._service.timers() if not area or t in self._service.find(None, ctx, area=area)]
        for timer in meant:
            self._service.cancel(timer.id)
        speech = phrase(ctx.language, "timer.cancelled_all", count=len(meant))
        return ToolResult(ok=True, speech=speech, data={"cancelled": [t.id for t in meant], "area": area})


class PauseTimer(_RunningTimerTool):
    spec = ToolSpec("pause_timer", "Pause a running timer.", _WHICH_TIMER)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timer = _one(self._service, args, ctx, active=True)
        self._service.pause(timer.id)
        return ToolResult(ok=True, speech=phrase(ctx.language, "timer.paused"), data=_state(self._service, timer))


class ResumeTimer(_RunningTimerTool):
    spec = ToolSpec("resume_timer", "Resume a paused timer.", _WHICH_TIMER)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timer = _one(self._service, args, ctx, active=False)
        self._service.resume(timer.id)
        return ToolResult(ok=True, speech=phrase(ctx.language, "timer.resumed"), data=_state(self._service, timer))


class ChangeTimer(_RunningTimerTool):
    spec = ToolSpec("change_timer", "Add time to a timer, or remove time from it (remove: true).", {
        "type": "object", "additionalProperties": False,
        "properties": {**_WHICH, **_DURATION, "remove": {"type": "boolean"}}})

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        change = _seconds(args)
        if change < 1:
            raise ToolError("Give the time to add or remove in hours, minutes and/or seconds.",
                            code="invalid_arguments")
        timer = _one(self._service, args, ctx)
        self._service.add_time(timer.id, -change if args.get("remove") else change)
        left = spoken_duration(self._service.remaining_s(timer), ctx.language)
        return ToolResult(ok=True, speech=phrase(ctx.language, "timer.left", duration=left),
                          data=_state(self._service, timer))


class TimerStatus(_RunningTimerTool):
    spec = ToolSpec("timer_status", "How much time is left on the running timers.", _WHICH_TIMER)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        found = _found(self._service, args, ctx)
        left = [(t, self._service.remaining_s(t)) for t in found]
        if len(left) == 1:
            speech = spoken_duration(left[0][1], ctx.language) + "."
        else:
            speech = "; ".join(f"{t.label(ctx.language)}: {spoken_duration(s, ctx.language)}"
                               for t, s in left) + "."
        return ToolResult(ok=True, speech=speech, data={"timers": [_state(self._service, t) for t, _ in left]})


def build_timer_tools(service: TimerService) -> list[Any]:
    return [tool(service) for tool in (StartTimer, CancelTimer, CancelAllTimers, PauseTimer, ResumeTimer,
                                       ChangeTimer, TimerStatus)]
