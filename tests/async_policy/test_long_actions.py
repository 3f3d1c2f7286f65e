"""Slow actions are acknowledged at once and reported when their state arrives: MQTT demo covers
on a real mosquitto (they take seconds to move), the garage door behind a spoken yes; plus
timeouts and "tell me when" watches."""

from __future__ import annotations

import asyncio
import json

import pytest

from hub.home.later import Reporter
from hub.interfaces.mqtt.reports import MqttReportPublisher
from hub.agent.types import TurnRequest
from hub.home.entities import Entity, EntityStore
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.core.tools import ToolContext
from hub.home.watches import ActionTracker, StateWatches, expected_outcome
from hub.transport.mqtt_client import BrokerSettings
from hub.mqtt_stack import MqttStack
from hub.core.messages import ToolCall
from hub.locales import phrase
from hub.settings import RuntimeSettings

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine, call
from mqtt.mqtt_helpers import Sniffer, eventually, json_with

pytestmark = pytest.mark.timeout(90)
TRAVEL_S = 3.0


@pytest.fixture
async def mqtt_home(tmp_path, mosquitto):
    """The hub on a real mosquitto, with the MQTT demo home (covers move for TRAVEL_S)."""
    engine = ScriptedEngine([], constrained=True)  # small-model mode: the tools' own sentences are spoken
    hub = TestHub(tmp_path, engine, demo_home=False, mqtt_host="127.0.0.1", mqtt_port=mosquitto.port)
    broker = BrokerSettings("127.0.0.1", mosquitto.port)
    agent = hub.agent
    stack = MqttStack(hub.options.mqtt, store=hub.store, settings=RuntimeSettings(hub.options.settings), agent=agent,
                      broker=broker, demo_home=False)
    demo = MqttDemoHome.on_broker(broker, travel_seconds=TRAVEL_S)
    await stack.start()
    await demo.start()
    hub.later.reporter.add_sink(MqttReportPublisher(stack.client, stack.topics.base))
    await hub.start()
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{stack.topics.base}/report"])
    await eventually(lambda: (e := hub.store.get("cover.garage_door")) is not None and e.state == "closed", timeout=15)
    await eventually(lambda: (e := hub.store.get("cover.bedroom_blinds")) is not None and e.state == "closed", timeout=15)
    yield hub, engine, agent, sniffer, stack.topics.base
    await asyncio.to_thread(sniffer.close)
    await hub.stop()
    await demo.stop()
    await stack.stop()


async def test_blinds_are_acknowledged_at_once_and_reported_when_open(mqtt_home) -> None:
    hub, engine, agent, sniffer, base = mqtt_home
    engine._rounds.append([call("turn_on", entity_id="cover.bedroom_blinds")])
    result = await agent.ask(TurnRequest("open the bedroom blinds", conversation_id="c1", language="en"))
    assert result.reply == phrase("en", "action.acknowledged", name="Bedroom Blinds")
    [finished] = result.tool_calls
    assert finished.ok and finished.data["status"] == "pending" and finished.data["target"] == "open"
    assert hub.state("cover.bedroom_blinds") != "open"  # the turn did not wait for the cover

    report = json.loads(await sniffer.wait_for(f"{base}/report", json_with(conversation_id="c1"), timeout=15))
    assert hub.state("cover.bedroom_blinds") == "open"
    expected = phrase("en", "action.reported", name="Bedroom Blinds", state=phrase("en", "state.open"))
    assert report["text"] == expected and report["kind"] == "action"
    assert report["data"] == {"entity_id": "cover.bedroom_blinds", "service": "open_cover", "state": "open", "ok": True}
    assert hub.agent.conversations.get("c1").messages[-1].content == expected


async def test_garage_door_needs_a_yes_then_is_acknowledged_and_reported(mqtt_home) -> None:
    hub, engine, agent, sniffer, base = mqtt_home
    engine._rounds.append([call("turn_on", entity_id="cover.garage_door")])
    asked = await agent.ask(TurnRequest("open the garage door", conversation_id="g", language="en"))
    assert asked.reply == phrase("en", "policy.confirm", action="open", name="Garage Door")
    await asyncio.sleep(0.5)
    assert hub.state("cover.garage_door") == "closed"  # nothing was sent

    confirmed = await agent.ask(TurnRequest("yes", conversation_id="g", language="en"))
    assert confirmed.path == "confirmation"
    assert confirmed.reply == phrase("en", "action.acknowledged", name="Garage Door")
    assert hub.state("cover.garage_door") in ("closed", "opening")

    report = json.loads(await sniffer.wait_for(f"{base}/report", json_with(conversation_id="g"), timeout=15))
    assert report["text"] == phrase("en", "action.reported", name="Garage Door", state=phrase("en", "state.open"))
    assert hub.state("cover.garage_door") == "open"


async def test_a_cover_that_never_arrives_is_reported_as_failed_after_the_timeout() -> None:
    store = EntityStore()
    stuck: list[tuple[str, str]] = []

    class StuckBackend:  # takes the command, never moves
        async def call_service(self, entity, service, data):
            stuck.append((entity.entity_id, service))

    store.register_backend("stuck", StuckBackend())
    store.upsert(Entity("cover.shed", "Shed door", "closed", {"current_position": 0}, source="stuck"))
    reports: list = []
    watches = StateWatches(store)
    tracker = ActionTracker(watches, Reporter(sinks=(reports.append,)), timeout_s=0.3)
    ctx = ToolContext("c1", language="de")
    result = tracker.acknowledge(store.get("cover.shed"), "open_cover", {}, ctx)
    assert result is not None and result.pending
    store.update_state("cover.shed", "opening")  # moving is not arriving
    await eventually(lambda: reports, timeout=5)
    [report] = reports
    assert report.text == "Entschuldigung, das hat nicht geklappt: Shed door: wird geöffnet."  # no English "opening"
    assert report.data["timed_out"] and not report.data["ok"]
    assert watches.active() == []
    await watches.close()


async def test_tell_me_when_reports_to_the_conversation_that_asked(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]))
    await hub.start()
    try:
        ask = ToolContext("laundry", language="fr", source="rest")
        watch = await hub.registry.call(
            ToolCall("notify_when", {"entity_id": "switch.coffee_machine", "state": "on"}), ask)
        assert watch.ok and watch.pending and watch.data["watching_for"] == "on"
        already = await hub.registry.call(
            ToolCall("notify_when", {"entity_id": "light.living_room", "state": "on"}), ask)
        assert already.ok and not already.pending  # it is on now: answered at once
        unknown = await hub.registry.call(ToolCall("notify_when", {"entity_id": "switch.nope", "state": "on"}), ask)
        assert unknown.data["error"] == "unknown_entity"

        await hub.registry.call(ToolCall("turn_on", {"entity_id": "switch.coffee_machine"}), ToolContext("other"))
        expected = phrase("fr", "action.reported", name="Coffee machine", state=phrase("fr", "state.on"))
        await eventually(lambda: (c := hub.agent.conversations.get("laundry")) and c.messages, timeout=5)
        assert hub.agent.conversations.get("laundry").messages[-1].content == expected
        assert hub.agent.conversations.get("other") is None
        [recent] = hub.later.reports.recent("laundry")
        assert recent.kind == "watch" and recent.source == "rest" and recent.language == "fr"
    finally:
        await hub.stop()


def test_expected_outcomes_of_slow_services() -> None:
    cover = Entity("cover.x", "X", "open", {"current_position": 40})
    assert expected_outcome("cover", "close_cover", {})[0] == "closed"
    target, reached = expected_outcome("cover", "set_cover_position", {"position": 40})
    assert target == "40" and reached(cover)
    assert not reached(Entity("cover.x", "X", "opening", {"current_position": 40}))
    assert expected_outcome("vacuum", "return_to_base", {})[0] == "docked"
    assert expected_outcome("lock", "unlock", {})[1](Entity("lock.x", "X", "unlocked"))
    assert expected_outcome("script", "turn_on", {})[1](Entity("script.x", "X", "off"))
    assert expected_outcome("light", "turn_on", {}) is None  # fast devices answer at once
