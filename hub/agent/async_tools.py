"""Acknowledge, then report: the hub's asynchronous tools and their reporter, built together."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub.agent.reports import MqttReportPublisher, Publisher, ReportHub, Reporter, SatelliteAnnouncer, ServiceCaller
from hub.home.entities import EntityStore
from hub.home.timer_tools import build_timer_tools
from hub.home.timers import TimerService
from hub.home.watches import ActionTracker, NotifyWhen, StateWatches


@dataclass(frozen=True)
class AsyncToolsOptions:
    action_report_timeout: int
    announce_reports: bool
    state_dir: Path  # timers are kept there across restarts


class AsyncTools:
    def __init__(self, options: AsyncToolsOptions, store: EntityStore) -> None:
        self.options = options
        self.store = store
        self.reports = ReportHub()  # REST/SSE listeners subscribe here
        self.reporter = Reporter(sinks=(self.reports,))
        self.watches = StateWatches(store)
        self.tracker = ActionTracker(self.watches, self.reporter, float(options.action_report_timeout))
        self.timers = TimerService(options.state_dir, self.reporter)
        self.announcer: SatelliteAnnouncer | None = None

    def tools(self) -> list[Any]:
        """start_timer, cancel_timer, timer_status, notify_when."""
        return [*build_timer_tools(self.timers), NotifyWhen(self.store, self.watches, self.reporter)]

    def connect_mqtt(self, client: Publisher | None, base_topic: str) -> None:
        """Publish every report on `<base_topic>/report` (no-op when MQTT is off)."""
        if client is not None:
            self.reporter.add_sink(MqttReportPublisher(client, base_topic))

    def connect_home_assistant(self, ha: ServiceCaller | None) -> None:
        """Announce reports on the satellite a request came from, if the option allows."""
        if ha is not None and self.options.announce_reports and self.announcer is None:
            self.announcer = SatelliteAnnouncer(ha)
            self.reporter.add_sink(self.announcer)

    async def start(self) -> None:
        await self.timers.start()

    async def stop(self) -> None:
        await self.timers.stop()
        await self.watches.close()
        if self.announcer is not None:
            await self.announcer.close()
        self.reports.close()
