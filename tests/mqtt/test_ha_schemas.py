"""The hub's and the demo home's discovery payloads, and the blueprints, checked with Home
Assistant 2025.4's own schemas (run in the HA venv, Python 3.13, as a subprocess)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ha.ha_harness import HA_VENV, ensure_installed
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.interfaces.mqtt.entities import discovery_payload
from hub.transport.mqtt_topics import HubTopics

pytestmark = pytest.mark.timeout(900)

REPO = Path(__file__).resolve().parents[2]
VALIDATOR = Path(__file__).with_name("ha_validate.py")
BLUEPRINTS = REPO / "blueprints" / "automation" / "bolt_hub"
BLUEPRINT_INPUTS = {
    "ask_and_speak.yaml": {
        "ask_when": [{"trigger": "event", "event_type": "bolt_test_ask"}],
        "question": "Anything left on downstairs?",
        "tts_engine": "tts.piper",
        "media_player": ["media_player.kitchen"],
    },
    "notify_replies.yaml": {"notify_device": "0123456789abcdef"},
    "on_tool_called.yaml": {
        "tool": "turn_on",
        "then": [{"action": "input_boolean.turn_on", "target": {"entity_id": "input_boolean.guest_mode"}}],
    },
}


def run_validator(request: dict) -> dict:
    ensure_installed()
    done = subprocess.run(
        [str(HA_VENV / "bin" / "python"), str(VALIDATOR)], input=json.dumps(request),
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def all_discovery() -> list[tuple[str, dict]]:
    topics = HubTopics("bolt_hub/test_hub", "bolt_hub_test_hub")
    payloads = [(topics.discovery, discovery_payload(topics, "Test Hub"))]
    demo = MqttDemoHome(client=None)  # only its discovery configs are used
    for device in demo.devices.values():
        payloads += [(f"homeassistant/{topic}/config", config) for topic, config in device.discovery()]
    return payloads


BROKEN_BLUEPRINT = """\
blueprint:
  name: Broken
  domain: automation
  input:
    when:
      selector:
        trigger: {}
triggers: !input when
actions:
  - delay: "{{ oops"
"""


def test_discovery_payloads_and_blueprints_pass_home_assistants_schemas(tmp_path):
    discovery = all_discovery()
    broken = ("homeassistant/select/lab/broken/config", {"name": "Broken", "cmd_t": "x/set", "uniq_id": "b"})
    blueprints = [{"path": str(BLUEPRINTS / name), "inputs": inputs} for name, inputs in BLUEPRINT_INPUTS.items()]
    broken_blueprint = tmp_path / "broken.yaml"
    broken_blueprint.write_text(BROKEN_BLUEPRINT)
    blueprints.append({"path": str(broken_blueprint), "inputs": {"when": [{"trigger": "event", "event_type": "x"}]}})
    result = run_validator({"discovery": discovery + [broken], "blueprints": blueprints})

    # the controls: HA's schemas do reject a select without options and a malformed action
    errors = result["errors"]
    assert len(errors) == 2, errors
    assert "broken/config" in errors[0] and "options" in errors[0], errors
    assert "broken.yaml" in errors[1] and "delay" in errors[1], errors
    checked = result["checked"]
    hub_components = discovery_payload(HubTopics("b/t", "n"), "x")["cmps"]
    assert len([c for c in checked if "bolt_hub_test_hub" in c]) == len(hub_components)
    assert len([c for c in checked if "bolt_demo" in c]) == 14
    assert sorted(Path(c).name for c in checked if c.endswith(".yaml")) == sorted(BLUEPRINT_INPUTS)


def test_every_blueprint_file_is_covered():
    assert sorted(p.name for p in BLUEPRINTS.glob("*.yaml")) == sorted(BLUEPRINT_INPUTS)
