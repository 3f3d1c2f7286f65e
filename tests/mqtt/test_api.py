"""The hub's MQTT API and its own entities, against a real mosquitto (with a scripted agent).

The lead adds the same ask/reply test with the real Agent once it lands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hub.config import validate
from hub.options import hub_options
from hub.home.entities import EntityStore
from hub.mqtt_stack import MqttStack
from hub.settings import RuntimeSettings
from mqtt.mqtt_helpers import Sniffer, diagnose, eventually, json_with
from mqtt.fake_agent import FakeAgent

pytestmark = pytest.mark.timeout(90)

BASE = "bolt_hub/test_hub"


def hub_config(port: int):
    return validate({"instance_name": "Test Hub", "mqtt_host": "127.0.0.1", "mqtt_port": port})


@pytest.fixture
async def hub(mosquitto, tmp_path: Path):
    config = hub_config(mosquitto.port)
    settings = RuntimeSettings(hub_options(config).settings, tmp_path / "settings.json")
    store = EntityStore()
    agent = FakeAgent(settings, store)
    stack = MqttStack(hub_options(config).mqtt, store=store, settings=settings, agent=agent)
    await stack.start()
    assert stack.client.connected
    stack.fake = agent
    yield stack
    await stack.stop()


@pytest.fixture
def wire(sniffer_factory):
    return sniffer_factory([f"{BASE}/#", "homeassistant/device/#"])


def replies(sniffer: Sniffer, **fields) -> list[dict]:
    out = []
    for payload in sniffer.on(f"{BASE}/reply"):
        data = json.loads(payload)
        if all(data.get(k) == v for k, v in fields.items()):
            out.append(data)
    return out


async def test_ask_and_reply_with_correlation_id_and_events(hub, wire):
    wire.publish(f"{BASE}/ask", {"text": "hello there", "id": "req-1", "language": "de"})
    reply = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(id="req-1")))
    assert reply["ok"] is True and reply["type"] == "reply" and reply["event_type"] == "replied"
    assert reply["text"] == "You said: hello there (conversational on)"
    assert reply["language"] == "de" and reply["source"] == "mqtt" and reply["conversation_id"]
    assert set(reply["timings"]) >= {"total_s", "prefill_s", "model_rounds"}
    request = hub.fake.requests[-1]
    assert (request.text, request.language, request.source) == ("hello there", "de", "mqtt")

    # a follow-up in the same conversation, with an integer id
    wire.publish(f"{BASE}/ask", {"text": "and again", "id": 7, "conversation_id": reply["conversation_id"]})
    second = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(id=7)))
    assert second["conversation_id"] == reply["conversation_id"]


async def test_tool_calls_appear_as_events_and_in_the_reply(hub, wire):
    from hub.home.entities import Entity

    class Recorder:
        calls: list = []

        async def call_service(self, entity, service, data):
            self.calls.append((entity.entity_id, service))

    hub.store.register_backend("test", Recorder())
    hub.store.upsert(Entity("light.lab", "Lab", state="off", source="test"))
    wire.publish(f"{BASE}/ask", {"text": "turn on light.lab", "id": "t1"})
    reply = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(id="t1")))
    assert reply["tool_calls"] == [
        {"name": "turn_on", "arguments": {"entity_id": "light.lab"}, "call_id": "call-1", "ok": True,
         "data": {"entity_id": "light.lab"}, "seconds": 0.01}
    ]
    assert Recorder.calls == [("light.lab", "turn_on")]
    # The reply topic and the event topic are delivered independently: wait for the turn's last event.
    await wire.wait_for(f"{BASE}/event", json_with(id="t1", type="reply"))
    events = [json.loads(p) for p in wire.on(f"{BASE}/event")]
    kinds = [e["type"] for e in events if e.get("id") == "t1"]
    assert kinds == ["turn_started", "tool_started", "tool_finished", "reply"]
    tool_event = json.loads(await wire.wait_for(f"{BASE}/tool_called"))
    assert tool_event["event_type"] == "tool_called" and tool_event["name"] == "turn_on" and tool_event["id"] == "t1"


BAD_ASKS = [
    (b"{not json", None, "not JSON"),
    (b'{"id": "peek-1", "text": "unterminated', "peek-1", "not JSON"),
    (b"[1, 2]", None, "JSON object"),
    (json.dumps({"id": "m1"}).encode(), "m1", "'text' is required"),
    (json.dumps({"id": "m2", "text": "   "}).encode(), "m2", "empty"),
    (json.dumps({"id": "m3", "text": 42}).encode(), "m3", "must be a string"),
    (json.dumps({"id": "m4", "text": "hi", "conversational": "yes"}).encode(), "m4", "true or false"),
    (json.dumps({"id": "m5", "text": "hi", "reasoning": "maybe"}).encode(), "m5", "'reasoning'"),
    (json.dumps({"id": "m6", "text": "hi", "reasoning": {"mode": "budget", "budget": -1}}).encode(), "m6", "budget"),
    (json.dumps({"id": "m7", "text": "hi", "conversation_id": 5}).encode(), "m7", "conversation_id"),
    (json.dumps({"id": ["x"], "text": "hi"}).encode(), None, "'id'"),
    (json.dumps({"id": "huge-1", "text": "x" * 70_000}).encode(), "huge-1", "exceeds"),
    (b"\xff\xfe\x00garbage", None, "not JSON"),
]


async def test_bad_asks_get_error_replies_and_nothing_else_happens(hub, wire):
    for payload, _, _ in BAD_ASKS:
        wire.publish(f"{BASE}/ask", payload)
    await eventually(lambda: len(replies(wire, type="error")) == len(BAD_ASKS))
    errors = replies(wire, type="error")
    for (payload, ask_id, needle), error in zip(BAD_ASKS, errors):  # one subscriber: arrival order
        assert error["ok"] is False and error["error"] == "bad_request" and error["event_type"] == "failed"
        assert error["id"] == ask_id, payload[:40]
        assert needle in error["text"], (needle, error["text"])
    assert hub.fake.requests == []
    assert hub.client.connected
    # and the API still answers
    wire.publish(f"{BASE}/ask", {"text": "still there?", "id": "ok-1"})
    await wire.wait_for(f"{BASE}/reply", json_with(id="ok-1", ok=True))


async def test_asks_run_concurrently_but_in_order_within_a_conversation(hub, wire):
    agent = hub.fake
    agent.gate("first in A")
    wire.publish(f"{BASE}/ask", {"text": "first in A", "conversation_id": "A", "id": "a1"})
    wire.publish(f"{BASE}/ask", {"text": "second in A", "conversation_id": "A", "id": "a2"})
    wire.publish(f"{BASE}/ask", {"text": "only in B", "conversation_id": "B", "id": "b1"})
    # B is not held up by A's slow first turn, and A's second turn waits for its first
    await wire.wait_for(f"{BASE}/reply", json_with(id="b1"))
    assert agent.started == ["first in A", "only in B"] or agent.started == ["only in B", "first in A"]
    assert "second in A" not in agent.started
    agent.gate("first in A").set()
    await wire.wait_for(f"{BASE}/reply", json_with(id="a2"))
    assert agent.finished.index("first in A") < agent.finished.index("second in A")
    order = [json.loads(p)["id"] for p in wire.on(f"{BASE}/reply")]
    assert order.index("a1") < order.index("a2")


async def test_broker_restart_mid_turn_delivers_the_queued_reply(hub, mosquitto):
    # a subscriber with a persistent session, as an automation platform would have
    listener = Sniffer(mosquitto.port, [f"{BASE}/reply", f"{BASE}/availability"], client_id="persistent-listener", clean=False)
    await listener.wait_for(f"{BASE}/availability", lambda p: p == b"online")
    gate = hub.fake.gate("slow question")
    listener.publish(f"{BASE}/ask", {"text": "slow question", "id": "during-outage"})
    await eventually(lambda: "slow question" in hub.fake.started)

    mosquitto.stop()
    await eventually(lambda: not hub.client.connected)
    gate.set()  # the reply is produced while the broker is down
    await eventually(lambda: "slow question" in hub.fake.finished)
    assert hub.client._outbox, "the reply waits in the outbox"
    listener.clear()
    mosquitto.start()

    assert await hub.client.wait_connected(20), diagnose(hub.client, mosquitto)
    assert hub.client.connect_count == 2
    reply = json.loads(await listener.wait_for(f"{BASE}/reply", json_with(id="during-outage"), timeout=20))
    assert reply["text"].startswith("You said: slow question")
    await listener.wait_for(f"{BASE}/availability", lambda p: p == b"online", timeout=20)
    # re-subscribed: a new ask after the restart is answered
    listener.publish(f"{BASE}/ask", {"text": "after restart", "id": "after"})
    await listener.wait_for(f"{BASE}/reply", json_with(id="after"), timeout=20)
    listener.close()


async def test_settings_changed_over_mqtt_apply_at_once_and_persist(hub, wire, tmp_path):
    settings_topic = f"{BASE}/settings"
    state = json.loads(await wire.wait_for(settings_topic))
    assert state == {"conversational_mode": True, "reasoning": "off", "reasoning_budget": 256}

    wire.publish(f"{BASE}/settings/conversational_mode/set", "OFF")
    wire.publish(f"{BASE}/settings/reasoning/set", "budget")
    wire.publish(f"{BASE}/settings/reasoning_budget/set", "512.0")  # HA's number sends floats
    await wire.wait_for(settings_topic, json_with(conversational_mode=False, reasoning="budget", reasoning_budget=512))
    # the next turn already sees it
    wire.publish(f"{BASE}/ask", {"text": "mode?", "id": "m"})
    reply = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(id="m")))
    assert reply["text"].endswith("(conversational off)")

    # bad values are refused, reported, and the state in force is re-published
    wire.clear()
    wire.publish(f"{BASE}/settings/reasoning_budget/set", "lots")
    wire.publish(f"{BASE}/settings/reasoning/set", "sometimes")
    wire.publish(f"{BASE}/settings/conversational_mode/set", "MAYBE")
    await eventually(lambda: len([p for p in wire.on(f"{BASE}/event") if b"bad_setting" in p]) == 3)
    assert hub.settings.as_dict() == {"conversational_mode": False, "reasoning": "budget", "reasoning_budget": 512}
    await wire.wait_for(settings_topic, json_with(reasoning_budget=512))

    # persisted: a new RuntimeSettings on the same file sees the changes
    again = RuntimeSettings(hub_options(hub_config(1883)).settings, tmp_path / "settings.json")
    assert again.as_dict() == {"conversational_mode": False, "reasoning": "budget", "reasoning_budget": 512}


async def test_status_text_entity_and_clear_button(hub, wire):
    await wire.wait_for(f"{BASE}/state", json_with(status="idle"))
    gate = hub.fake.gate("what now")
    wire.publish(f"{BASE}/ask_text/set", "what now")
    await wire.wait_for(f"{BASE}/state", json_with(status="thinking"))
    assert await wire.wait_for(f"{BASE}/ask_text") == b"what now"
    gate.set()
    reply = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(text="You said: what now (conversational on)")))
    assert reply["id"] is None and reply["source"] == "mqtt"
    state = json.loads(await wire.wait_for(f"{BASE}/state", json_with(last_reply=reply["text"])))
    assert state["status"] == "idle" and isinstance(state["last_latency_ms"], int)
    statuses = [json.loads(p)["status"] for p in wire.on(f"{BASE}/state")]
    assert "speaking" in statuses[statuses.index("thinking"):]

    wire.publish(f"{BASE}/clear", "PRESS")
    await eventually(lambda: hub.fake.cleared == 1)
    await wire.wait_for(f"{BASE}/event", json_with(type="cleared"))


async def test_replies_of_other_interfaces_and_reports_are_published(hub, wire):
    from hub.agent.types import TurnRequest

    result = await hub.agent.ask(TurnRequest(text="from the satellite", source="wyoming", conversation_id="w1"))
    reply = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(source="wyoming")))
    assert reply["text"] == result.reply and reply["id"] is None and reply["conversation_id"] == "w1"
    await hub.agent.report("w1", "The garage door is now closed.")
    report = json.loads(await wire.wait_for(f"{BASE}/reply", json_with(type="report")))
    assert report["event_type"] == "reported" and report["text"] == "The garage door is now closed."
    assert hub.fake.reports == [("w1", "The garage door is now closed.")]


async def test_hub_discovery_is_announced_again_when_home_assistant_restarts(hub, wire):
    topic = "homeassistant/device/bolt_hub_test_hub/config"
    config = json.loads(await wire.wait_for(topic))
    assert config["dev"]["ids"] == ["bolt_hub_test_hub"] and config["avty_t"] == f"{BASE}/availability"
    count = len(wire.on(topic))
    wire.publish("homeassistant/status", "online")
    await eventually(lambda: len(wire.on(topic)) > count)
