"""Reports spoken on the Home Assistant satellite the request came from (`assist_satellite.announce`)."""

from __future__ import annotations

import asyncio
import logging

from hub.backends.ha.client import HAClient
from hub.home.later import Report

_LOGGER = logging.getLogger(__name__)


class SatelliteAnnouncer:
    """Speaks a report on the HA satellite the request came from, when it is known (a report sink).

    HA waits until the announcement has played, so each runs in the background; `close()` ends
    the ones still running.
    """

    def __init__(self, ha: HAClient) -> None:
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
