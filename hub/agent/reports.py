"""Outcomes that arrive after their turn ended ("acknowledge, then report"), and where they go.

A timer fires, a garage door finishes closing, a watched washing machine turns off: the
`Reporter` gets (ToolContext of the original request, spoken text in its language, kind, data)
and
1. logs it,
2. appends it to the conversation (`agent.report`, connected once the agent exists), so the
   next turn knows — and the agent's observers (the MQTT API) see it as an event,
3. hands it to every sink: `ReportHub` (REST/SSE listeners), `MqttReportPublisher`
   (`<base>/report`), `SatelliteAnnouncer` (HA `assist_satellite.announce` on the satellite the
   request came from). A failing sink is logged and never stops the others.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

from hub.core.tools import ToolContext

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


class Publisher(Protocol):
    def publish(self, topic: str, payload: Any, *, qos: int = 0, retain: bool = False) -> Any: ...


class MqttReportPublisher:
    """Publishes each report as JSON on `<base>/report` (QoS 1, kept while the broker is away)."""

    def __init__(self, client: Publisher, base_topic: str) -> None:
        self._client = client
        self.topic = f"{base_topic.rstrip('/')}/report"

    def __call__(self, report: Report) -> None:
        self._client.publish(self.topic, report.as_json(), qos=1)


class ServiceCaller(Protocol):
    async def call_service(self, domain: str, service: str, data: dict[str, Any]) -> Any: ...


class SatelliteAnnouncer:
    """Speaks a report on the HA satellite the request came from (`assist_satellite.announce`).

    HA waits until the announcement has played, so each runs in the background; `close()` ends
    the ones still running.
    """

    def __init__(self, ha: ServiceCaller) -> None:
        self._ha = ha
        self._tasks: set[asyncio.Task[None]] = set()

    @staticmethod
    def target(report: Report) -> dict[str, str] | None:
        """The service target: the satellite entity, else its device; None when neither is known."""
        if report.satellite_id and report.satellite_id.startswith("assist_satellite."):
            return {"entity_id": report.satellite_id}
        if report.device_id:
            return {"device_id": report.device_id}
        return None

    def __call__(self, report: Report) -> None:
        target = self.target(report)
        if target is None:
            return
        task = asyncio.ensure_future(self._announce(target, report))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _announce(self, target: dict[str, str], report: Report) -> None:
        try:
            await self._ha.call_service("assist_satellite", "announce", {**target, "message": report.text})
            _LOGGER.info("announced on %s: %s", target, report.text)
        except Exception as err:
            _LOGGER.warning("could not announce on %s: %s", target, err)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
