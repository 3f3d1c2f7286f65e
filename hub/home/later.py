"""Acknowledge now, report later: the hub's results that arrive after their turn ended.

A timer fires, a garage door finishes closing, a watched washing machine turns off: the tool
acknowledged at once, and its outcome comes later through the `Reporter`, which gets (ToolContext
of the original request, spoken text in its language, kind, data) and
1. logs it,
2. appends it to the conversation (`agent.report`, connected once the agent exists), so the
   next turn knows — and the agent's observers (the MQTT API) see it as an event,
3. hands it to every sink: `ReportHub` (REST/SSE listeners, the recent reports), the MQTT API's
   `<base>/report` (hub.interfaces.mqtt.reports), the announcer that speaks it on the satellite
   the request came from (hub.backends.ha.announcer). A failing sink never stops the others.

`Later` builds the tools that report (timers, notify_when, the slow actions' tracker) with their
reporter; the composition root connects the agent, MQTT and Home Assistant to it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

from hub.core.tools import Tool, ToolContext
from hub.home.entities import EntityStore
from hub.home.timer_tools import build_timer_tools
from hub.home.timers import TimerService
from hub.home.watches import ActionTracker, NotifyWhen, StateWatches

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Report:
    conversation_id: str
    text: str  # spoken, in `language`
    language: str
    kind: str  # timer | action | watch
    source: str  # the interface the original request came from
    satellite_id: str | None = None
    device_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)  # epoch seconds

    def as_json(self) -> dict[str, Any]:
        return {"type": "report", "event_type": "reported", **asdict(self)}


ReportSink = Callable[[Report], Awaitable[None] | None]


class ConversationLog(Protocol):
    async def report(self, conversation_id: str, text: str) -> None: ...


class Reporter:
    """The one place outcomes are delivered; timers and watches call it as their OutcomeSink."""

    def __init__(self, agent: ConversationLog | None = None, sinks: tuple[ReportSink, ...] = ()) -> None:
        self._agent = agent
        self._sinks: list[ReportSink] = list(sinks)

    def connect_agent(self, agent: ConversationLog) -> None:
        """The agent whose conversations get the reports: it is built after the tools that
        report (they are in its registry), so the composition root connects it, once."""
        assert self._agent is None, "the reporter already reports to an agent"
        self._agent = agent

    def add_sink(self, sink: ReportSink) -> Callable[[], None]:
        self._sinks.append(sink)
        return lambda: self._sinks.remove(sink) if sink in self._sinks else None

    async def __call__(self, ctx: ToolContext, text: str, kind: str, data: dict[str, Any]) -> Report:
        report = Report(ctx.conversation_id, text, ctx.language, kind, ctx.source,
                        ctx.satellite_id, ctx.device_id, dict(data))
        _LOGGER.info("report (%s) to %s from %s: %s %s", kind, ctx.conversation_id, ctx.source, text, data)
        if self._agent is not None:
            try:
                await self._agent.report(ctx.conversation_id, text)
            except Exception:
                _LOGGER.exception("could not add the report to conversation %s", ctx.conversation_id)
        for sink in list(self._sinks):
            try:
                result = sink(report)
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                _LOGGER.exception("report sink %r failed", sink)
        return report


class ReportSubscription:
    """Reports as they arrive: `async for report in subscription`; close() (or `async with`) ends it.

    A listener that falls `max_queued` reports behind loses the oldest ones (logged), so a stuck
    HTTP client cannot grow the hub's memory.
    """

    def __init__(self, hub: "ReportHub", conversation_id: str | None, max_queued: int) -> None:
        self._hub = hub
        self.conversation_id = conversation_id
        self._max_queued = max_queued
        self._queue: asyncio.Queue[Report | None] = asyncio.Queue()  # bounded by offer()
        self.dropped = 0

    def offer(self, report: Report) -> None:
        if self.conversation_id is not None and report.conversation_id != self.conversation_id:
            return
        if self._queue.qsize() >= self._max_queued:
            self._queue.get_nowait()
            self.dropped += 1
            _LOGGER.warning("a report listener is behind; dropped its oldest report")
        self._queue.put_nowait(report)

    def close(self) -> None:
        """End the iteration after the reports already queued."""
        if self in self._hub._subscriptions:
            self._hub._subscriptions.discard(self)
            self._queue.put_nowait(None)

    async def __aenter__(self) -> "ReportSubscription":
        return self

    async def __aexit__(self, *_exc: Any) -> None:
        self.close()

    def __aiter__(self) -> AsyncIterator[Report]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Report]:
        while True:
            report = await self._queue.get()
            if report is None:
                return
            yield report


class ReportHub:
    """Async pub/sub of reports for REST/SSE listeners; also keeps the most recent ones."""

    def __init__(self, keep: int = 50) -> None:
        self._subscriptions: set[ReportSubscription] = set()
        self._recent: deque[Report] = deque(maxlen=keep)

    def subscribe(self, conversation_id: str | None = None, max_queued: int = 100) -> ReportSubscription:
        """Every later report (or only one conversation's)."""
        subscription = ReportSubscription(self, conversation_id, max_queued)
        self._subscriptions.add(subscription)
        return subscription

    def recent(self, conversation_id: str | None = None) -> list[Report]:
        return [r for r in self._recent if conversation_id is None or r.conversation_id == conversation_id]

    def __call__(self, report: Report) -> None:
        self._recent.append(report)
        for subscription in list(self._subscriptions):
            subscription.offer(report)

    def close(self) -> None:
        for subscription in list(self._subscriptions):
            subscription.close()


class Announcer(Protocol):
    """A sink that speaks reports somewhere (HA's satellites), with announcements in flight."""

    def __call__(self, report: Report) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class LaterOptions:
    action_report_timeout: int
    announce_reports: bool
    state_dir: Path  # timers are kept there across restarts


class Later:
    """The tools whose outcome comes later, their reporter and its REST/SSE listeners."""

    def __init__(self, options: LaterOptions, store: EntityStore) -> None:
        self.options = options
        self.store = store
        self.reports = ReportHub()  # REST/SSE listeners subscribe here
        self.reporter = Reporter(sinks=(self.reports,))
        self.watches = StateWatches(store)
        self.tracker = ActionTracker(self.watches, self.reporter, float(options.action_report_timeout))
        self.timers = TimerService(options.state_dir, self.reporter)
        self.announcer: Announcer | None = None

    def tools(self) -> list[Tool]:
        """start_timer, cancel_timer, timer_status, notify_when."""
        return [*build_timer_tools(self.timers), NotifyWhen(self.store, self.watches, self.reporter)]

    def add_announcer(self, announcer: Announcer) -> None:
        """Speak reports with `announcer` too, if the options allow it (`announce_reports`)."""
        if self.options.announce_reports and self.announcer is None:
            self.announcer = announcer
            self.reporter.add_sink(announcer)

    async def start(self) -> None:
        await self.timers.start()

    async def stop(self) -> None:
        await self.timers.stop()
        await self.watches.close()
        if self.announcer is not None:
            await self.announcer.close()
        self.reports.close()
