"""A user's Home Assistant tools against a real Home Assistant (issue 42 F8): a tool whose entity
comes from its arguments acts only on the hub's own entities, as their backend has them (the
garage door's device class asks for a yes), under the same policy as every other call (an
untargeted entity is refused), called straight over REST as the review did."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from custom.test_rest_ha_sequence import ARGUED_TOOLS
from ha.ha_harness import HomeAssistantInstance
from helpers.live_hub import TOKEN, LiveHub
from helpers.scripted_engine import ScriptedEngine

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
AUTH = {"Authorization": f"Bearer {TOKEN}"}

TOOLS = """
default_persona: keeper
personas:
  keeper:
    name: Keeper
    instructions: You keep the house.
    tools: [open_cover, switch_on]
""" + ARGUED_TOOLS  # tools whose entity comes from their arguments


def call_tool(hub: LiveHub, tool: str, entity_id: str) -> dict:
    response = requests.post(f"{hub.url}/api/tools/{tool}", headers=AUTH, timeout=30,
                             json={"arguments": {"entity_id": entity_id}})
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_custom_tool_acts_on_the_hubs_entities_under_their_policy(ha: HomeAssistantInstance,
                                                                        tmp_path: Path) -> None:
    await ha.call_service("input_boolean", "turn_off", entity_id="input_boolean.garage_door_open")
    custom = tmp_path / "custom.yaml"
    custom.write_text(TOOLS, encoding="utf-8")
    hub = LiveHub(tmp_path / "state", engine=ScriptedEngine([]), ha_url=ha.url, ha_token=ha.token,
                  custom_file=str(custom)).start()
    try:
        held = call_tool(hub, "open_cover", "cover.garage_door")
        assert not held["ok"] and held["error"] == "confirmation_required", held
        assert held["speech"] == "Do you really want me to open Garage Door?"

        requests.put(f"{hub.url}/api/names/untargeted", headers=AUTH, timeout=30,
                     json={"entity_ids": ["switch.coffee_machine"]}).raise_for_status()
        untargeted = call_tool(hub, "switch_on", "switch.coffee_machine")
        assert not untargeted["ok"] and untargeted["error"] == "not_allowed", untargeted
        unknown = call_tool(hub, "switch_on", "switch.not_in_this_home")
        assert not unknown["ok"] and unknown["error"] == "unknown_entity", unknown

        assert (await ha.state("cover.garage_door"))["state"] == "closed"
        assert (await ha.state("switch.coffee_machine"))["state"] == "off"
    finally:
        hub.stop()
