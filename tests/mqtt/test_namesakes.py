"""A look-alike device captures no command (issue #30 item 4), against a real mosquitto.

The probe's repro: beside the demo home's lock "Front Door" and cover "Garage Door", a switch named
"Front Door" and one named "Garage Door Opener" are discovered over MQTT. "Turn off the front
door" went to the fake switch's topic ("Turned off Front Door.", no "which one?"), and "turn on
the garage door" to the opener. Now both ask which one; nothing is published to either switch, and
the real device moves only once chosen and, where the policy wants one, after a yes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
import requests

from hub.agent.types import TurnRequest
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.locales import join_list, phrase
from hub.transport.mqtt_client import BrokerSettings
from mqtt.mqtt_helpers import Sniffer, eventually, json_with
from mqtt.test_fast_path_on_mqtt import policed_agent
from mqtt.test_tools_on_mqtt import home as mqtt_home  # noqa: F401  (the MQTT demo home, tools on it)
from reliability.served_hub import ServedHub

pytestmark = pytest.mark.timeout(120)

LOOK_ALIKES = {"front": "Front Door", "garage": "Garage Door Opener"}  # key → name
FAKE_TOPICS = "fake/#"


def publish_look_alikes(wire: Sniffer) -> None:
    """Retained discovery configs of the two switches, as any client of the broker may publish them."""
    for key, name in LOOK_ALIKES.items():
        wire.publish(f"homeassistant/switch/fake/{key}/config",
                     {"name": name, "uniq_id": f"fake_{key}", "cmd_t": f"fake/{key}/set",
                      "stat_t": f"fake/{key}/state"}, retain=True)


def which_one(*options: str) -> str:
    return phrase("en", "entity.ambiguous", options=join_list(list(options), "en"))


DOOR_OPTIONS = ("Front Door (lock)", "Front Door (switch)")
GARAGE_OPTIONS = ("Garage Door", "Garage Door Opener")


async def test_a_look_alike_switch_takes_no_command_and_the_real_device_waits_for_a_choice_and_a_yes(
        mqtt_home, tmp_path: Path, sniffer_factory, caplog) -> None:
    store, _, demo = mqtt_home
    caplog.set_level(logging.WARNING, logger="hub.backends.mqtt.devices")
    wire = sniffer_factory([FAKE_TOPICS, "bolt_demo/+/set", "bolt_demo/+/+/set"])
    publish_look_alikes(wire)
    await eventually(lambda: store.get("switch.front_door") and store.get("switch.garage_door_opener"))
    agent = policed_agent(store, tmp_path)

    door = await agent.ask(TurnRequest("turn off the front door", "door", language="en"))
    assert door.tool_calls == [] and door.reply == which_one(*DOOR_OPTIONS), door.reply
    held = await agent.ask(TurnRequest("the lock", "door", language="en"))  # turning a lock off unlocks it
    assert held.reply == phrase("en", "policy.confirm", action=phrase("en", "policy.verb.unlock"), name="Front Door")

    garage = await agent.ask(TurnRequest("turn on the garage door", "garage", language="en"))
    assert garage.tool_calls == [] and garage.reply == which_one(*GARAGE_OPTIONS), garage.reply
    held = await agent.ask(TurnRequest("the garage door", "garage", language="en"))
    assert held.reply == phrase("en", "policy.confirm", action=phrase("en", "policy.verb.open"), name="Garage Door")

    await asyncio.sleep(1)  # a command sent anyway would be on the wire by now
    assert wire.messages == [], wire.messages
    assert demo.device("front_door").locked and demo.device("garage_door").position == 0
    done = await agent.ask(TurnRequest("yes", "garage", language="en"))
    assert [(f.call.arguments["entity_id"], f.ok) for f in done.tool_calls] == [("cover.garage_door", True)]
    await eventually(lambda: demo.device("garage_door").position == 100)
    assert wire.on(FAKE_TOPICS) == []
    warnings = [r.getMessage() for r in caplog.records if "answers to the name of" in r.getMessage()]
    assert any("switch.front_door" in w and "lock.front_door" in w for w in warnings), warnings
    assert not any("switch.garage_door_opener" in w for w in warnings)  # "Garage Door Opener" is its own name


@pytest.mark.timeout(300)
async def test_a_served_hub_asks_which_one_and_lists_the_look_alike(mosquitto, tmp_path: Path, smollm_path: Path):
    """The same through `bolt-hub serve` and its MQTT API: the reply asks, the log names both, and
    /api/status (the page's status) lists the name they share."""
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", mosquitto.port), travel_seconds=0.2)
    await demo.start()
    base = "bolt_hub/bolt_hub"
    wire = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{base}/reply", f"{base}/availability", FAKE_TOPICS])
    hub = ServedHub(tmp_path, smollm_path, {"mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                                            "api_token": "namesakes-token"})
    try:
        hub.start()
        await wire.wait_for(f"{base}/availability", lambda p: p == b"online", timeout=60)
        publish_look_alikes(wire)
        api = f"http://127.0.0.1:{hub.ports['http_port']}/api"

        def get(path: str):
            return requests.get(f"{api}/{path}", headers={"Authorization": "Bearer namesakes-token"}, timeout=10).json()

        await eventually(lambda: {"lock.front_door", "switch.front_door", "switch.garage_door_opener"}
                         <= {e["entity_id"] for e in get("entities")}, timeout=30)
        for n, (text, options) in enumerate([("turn off the front door", DOOR_OPTIONS),
                                             ("turn on the garage door", GARAGE_OPTIONS)]):
            wire.publish(f"{base}/ask", {"id": f"a{n}", "text": text, "conversation_id": f"c{n}"})
            reply = json.loads(await wire.wait_for(f"{base}/reply", json_with(id=f"a{n}"), timeout=60))
            assert reply["tool_calls"] == [] and reply["text"] == which_one(*options), reply
        await asyncio.sleep(1)
        assert wire.on(FAKE_TOPICS) == []
        assert demo.device("front_door").locked and demo.device("garage_door").position == 0
        assert get("status")["namesakes"] == [{"name": "Front Door", "entity_ids": ["lock.front_door", "switch.front_door"]}]
        assert "MQTT discovered switch.front_door (Front Door), which answers to the name of lock.front_door" \
            in hub.log()
    finally:
        hub.stop()
        await asyncio.to_thread(wire.close)
        await demo.stop()
