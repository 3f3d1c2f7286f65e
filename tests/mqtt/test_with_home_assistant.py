"""The hub's MQTT side against a real Home Assistant 2025.4 with its MQTT integration.

One HA process for the module (it takes about a minute to start). Checks that HA creates the
hub's entities and device triggers from the hub's discovery, that changing them in HA changes
the hub's settings, that HA's text entity asks the hub, that HA sees the demo home, and that
the blueprints, imported into HA, run: a tool call triggers an action, an event asks the hub.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import ha.ha_harness as harness
from ha.ha_harness import HA_VENV, HomeAssistantInstance, ensure_installed
from hub.config import validate
from hub.options import hub_options
from hub.home.entities import EntityStore
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.transport.mqtt_client import BrokerSettings
from hub.mqtt_stack import MqttStack
from hub.settings import RuntimeSettings
from mqtt.fake_agent import FakeAgent
from mqtt.mqtt_helpers import Mosquitto, Sniffer, eventually, json_with

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
BASE = "bolt_hub/test_hub"


def ensure_mqtt_requirements() -> None:
    """HA's MQTT integration needs paho-mqtt 2.1.0 in HA's venv (hass runs with --skip-pip)."""
    python = HA_VENV / "bin" / "python"
    if subprocess.run([str(python), "-c", "import paho.mqtt"], capture_output=True).returncode == 0:
        return
    subprocess.run([str(HA_VENV / "bin" / "uv"), "pip", "install", "--python", str(python), "paho-mqtt==2.1.0"],
                   check=True, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    mosquitto = Mosquitto(tmp_path_factory.mktemp("mosquitto"))
    mosquitto.start()
    yield mosquitto
    mosquitto.stop()


@pytest.fixture(scope="module")
def home_assistant(tmp_path_factory, broker):
    ensure_installed()
    ensure_mqtt_requirements()
    config_dir = tmp_path_factory.mktemp("home-assistant")
    shutil.copytree(REPO / "blueprints", config_dir / "blueprints")
    (config_dir / "automations.yaml").write_text("[]\n")
    instance = HomeAssistantInstance(config_dir)
    # the shared harness home has no automation integration: add it for this module's HA only
    original = harness.CONFIGURATION_YAML
    harness.CONFIGURATION_YAML = original + "\nautomation: !include automations.yaml\n"
    try:
        instance.start()
    finally:
        harness.CONFIGURATION_YAML = original
    flow = asyncio.run(_add_mqtt_integration(instance, broker.port))
    assert flow["type"] == "create_entry", flow
    yield instance
    instance.stop()


async def _add_mqtt_integration(instance: HomeAssistantInstance, port: int) -> dict:
    flow = await instance.rest("POST", "/api/config/config_entries/flow", {"handler": "mqtt"})
    assert flow.get("step_id") == "broker", flow
    return await instance.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"broker": "127.0.0.1", "port": port})


async def wait_state(ha: HomeAssistantInstance, entity_id: str, predicate, timeout: float = 30.0) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    last = None
    while True:
        try:
            last = await ha.state(entity_id)
            if predicate(last):
                return last
        except Exception:  # 404 until HA created the entity
            pass
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{entity_id}: condition not met; last state {last}")
        await asyncio.sleep(0.2)


def ha_log_problems(ha: HomeAssistantInstance) -> list[str]:
    text = ha.log_path.read_text(errors="replace") if ha.log_path.exists() else ""
    return [
        line for line in text.splitlines()
        if (" ERROR " in line or " WARNING " in line) and any(k in line for k in ("test_hub", "bolt_hub", "bolt_demo", "mqtt"))
    ]


async def test_home_assistant_sees_and_drives_the_hub_and_runs_the_blueprints(home_assistant, broker, tmp_path):
    ha = home_assistant
    config = validate({"instance_name": "Test Hub", "mqtt_host": "127.0.0.1", "mqtt_port": broker.port})
    settings = RuntimeSettings(hub_options(config).settings, tmp_path / "settings.json")
    store = EntityStore()
    agent = FakeAgent(settings, store)
    stack = MqttStack(hub_options(config).mqtt, store=store, settings=settings, agent=agent)
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", broker.port), travel_seconds=1.0)
    await stack.start()
    await demo.start()
    sniffer = await asyncio.to_thread(Sniffer, broker.port, [f"{BASE}/#"])
    try:
        # --- the hub's entities, created by HA from the hub's discovery -----------------------
        await wait_state(ha, "sensor.test_hub_status", lambda s: s["state"] == "idle")
        await wait_state(ha, "switch.test_hub_conversational_mode", lambda s: s["state"] == "on")
        await wait_state(ha, "select.test_hub_reasoning", lambda s: s["state"] == "off")
        await wait_state(ha, "number.test_hub_reasoning_budget", lambda s: float(s["state"]) == 256)
        for entity_id in ("text.test_hub_ask", "event.test_hub_reply", "event.test_hub_tool_call",
                          "button.test_hub_clear_conversations", "sensor.test_hub_last_reply",
                          "sensor.test_hub_last_latency"):
            state = await wait_state(ha, entity_id, lambda s: s["state"] != "unavailable")
            assert state["state"] != "unavailable", state
        devices = await ha.ws("config/device_registry/list")
        hub_device = next(d for d in devices if ["mqtt", "bolt_hub_test_hub"] in d["identifiers"])
        assert hub_device["name"] == "Test Hub"
        triggers = await ha.ws("device_automation/trigger/list", device_id=hub_device["id"])
        assert {(t["type"], t["subtype"]) for t in triggers if t.get("domain") == "mqtt"} >= {("replied", "reply"), ("tool_called", "tool")}

        # --- HA → hub: settings, clear, ask ---------------------------------------------------
        await ha.call_service("switch", "turn_off", entity_id="switch.test_hub_conversational_mode")
        await ha.call_service("select", "select_option", entity_id="select.test_hub_reasoning", option="budget")
        await ha.call_service("number", "set_value", entity_id="number.test_hub_reasoning_budget", value=300)
        await eventually(lambda: settings.as_dict() == {"conversational_mode": False, "reasoning": "budget", "reasoning_budget": 300}, timeout=20)
        # persisted, and HA shows the state the hub confirmed
        assert RuntimeSettings(hub_options(config).settings, tmp_path / "settings.json").as_dict()["reasoning_budget"] == 300
        await wait_state(ha, "switch.test_hub_conversational_mode", lambda s: s["state"] == "off")
        await wait_state(ha, "number.test_hub_reasoning_budget", lambda s: float(s["state"]) == 300)

        await ha.call_service("button", "press", entity_id="button.test_hub_clear_conversations")
        await eventually(lambda: agent.cleared == 1, timeout=20)

        await ha.call_service("text", "set_value", entity_id="text.test_hub_ask", value="hello from Home Assistant")
        await eventually(lambda: any(r.text == "hello from Home Assistant" for r in agent.requests), timeout=20)
        expected = "You said: hello from Home Assistant (conversational off)"
        await wait_state(ha, "sensor.test_hub_last_reply", lambda s: s["state"] == expected)
        reply_event = await wait_state(ha, "event.test_hub_reply", lambda s: s["attributes"].get("text") == expected)
        assert reply_event["attributes"]["event_type"] == "replied"

        # --- HA sees the demo home too, and its commands reach the devices -------------------
        await wait_state(ha, "light.desk_lamp", lambda s: s["state"] == "off")
        await ha.call_service("light", "turn_on", entity_id="light.desk_lamp", brightness_pct=60)
        await eventually(lambda: (e := store.get("light.desk_lamp")) is not None and e.state == "on", timeout=20)
        assert demo.device("desk_lamp").brightness == 60

        # --- blueprints imported into HA -----------------------------------------------------
        await ha.rest("POST", "/api/config/automation/config/bolt_tool_test", {
            "alias": "Bolt tool test",
            "use_blueprint": {"path": "bolt_hub/on_tool_called.yaml", "input": {
                "tool": "turn_on", "hub_topic": BASE,
                "then": [{"action": "input_boolean.turn_on", "target": {"entity_id": "input_boolean.guest_mode"}}],
            }},
        })
        await ha.rest("POST", "/api/config/automation/config/bolt_ask_test", {
            "alias": "Bolt ask test",
            "use_blueprint": {"path": "bolt_hub/ask_and_speak.yaml", "input": {
                "ask_when": [{"trigger": "event", "event_type": "bolt_test_ask"}],
                "question": "Anything left on downstairs?", "hub_topic": BASE,
                "tts_engine": "tts.none", "media_player": ["media_player.none"],
            }},
        })
        await wait_state(ha, "automation.bolt_tool_test", lambda s: s["state"] == "on")
        await wait_state(ha, "automation.bolt_ask_test", lambda s: s["state"] == "on")
        await ha.call_service("input_boolean", "turn_off", entity_id="input_boolean.guest_mode")

        # a tool call by the hub (asked over MQTT) runs the blueprint's action in HA
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", {"text": "turn on switch.coffee_maker", "id": "bp-1"})
        reply = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="bp-1"), timeout=20))
        assert reply["tool_calls"][0]["ok"]
        await wait_state(ha, "input_boolean.guest_mode", lambda s: s["state"] == "on")

        # an event in HA makes the blueprint ask the hub; the reply carries the automation's id
        await ha.rest("POST", "/api/events/bolt_test_ask", {})
        await eventually(lambda: any(r.text == "Anything left on downstairs?" for r in agent.requests), timeout=20)
        answer = json.loads(await sniffer.wait_for(
            f"{BASE}/reply", lambda p: str(json.loads(p).get("id") or "").startswith("automation.bolt_ask_test:"), timeout=20))
        assert answer["ok"] and answer["text"].startswith("You said: Anything left on downstairs?")
        # the reply branch matched this automation's id and went on to speak; the test HA has no
        # TTS entity, so that last step fails with "tts.speak not found" (nothing else does)
        async def reached_speaking() -> bool:
            traces = await ha.ws("trace/list", domain="automation", item_id="bolt_ask_test")
            return any(t["trigger"] == f"mqtt topic {BASE}/reply" and t["last_step"] == "action/0/choose/0/sequence/1"
                       for t in traces)

        for _ in range(100):
            if await reached_speaking():
                break
            await asyncio.sleep(0.2)
        assert await reached_speaking()

        problems = [line for line in ha_log_problems(ha) if "tts" not in line and "media_player" not in line]
        assert not problems, "\n".join(problems[:20])
    finally:
        await asyncio.to_thread(sniffer.close)
        await demo.stop()
        await stack.stop()
