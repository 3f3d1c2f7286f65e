"""Where reports go: REST listeners (ReportHub), the HA satellite the request came from
(assist_satellite.announce through the hub's real HA REST client, against a small recording HTTP
server standing in for HA), and a failing sink never stops the others."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiohttp import web

from hub.backends.ha.announcer import SatelliteAnnouncer
from hub.home.later import Report, ReportHub, Reporter
from hub.backends.ha.client import HAClient, HAEndpoint
from hub.core.tools import ToolContext
from hub.core.messages import ToolCall
from hub.locales import phrase

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import eventually

pytestmark = pytest.mark.timeout(60)


class RecordingHA:
    """Answers HA's REST service calls like HA does ([] of changed states) and records them."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.calls: list[tuple[str, dict, str]] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/services/{domain}/{service}", self._service)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _service(self, request: web.Request) -> web.Response:
        path = f"{request.match_info['domain']}.{request.match_info['service']}"
        self.calls.append((path, await request.json(), request.headers.get("Authorization", "")))
        if self.status != 200:
            return web.Response(status=self.status, text="boom")
        return web.json_response([])


@pytest.fixture
async def fake_ha():
    ha = RecordingHA()
    await ha.start()
    yield ha
    await ha.stop()


async def test_timer_from_a_satellite_is_announced_there_in_its_language(tmp_path, fake_ha) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]))
    client = HAClient(HAEndpoint.from_url(fake_ha.url, "secret-token"))
    hub.later.add_announcer(SatelliteAnnouncer(client))
    await hub.start()
    try:
        satellite = ToolContext("k1", language="de", source="wyoming", satellite_id="assist_satellite.kitchen",
                                device_id="dev1")
        from_mqtt = ToolContext("m1", language="en", source="mqtt")
        assert (await hub.registry.call(ToolCall("start_timer", {"seconds": 1}), satellite)).ok
        assert (await hub.registry.call(ToolCall("start_timer", {"seconds": 1}), from_mqtt)).ok
        await eventually(lambda: len(hub.later.reports.recent()) == 2, timeout=10)
        await eventually(lambda: fake_ha.calls, timeout=5)
        await asyncio.sleep(0.2)
        assert fake_ha.calls == [("assist_satellite.announce", {
            "entity_id": "assist_satellite.kitchen",
            "message": phrase("de", "timer.finished", name="1 Sekunde")}, "Bearer secret-token")]
    finally:
        await hub.stop()
        await client.close()


async def test_announcing_is_off_when_the_option_is_off(tmp_path, fake_ha) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), announce_reports=False)
    client = HAClient(HAEndpoint.from_url(fake_ha.url, "t"))
    hub.later.add_announcer(SatelliteAnnouncer(client))
    await hub.start()
    try:
        ctx = ToolContext("k1", source="wyoming", satellite_id="assist_satellite.kitchen")
        await hub.registry.call(ToolCall("start_timer", {"seconds": 1}), ctx)
        await eventually(lambda: hub.later.reports.recent(), timeout=10)
        await asyncio.sleep(0.3)
        assert fake_ha.calls == [] and hub.later.announcer is None
    finally:
        await hub.stop()
        await client.close()


async def test_a_failing_sink_or_ha_error_does_not_stop_the_others(fake_ha, caplog) -> None:
    fake_ha.status = 500
    client = HAClient(HAEndpoint.from_url(fake_ha.url, "t"))
    announcer = SatelliteAnnouncer(client)
    received: list[Report] = []

    def broken(report: Report) -> None:
        raise RuntimeError("sink bug")

    class Conversations:
        def __init__(self) -> None:
            self.added: list[tuple[str, str]] = []

        async def report(self, conversation_id: str, text: str) -> None:
            self.added.append((conversation_id, text))

    conversations = Conversations()
    reporter = Reporter(conversations, sinks=(broken, announcer, received.append))
    caplog.set_level(logging.INFO)
    ctx = ToolContext("c9", source="wyoming", device_id="dev-7")
    report = await reporter(ctx, "The washing machine is now off.", "watch", {"entity_id": "switch.washer"})
    assert conversations.added == [("c9", "The washing machine is now off.")]
    assert received == [report]
    await eventually(lambda: fake_ha.calls, timeout=5)
    assert fake_ha.calls[0][:2] == ("assist_satellite.announce", {"device_id": "dev-7",
                                                                   "message": "The washing machine is now off."})
    await eventually(lambda: "could not announce" in caplog.text, timeout=5)
    assert "sink bug" in caplog.text and "report (watch) to c9 from wyoming" in caplog.text
    await announcer.close()
    await client.close()


async def test_report_hub_filters_and_drops_the_oldest_for_slow_listeners() -> None:
    hub = ReportHub(keep=3)
    everything = hub.subscribe()
    only_c2 = hub.subscribe(conversation_id="c2", max_queued=2)
    for number in range(5):
        hub(Report(f"c{number % 3}", f"report {number}", "en", "timer", "cli"))
    assert [r.text for r in hub.recent()] == ["report 2", "report 3", "report 4"]
    assert [r.text for r in hub.recent("c2")] == ["report 2"]
    hub.close()
    assert [r.text async for r in everything] == [f"report {n}" for n in range(5)]
    assert [r.text async for r in only_c2] == ["report 2"] and only_c2.dropped == 0
    slow = hub.subscribe(max_queued=2)
    for number in range(4):
        hub(Report("c1", f"late {number}", "en", "timer", "cli"))
    slow.close()
    assert [r.text async for r in slow] == ["late 2", "late 3"] and slow.dropped == 2
    hub(Report("c1", "after close", "en", "timer", "cli"))  # a closed listener gets nothing more
    json_form = Report("c1", "x", "en", "action", "mqtt", data={"ok": True}).as_json()
    assert json_form["type"] == "report" and json_form["conversation_id"] == "c1" and json_form["data"] == {"ok": True}


def test_announce_target() -> None:
    def report(**fields) -> Report:
        return Report("c", "t", "en", "timer", "wyoming", **fields)

    assert SatelliteAnnouncer.target(report(satellite_id="assist_satellite.hall")) == {"entity_id": "assist_satellite.hall"}
    assert SatelliteAnnouncer.target(report(satellite_id="not-an-entity", device_id="d1")) == {"device_id": "d1"}
    assert SatelliteAnnouncer.target(report()) is None


async def test_a_waiting_listener_wakes_up_for_each_report() -> None:
    hub = ReportHub()
    got: list[str] = []

    async def listen() -> None:
        async with hub.subscribe() as reports:
            async for report in reports:
                got.append(report.text)
                if len(got) == 2:
                    return

    listener = asyncio.create_task(listen())
    await asyncio.sleep(0.05)
    hub(Report("c1", "first", "en", "timer", "rest"))
    await eventually(lambda: got == ["first"], timeout=2)
    hub(Report("c2", "second", "en", "watch", "rest"))
    await asyncio.wait_for(listener, 2)
    assert got == ["first", "second"]
    hub(Report("c3", "third", "en", "watch", "rest"))  # the listener left: nothing queued for it
