"""End to end through a real Home Assistant 2025.4 (issue #27 point 4): names as people say them,
sent to HA's conversation API and carried out by the hub through HA's services — "the living room
smart curtain" for a curtain named "Smart Curtain" in the living room, a misspelt name, and a
German compound of an English name. The model server is down: every turn here is the fast path's."""

from __future__ import annotations

import asyncio
from typing import Iterator

import pytest

from ha.ha_harness import HomeAssistantInstance, free_port
from ha.test_e2e_wyoming import HubProcess, add_hub_to_home_assistant, converse, hub_turn_lines, speech

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

CURTAIN = "cover.smart_curtain"
# an optimistic template cover (its state is what it was last told), with a unique id so that
# the entity registry can place it in an area
SMART_CURTAIN = """
cover names:
  - platform: template
    covers:
      smart_curtain:
        unique_id: bolt_test_smart_curtain
        friendly_name: Smart Curtain
        device_class: curtain
        optimistic: true
        open_cover: {delay: 0}
        close_cover: {delay: 0}
"""


@pytest.fixture(scope="module")
def names_ha(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeAssistantInstance]:
    instance = HomeAssistantInstance(tmp_path_factory.mktemp("ha-names"), extra_config=SMART_CURTAIN)
    instance.start()
    try:
        asyncio.run(_place_the_curtain(instance))
        yield instance
    finally:
        instance.stop()


async def _place_the_curtain(ha: HomeAssistantInstance) -> None:
    areas = {a["name"]: a["area_id"] for a in await ha.ws("config/area_registry/list")}
    await ha.ws("config/entity_registry/update", entity_id=CURTAIN, area_id=areas["Living Room"])
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], entity_ids=[CURTAIN],
                should_expose=True)
    await ha.call_service("cover", "close_cover", entity_id=CURTAIN)


@pytest.fixture(scope="module")
def hub(names_ha: HomeAssistantInstance, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HubProcess, str]]:
    """A hub whose model server is down (nothing listens on its port)."""
    process = HubProcess(tmp_path_factory.mktemp("hub-names"), names_ha, language="en", engine="openai",
                         remote_url=f"http://127.0.0.1:{free_port()}/v1", remote_model="none")
    process.start()
    try:
        yield process, asyncio.run(add_hub_to_home_assistant(names_ha, process))
    finally:
        process.stop()


@pytest.mark.parametrize("text, language, entity_id, domain, off, on", [
    ("open the living room smart curtain", "en", CURTAIN, "cover", "close_cover", "open"),
    ("Öffne den Wohnzimmer Smart Curtain", "de", CURTAIN, "cover", "close_cover", "open"),
    ("turn on the kitchen ligth", "en", "light.kitchen_light", "light", "turn_off", "on"),  # misspelt
    ("turn on the coffe machine", "en", "switch.coffee_machine", "switch", "turn_off", "on"),
    ("Schalte die Schlafzimmerlampe ein", "de", "light.bedroom_lamp", "light", "turn_off", "on"),  # a compound
])
async def test_names_as_people_say_them_through_home_assistant(names_ha: HomeAssistantInstance, hub, text,
                                                               language, entity_id, domain, off, on) -> None:
    process, agent_id = hub
    await names_ha.call_service(domain, off, entity_id=entity_id)
    result, seconds = await converse(names_ha, agent_id, text, language=language)
    assert result["response"]["response_type"] != "error", result
    print(f"\n[e2e] {language} {seconds:.2f} s: {text!r}: {speech(result)!r}")
    await names_ha.wait_for_state(entity_id, on)
    line = hub_turn_lines(process)[-1]
    assert "via fast_path" in line, line
