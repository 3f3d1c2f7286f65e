"""End to end through a real Home Assistant 2025.4.4 with the Bolt Hub integration installed from
this repository's custom_components/ (as HACS copies it) and added by its own config flow, the hub
running (`python -m hub serve`), each turn through HA's `assist_pipeline/run` websocket, text in
and intent out, as a voice satellite's pipeline runs it (issue 41):

- "unlock the front door" ends with continue_conversation, and "yes" in that conversation unlocks;
- "which one?" then "the second one" acts on the device said second;
- "turn on the lights" from a satellite in the Kitchen turns on the Kitchen's lights only;
- a timer said to a satellite with a timer handler is HA's own timer for that device;
- a hub stopped in the middle of a conversation is a spoken error, and the conversation goes on
  once it is back.

One HA of its own (the shared one has no lock, satellite or pipeline), one hub whose model server
is down: every turn here is the hub's fast path.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any, Iterator

import aiohttp
import pytest

from ha.ha_harness import REPO, HomeAssistantInstance, free_port, ws_authenticate
from ha.test_e2e_wyoming import TURN_TIMEOUT_S, HubProcess

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

TOKEN = "e2e-integration-token"
LOCK, KITCHEN, BEDROOM, LIVING = "lock.front_door", "light.kitchen_light", "light.bedroom_lamp", "light.living_room_light"
LIGHTS = (KITCHEN, BEDROOM, LIVING)
TIMER_STATE = "bolt_test_satellite.timer"  # the test satellite's timer events
EXTRA_CONFIGURATION = """
input_text:
  front_door_state: {name: Front door state, initial: locked}

lock:
  - platform: template
    name: Front Door
    unique_id: bolt_test_front_door
    value_template: "{{ is_state('input_text.front_door_state', 'locked') }}"
    lock: {action: input_text.set_value, target: {entity_id: input_text.front_door_state}, data: {value: locked}}
    unlock: {action: input_text.set_value, target: {entity_id: input_text.front_door_state}, data: {value: unlocked}}

assist_pipeline:
bolt_test_satellite:
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeAssistantInstance]:
    """HA with the integration and a test satellite (a device in the Kitchen with a timer
    handler); the lock exposed to Assist; Kitchen Light and Bedroom Lamp both also called
    "Reading light"."""
    instance = HomeAssistantInstance(
        tmp_path_factory.mktemp("ha-integration"), extra_config=EXTRA_CONFIGURATION,
        custom_components=(REPO / "custom_components" / "bolt_hub",
                           Path(__file__).parent / "custom_components" / "bolt_test_satellite"))
    instance.start()
    try:
        asyncio.run(_arrange(instance))
        yield instance
    finally:
        instance.stop()


async def _arrange(ha: HomeAssistantInstance) -> None:
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], entity_ids=[LOCK], should_expose=True)
    await ha.ws("config/entity_registry/update", entity_id=KITCHEN, aliases=["Reading light"])
    await ha.ws("config/entity_registry/update", entity_id=BEDROOM, aliases=["Nightlight", "Reading light"])


@pytest.fixture(scope="module")
def satellite(home: HomeAssistantInstance) -> str:
    """The test satellite's device id (in the Kitchen)."""
    [device] = [d for d in asyncio.run(home.ws("config/device_registry/list")) if d["name"] == "Kitchen satellite"]
    assert device["area_id"] == home.area_ids["Kitchen"], device
    return str(device["id"])


@pytest.fixture(scope="module")
def hub(home: HomeAssistantInstance, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HubProcess, str]]:
    """The hub (its model server down: nothing listens there), added by the integration's config
    flow; yields it and the id of an assist pipeline whose agent is the integration's."""
    process = HubProcess(tmp_path_factory.mktemp("hub-integration"), home, language="en", engine="openai",
                         remote_url=f"http://127.0.0.1:{free_port()}/v1", remote_model="none", api_token=TOKEN)
    process.start()
    try:
        yield process, asyncio.run(_add_integration(home, process))
    finally:
        process.stop()


async def _add_integration(ha: HomeAssistantInstance, hub: HubProcess) -> str:
    flow = await ha.rest("POST", "/api/config/config_entries/flow", {"handler": "bolt_hub"})
    assert flow["type"] == "form" and flow["step_id"] == "user", flow
    done = await ha.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}",
                         {"url": f"http://127.0.0.1:{hub.options['http_port']}", "api_token": TOKEN})
    assert done["type"] == "create_entry", done
    entities = await ha.ws("config/entity_registry/list")
    [agent] = [e["entity_id"] for e in entities if e.get("config_entry_id") == done["result"]["entry_id"]]
    pipeline = await ha.ws("assist_pipeline/pipeline/create", conversation_engine=agent, conversation_language="en",
                           language="en", name="Bolt Hub", stt_engine=None, stt_language=None, tts_engine=None,
                           tts_language=None, tts_voice=None, wake_word_entity=None, wake_word_id=None)
    return str(pipeline["id"])


async def assist(ha: HomeAssistantInstance, pipeline: str, text: str, conversation_id: str | None = None,
                 device_id: str | None = None) -> dict[str, Any]:
    """One run of HA's assist pipeline from text to intent; its `intent_output`."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TURN_TIMEOUT_S + 30)) as session:
        async with session.ws_connect(f"{ha.url}/api/websocket") as ws:
            await ws_authenticate(ws, ha.token)
            await ws.send_json({"id": 1, "type": "assist_pipeline/run", "start_stage": "intent", "end_stage": "intent",
                                "input": {"text": text}, "pipeline": pipeline, "conversation_id": conversation_id,
                                "device_id": device_id})
            output: dict[str, Any] = {}
            while True:
                message = await ws.receive_json()
                assert message.get("success", True), message
                event = message.get("event") or {}
                assert event.get("type") != "error", event
                if event.get("type") == "intent-end":
                    output = event["data"]["intent_output"]
                if event.get("type") == "run-end":
                    return output


def said(output: dict[str, Any]) -> str:
    return str(output["response"]["speech"]["plain"]["speech"])


async def states(ha: HomeAssistantInstance, *entity_ids: str) -> list[str]:
    return [(await ha.state(entity_id))["state"] for entity_id in entity_ids]


async def lights_off(ha: HomeAssistantInstance) -> None:
    await ha.call_service("light", "turn_off", entity_id=list(LIGHTS))
    for light in LIGHTS:
        await ha.wait_for_state(light, "off")


def hub_turns(hub: HubProcess) -> int:
    """REST turns the hub has run (its /metrics)."""
    import requests

    metrics = requests.get(f"http://127.0.0.1:{hub.options['http_port']}/metrics", timeout=10,
                           headers={"Authorization": f"Bearer {TOKEN}"}).text
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in metrics.splitlines()
               if line.startswith("bolt_hub_turns_total{") and 'source="rest"' in line)


async def test_an_unlock_keeps_listening_and_the_yes_unlocks(home: HomeAssistantInstance, hub) -> None:
    _, pipeline = hub
    asked = await assist(home, pipeline, "unlock the front door")
    assert asked["continue_conversation"] is True, asked
    assert said(asked).endswith("?") and await states(home, LOCK) == ["locked"]
    done = await assist(home, pipeline, "yes", asked["conversation_id"])
    assert done["conversation_id"] == asked["conversation_id"] and done["continue_conversation"] is False, done
    await home.wait_for_state(LOCK, "unlocked")
    assert done["response"]["response_type"] == "action_done"
    assert [t["id"] for t in done["response"]["data"]["success"]] == [LOCK]
    print(f"\n[e2e integration] {said(asked)!r} → yes → {said(done)!r}")


async def test_which_one_then_the_second_one(home: HomeAssistantInstance, hub) -> None:
    _, pipeline = hub
    await lights_off(home)
    asked = await assist(home, pipeline, "turn on the reading light")
    question = said(asked)
    assert asked["continue_conversation"] is True, asked
    names = {"Kitchen Light": KITCHEN, "Bedroom Lamp": BEDROOM}
    order = sorted(names, key=lambda name: question.find(name))
    assert all(name in question for name in names), question
    done = await assist(home, pipeline, "the second one", asked["conversation_id"])
    second, first = names[order[1]], names[order[0]]
    await home.wait_for_state(second, "on")
    assert await states(home, first) == ["off"] and done["continue_conversation"] is False
    print(f"\n[e2e integration] {question!r} → the second one → {said(done)!r}")


async def test_the_lights_from_a_kitchen_satellite_are_the_kitchens(home: HomeAssistantInstance, hub,
                                                                  satellite: str) -> None:
    _, pipeline = hub
    await lights_off(home)
    done = await assist(home, pipeline, "turn on the lights", device_id=satellite)
    await home.wait_for_state(KITCHEN, "on")
    assert await states(home, BEDROOM, LIVING) == ["off", "off"], said(done)
    assert [t["id"] for t in done["response"]["data"]["success"]] == [KITCHEN]


async def test_a_timer_said_to_the_satellite_is_has_own(home: HomeAssistantInstance, hub, satellite: str) -> None:
    process, pipeline = hub
    turns = hub_turns(process)
    started = await assist(home, pipeline, "set a timer for 5 minutes", device_id=satellite)
    timer = await home.state(TIMER_STATE)
    assert timer["state"] == "started" and timer["attributes"]["device_id"] == satellite, timer
    assert timer["attributes"]["seconds"] == 300 and said(started)
    assert hub_turns(process) == turns, "HA's own timer: the hub was not asked"
    cancelled = await assist(home, pipeline, "cancel the timer", device_id=satellite)
    assert (await home.state(TIMER_STATE))["state"] == "cancelled" and said(cancelled)
    # without a satellite that shows timers, the hub keeps its own
    elsewhere = await assist(home, pipeline, "set a timer for 5 minutes")
    assert hub_turns(process) == turns + 1 and re.search(r"\b5 minutes\b", said(elsewhere)), said(elsewhere)
    assert (await home.state(TIMER_STATE))["state"] == "cancelled"


async def test_a_hub_stopped_mid_conversation_is_a_spoken_error_until_it_is_back(home: HomeAssistantInstance,
                                                                                 hub) -> None:
    process, pipeline = hub
    await lights_off(home)
    first = await assist(home, pipeline, "turn on the kitchen light")
    await home.wait_for_state(KITCHEN, "on")
    await asyncio.to_thread(process.stop)
    down = await assist(home, pipeline, "turn off the kitchen light", first["conversation_id"])
    assert down["response"]["response_type"] == "error"
    assert said(down) == "I can't reach Bolt Hub right now. Please try again in a moment."
    assert await states(home, KITCHEN) == ["on"]
    started = time.monotonic()
    await asyncio.to_thread(process.start)  # the same ports and token
    back = await assist(home, pipeline, "turn off the kitchen light", first["conversation_id"])
    await home.wait_for_state(KITCHEN, "off")
    assert back["conversation_id"] == first["conversation_id"] and back["response"]["response_type"] == "action_done"
    print(f"\n[e2e integration] hub down: {said(down)!r}; back after {time.monotonic() - started:.1f} s: {said(back)!r}")
