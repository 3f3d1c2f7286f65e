"""Waiting for entity states: long-running actions and "tell me when …" watches.

A tool cannot keep its turn open until a garage door has closed: the chat template wants each
tool result right after its call. So the tool acknowledges at once and a watch waits for the
target state through the store's listeners (HA state_changed events and MQTT state topics both
land there). When the state arrives — or the timeout passes — the outcome goes to an
`OutcomeSink` (the hub's reporter: conversation, MQTT, REST listeners, satellite).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

from hub.home.entities import Entity, EntityStore
from hub.home.outcomes import failed, failure_speech
from hub.core.tools import ToolContext, ToolError, ToolResult, ToolTraits
from hub.core.messages import ToolSpec
from hub.locales import phrase
from hub.locales.states import StateWord, state_word

_LOGGER = logging.getLogger(__name__)

DEFAULT_WATCH_MINUTES = 60
MAX_WATCH_MINUTES = 24 * 60


class OutcomeSink(Protocol):
    """Receives an outcome that arrived after its turn ended (the hub's reporter)."""

    async def __call__(self, ctx: ToolContext, text: str, kind: str, data: dict[str, Any]) -> Any: ...


Reached = Callable[[Entity], bool]
WatchCallback = Callable[[Entity | None], Awaitable[None]]


def _said(entity: Entity, state: str, language: str) -> StateWord:
    """The entity's `state` as spoken: the language's word for it, else the state itself (a
    custom state, as a label)."""
    return state_word(language, entity.domain, state, entity.device_class) \
        or StateWord(state.replace("_", " "), False)


@dataclass
class _Watch:
    id: int
    entity_id: str
    reached: Reached
    on_reached: WatchCallback
    on_timeout: WatchCallback
    timer: asyncio.TimerHandle | None = None


class StateWatches:
    """Calls back once an entity reaches a state, or once the timeout passes (whichever first)."""

    def __init__(self, store: EntityStore) -> None:
        self._store = store
        self._watches: dict[int, _Watch] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()
        self._remove_listener = store.add_listener(self._on_change)

    def watch(self, entity_id: str, reached: Reached, timeout_s: float,
              on_reached: WatchCallback, on_timeout: WatchCallback) -> int:
        """Start waiting. The caller checks the current state first: only changes count here."""
        watch = _Watch(next(self._ids), entity_id, reached, on_reached, on_timeout)
        watch.timer = asyncio.get_running_loop().call_later(timeout_s, self._expire, watch.id)
        self._watches[watch.id] = watch
        return watch.id

    def cancel(self, watch_id: int) -> bool:
        watch = self._watches.pop(watch_id, None)
        if watch is not None and watch.timer is not None:
            watch.timer.cancel()
        return watch is not None

    def active(self) -> list[str]:
        """Entity ids being waited for (one entry per watch)."""
        return [w.entity_id for w in self._watches.values()]

    async def close(self) -> None:
        self._remove_listener()
        for watch_id in list(self._watches):
            self.cancel(watch_id)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _on_change(self, old: Entity | None, new: Entity) -> None:
        for watch in [w for w in self._watches.values() if w.entity_id == new.entity_id]:
            try:
                done = watch.reached(new)
            except Exception:  # a bad predicate must not break the store's other listeners
                _LOGGER.exception("watch on %s failed", new.entity_id)
                done = False
            if done:
                self.cancel(watch.id)
                self._spawn(watch.on_reached(new))

    def _expire(self, watch_id: int) -> None:
        watch = self._watches.pop(watch_id, None)
        if watch is not None:
            self._spawn(watch.on_timeout(self._store.get(watch.entity_id)))

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _LOGGER.error("watch callback failed", exc_info=task.exception())


# --- long-running actions: acknowledge, then report ------------------------------------------


def expected_outcome(domain: str, service: str, data: dict[str, Any]) -> tuple[str, Reached] | None:
    """(target description, test) for a service whose completion is a later state change."""
    def state_is(*states: str) -> tuple[str, Reached]:
        return states[0], lambda e: e.state in states

    if domain in ("cover", "valve"):
        if service in ("open_cover", "open_valve"):
            return state_is("open")
        if service in ("close_cover", "close_valve"):
            return state_is("closed")
        if service in ("set_cover_position", "set_valve_position"):
            position = int(data["position"])
            return str(position), lambda e: (e.attributes.get("current_position") == position
                                             and e.state not in ("opening", "closing"))
    if domain == "vacuum":
        return {"start": state_is("cleaning"), "return_to_base": state_is("docked", "idle")}.get(service)
    if domain == "lawn_mower":
        return {"start_mowing": state_is("mowing"), "dock": state_is("docked")}.get(service)
    if domain == "lock":
        return {"lock": state_is("locked"), "unlock": state_is("unlocked", "open"),
                "open": state_is("open", "unlocked")}.get(service)
    if domain == "script" and service == "turn_on":
        return state_is("off")  # a script is "on" while it runs
    return None


class ActionTracker:
    """Turns a slow service call into an acknowledgement now and a report when it completes."""

    def __init__(self, watches: StateWatches, report: OutcomeSink, timeout_s: float = 120.0) -> None:
        self._watches = watches
        self._report = report
        self.timeout_s = timeout_s

    def acknowledge(self, entity: Entity, service: str, data: dict[str, Any],
                    ctx: ToolContext) -> ToolResult | None:
        """A pending ToolResult when `entity` (as it is right after the call) has not yet
        reached the service's target; None when there is nothing to wait for."""
        expected = expected_outcome(entity.domain, service, data)
        if expected is None:
            return None
        target, reached = expected
        if reached(entity):
            return None
        name, language = entity.name, ctx.language

        async def on_reached(now: Entity | None) -> None:
            assert now is not None
            failure = failure_speech(now, language)  # it reported that it failed: say why
            text = failure or _spoken_outcome(now, language).sentence(language, name, "action.reported")
            await self._report(ctx, text, "action", {"entity_id": now.entity_id, "service": service,
                                                    "state": now.state, "ok": failure is None})

        async def on_timeout(now: Entity | None) -> None:
            state = now.state if now is not None else "unavailable"
            text = phrase(language, "action.failed",
                          reason=_said(entity, state, language).sentence(language, name))
            await self._report(ctx, text, "action", {"entity_id": entity.entity_id, "service": service,
                                                    "state": state, "ok": False, "timed_out": True})

        self._watches.watch(entity.entity_id, lambda e: reached(e) or failed(e), self.timeout_s,
                            on_reached, on_timeout)
        return ToolResult(
            ok=True, pending=True, speech=phrase(language, "action.acknowledged", name=name),
            changed_entities=(entity.entity_id,),
            data={"entity_id": entity.entity_id, "name": name, "state": entity.state,
                  "status": "pending", "target": target,
                  "message": "Command sent. The outcome will be reported to the user when it is done."})


def _spoken_outcome(entity: Entity, language: str) -> StateWord:
    position = entity.attributes.get("current_position")
    if entity.domain in ("cover", "valve") and entity.state == "open" and position not in (None, 100):
        return StateWord(phrase(language, "unit.percent", value=position), True)
    return _said(entity, entity.state, language)


# --- "tell me when …" --------------------------------------------------------------------------


class NotifyWhen(ToolTraits):
    """Tool: report when an entity reaches a state (within a timeout)."""

    spec = ToolSpec(
        "notify_when",
        "Tell the user later when a device reaches a state, like the washing machine turning off.",
        {"type": "object", "additionalProperties": False, "required": ["entity_id", "state"],
         "properties": {
             "entity_id": {"type": "string"},
             "state": {"type": "string", "minLength": 1, "maxLength": 64},
             "timeout_minutes": {"type": "integer", "minimum": 1, "maximum": MAX_WATCH_MINUTES},
         }},
        entity_args=("entity_id",),
    )

    def __init__(self, store: EntityStore, watches: StateWatches, report: OutcomeSink) -> None:
        self._store = store
        self._watches = watches
        self._report = report

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        entity = self._store.get(args["entity_id"])
        if entity is None:
            raise ToolError(phrase(ctx.language, "entity.not_found", name=args["entity_id"]),
                            code="unknown_entity")
        target = args["state"].strip().lower().replace(" ", "_")
        language, name = ctx.language, entity.name
        minutes = args.get("timeout_minutes", DEFAULT_WATCH_MINUTES)

        def reached(e: Entity) -> bool:
            return bool(e.state.lower() == target)

        now_text = _said(entity, entity.state, language).sentence(language, name)
        if reached(entity):
            return ToolResult(ok=True, speech=now_text, data={
                "entity_id": entity.entity_id, "state": entity.state, "status": "already"})

        async def on_reached(now: Entity | None) -> None:
            assert now is not None
            text = _said(now, now.state, language).sentence(language, name, "action.reported")
            await self._report(ctx, text, "watch", {"entity_id": now.entity_id, "state": now.state,
                                                   "ok": True})

        async def on_timeout(now: Entity | None) -> None:
            state = now.state if now is not None else "unavailable"
            text = _said(entity, state, language).sentence(language, name)
            await self._report(ctx, text, "watch", {"entity_id": entity.entity_id, "state": state,
                                                   "ok": False, "timed_out": True})

        self._watches.watch(entity.entity_id, reached, minutes * 60.0, on_reached, on_timeout)
        return ToolResult(ok=True, pending=True, speech=phrase(language, "action.done"), data={
            "entity_id": entity.entity_id, "state": entity.state, "watching_for": target,
            "status": "pending", "timeout_minutes": minutes,
            "message": "Watching. The user will be told when it happens."})
