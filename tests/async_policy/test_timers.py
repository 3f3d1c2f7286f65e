"""Timers: started in a turn, fired later as a report (conversation, MQTT on a real mosquitto,
REST listeners), seen by the next turn; kept across a restart; cancel and status."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from hub.agent.types import TurnRequest
from hub.home.timers import TIMERS_FILE, TimerService, spoken_duration
from hub.core.tools import ToolContext
from hub.transport.mqtt_client import BrokerSettings
from hub.interfaces.mqtt.reports import MqttReportPublisher
from hub.mqtt_stack import MqttStack
from hub.core.messages import ToolCall
from hub.llm.types import GenerationRequest, ToolCallDelta
from hub.locales import phrase
from hub.settings import RuntimeSettings

from async_policy.async_helpers import TestHub, prompt_text
from helpers.scripted_engine import ScriptedEngine, call, text
from mqtt.mqtt_helpers import Sniffer, eventually, json_with

pytestmark = pytest.mark.timeout(90)


class Collected:
    """An OutcomeSink that keeps what it gets."""

    def __init__(self) -> None:
        self.reports: list[tuple[ToolContext, str, str, dict]] = []

    async def __call__(self, ctx: ToolContext, text: str, kind: str, data: dict) -> None:
        self.reports.append((ctx, text, kind, data))


async def test_a_timer_brought_to_zero_ends_now_paused_or_not(tmp_path) -> None:
    """As HA's: removing all the time left ends a timer, a paused one too (th OHF: "ลดเวลา5นาที
    จากตัวจับเวลา1ชั่วโมง" left a paused timer at 0 s, forever)."""
    collected = Collected()
    service = TimerService(tmp_path, collected)
    await service.start()
    try:
        running = service.add(600, "tea", ToolContext("c1"))
        paused = service.add(3600, "eggs", ToolContext("c2"))
        service.pause(paused.id)
        service.add_time(running.id, -600)
        service.add_time(paused.id, -3700)
        await eventually(lambda: len(collected.reports) == 2, timeout=5)
        assert sorted(said for _, said, _, _ in collected.reports) == ["The eggs timer is done.", "The tea timer is done."]
        assert service.timers() == []
    finally:
        await service.stop()


async def test_timer_fires_later_and_reaches_mqtt_the_conversation_and_the_next_turn(tmp_path, mosquitto) -> None:
    done_text = phrase("en", "timer.finished", name="tea")

    def follow_up(request: GenerationRequest):
        assert done_text in prompt_text(request), "the next turn's prompt must carry the report"
        return text("Yes, your tea timer is done.")

    engine = ScriptedEngine([[ToolCallDelta(ToolCall("start_timer", {"seconds": 2, "name": "tea"}))], text("Your tea timer is running."),
                             follow_up])
    hub = TestHub(tmp_path, engine, mqtt_host="127.0.0.1", mqtt_port=mosquitto.port)
    agent = hub.agent
    stack = MqttStack(hub.options.mqtt, store=hub.store, settings=RuntimeSettings(hub.options.settings), agent=agent,
                      broker=BrokerSettings("127.0.0.1", mosquitto.port), demo_home=False)
    await stack.start()
    hub.later.reporter.add_sink(MqttReportPublisher(stack.client, stack.topics.base))
    await hub.start()
    base = stack.topics.base
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{base}/report", f"{base}/event"])
    listener = hub.later.reports.subscribe(conversation_id="c1")
    try:
        started = time.monotonic()
        first = await agent.ask(TurnRequest("set a tea timer for 2 seconds", conversation_id="c1", language="en"))
        assert first.ok and first.reply == "Your tea timer is running."
        [finished] = first.tool_calls
        assert finished.ok and finished.data["status"] == "pending" and finished.data["duration_s"] == 2
        assert sniffer.on(f"{base}/report") == []  # acknowledged now, reported later

        report = json.loads(await sniffer.wait_for(f"{base}/report", json_with(conversation_id="c1"), timeout=15))
        assert time.monotonic() - started >= 1.9  # never early
        assert report["text"] == done_text and report["kind"] == "timer" and report["language"] == "en"
        assert report["data"]["name"] == "tea" and report["source"] == "cli"
        event = json.loads(await sniffer.wait_for(f"{base}/event", json_with(type="report"), timeout=5))
        assert event["text"] == done_text and event["conversation_id"] == "c1"
        from_rest = await asyncio.wait_for(anext(aiter(listener)), 5)
        assert from_rest.text == done_text
        assert hub.agent.conversations.get("c1").messages[-1].content == done_text

        second = await agent.ask(TurnRequest("is my tea timer done?", conversation_id="c1", language="en"))
        assert second.reply == "Yes, your tea timer is done."
        assert not (tmp_path / TIMERS_FILE).exists() or json.loads((tmp_path / TIMERS_FILE).read_text())["timers"] == []
    finally:
        listener.close()
        await asyncio.to_thread(sniffer.close)
        await hub.stop()
        await stack.stop()


async def test_a_restart_keeps_pending_timers(tmp_path) -> None:
    """Hub A starts timers and stops; hub B, built fresh on the same state folder, fires them."""
    engine = ScriptedEngine([[call("start_timer", seconds=2)], text("Timer set."),
                             [ToolCallDelta(ToolCall("start_timer", {"hours": 1, "name": "roast"}))], text("Roast timer set.")])
    first = TestHub(tmp_path, engine)
    await first.start()
    await first.ask("Stell einen Timer auf 2 Sekunden", conversation_id="kitchen", language="de", source="wyoming",
                    satellite_id="assist_satellite.kitchen")
    await first.ask("Set a roast timer for an hour", conversation_id="hall")
    await first.stop()
    saved = json.loads((tmp_path / TIMERS_FILE).read_text())["timers"]
    assert sorted(t["duration_s"] for t in saved) == [2, 3600]

    second = TestHub(tmp_path, ScriptedEngine([]))
    reports: list = []
    second.later.reporter.add_sink(reports.append)
    await second.start()
    try:
        await eventually(lambda: reports, timeout=15)
        [report] = reports
        expected = phrase("de", "timer.finished", name=spoken_duration(2, "de"))
        assert report.text == expected == "Der Timer 2 Sekunden ist abgelaufen."
        assert (report.conversation_id, report.language, report.source, report.satellite_id) == (
            "kitchen", "de", "wyoming", "assist_satellite.kitchen")
        assert second.agent.conversations.get("kitchen").messages[-1].content == expected
        assert [t.name for t in second.later.timers.timers()] == ["roast"]
        assert [t["name"] for t in json.loads((tmp_path / TIMERS_FILE).read_text())["timers"]] == ["roast"]
    finally:
        await second.stop()


async def test_a_timer_that_ended_while_the_hub_was_down_fires_at_start(tmp_path) -> None:
    collected = Collected()
    first = TimerService(tmp_path, collected)
    await first.start()
    first.add(1, "eggs", ToolContext("c1"))
    await first.stop()
    await asyncio.sleep(1.3)
    second = TimerService(tmp_path, collected)
    await second.start()
    try:
        await eventually(lambda: collected.reports, timeout=5)
        [(ctx, said, kind, data)] = collected.reports
        assert said == "The eggs timer is done." and kind == "timer" and ctx.conversation_id == "c1"
        assert data["late_s"] > 0
    finally:
        await second.stop()


async def test_cancel_and_status_through_the_tools(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]))
    reports: list = []
    hub.later.reporter.add_sink(reports.append)
    await hub.start()
    ctx = ToolContext("c1")
    try:
        async def use(tool: str, **args):
            return await hub.registry.call(ToolCall(tool, args), ctx)

        assert (await use("start_timer", seconds=1, name="pasta")).ok
        assert (await use("start_timer", minutes=10, name="bread")).ok
        status = await use("timer_status", name="bread")
        assert status.ok and 590 <= status.data["timers"][0]["remaining_s"] <= 600
        both = await use("timer_status")
        assert [t["name"] for t in both.data["timers"]] == ["pasta", "bread"]
        ambiguous = await use("cancel_timer")
        assert ambiguous.data["error"] == "ambiguous" and "pasta" in ambiguous.data["message"]
        cancelled = await use("cancel_timer", name="Pasta")
        assert cancelled.ok and cancelled.data["name"] == "pasta"
        missing = await use("cancel_timer", name="soup")
        assert missing.data["error"] == "no_timer" and missing.data["message"] == "Sorry, I couldn't find soup."
        await asyncio.sleep(1.5)
        assert reports == []  # the cancelled timer never fires
        assert [t.name for t in hub.later.timers.timers()] == ["bread"]
    finally:
        await hub.stop()


async def test_bad_timer_arguments_are_refused_and_nothing_is_saved(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]))
    await hub.start()
    try:
        ctx = ToolContext("c1")
        for args in ({}, {"seconds": 0}, {"hours": 25}, {"hours": 24, "minutes": 1}, {"minutes": "five"},
                     {"seconds": 5, "name": "x" * 100}, {"seconds": 5, "colour": "red"}):
            result = await hub.registry.call(ToolCall("start_timer", args), ctx)
            assert not result.ok and result.data["error"] == "invalid_arguments", (args, result.data)
        assert hub.later.timers.timers() == [] and not (tmp_path / TIMERS_FILE).exists()
    finally:
        await hub.stop()


async def test_an_unreadable_timer_file_is_kept_aside_not_lost(tmp_path, caplog) -> None:
    (tmp_path / TIMERS_FILE).write_text("{not json", encoding="utf-8")
    service = TimerService(tmp_path, Collected())
    await service.start()
    try:
        kept = list(tmp_path.glob(f"{TIMERS_FILE}.damaged-*"))
        assert len(kept) == 1 and kept[0].read_text() == "{not json"
        assert "started without timers" in caplog.text
        service.add(60, None, ToolContext("c1"))
        assert len(json.loads((tmp_path / TIMERS_FILE).read_text())["timers"]) == 1
    finally:
        await service.stop()


async def test_a_timer_that_cannot_be_read_is_set_aside_and_the_others_run(tmp_path, caplog) -> None:
    first = TimerService(tmp_path, Collected())
    await first.start()
    first.add(600, "tea", ToolContext("c1"))
    await first.stop()
    saved = json.loads((tmp_path / TIMERS_FILE).read_text())
    saved["timers"].append({"id": "broken", "duration_s": "soon"})
    (tmp_path / TIMERS_FILE).write_text(json.dumps(saved))
    again = TimerService(tmp_path, Collected())
    await again.start()
    try:
        assert [t.name for t in again.timers()] == ["tea"]
        assert "1 of 2 timers run" in caplog.text
        assert len(list(tmp_path.glob(f"{TIMERS_FILE}.damaged-*"))) == 1
        # what could be read was written back: the next start reads it whole, sets nothing aside
        assert [t["name"] for t in json.loads((tmp_path / TIMERS_FILE).read_text())["timers"]] == ["tea"]
    finally:
        await again.stop()


def test_spoken_durations() -> None:
    assert spoken_duration(5430, "en") == "1 hour, 30 minutes and 30 seconds"
    assert spoken_duration(60, "de") == "1 Minute"
    assert spoken_duration(125, "fr") == "2 minutes et 5 secondes"
    assert [spoken_duration(m * 60, "pl") for m in (1, 2, 5, 12, 22)] == [
        "1 minutę", "2 minuty", "5 minut", "12 minut", "22 minuty"]
    assert spoken_duration(3725, "sv") == "1 timme, 2 minuter och 5 sekunder"
