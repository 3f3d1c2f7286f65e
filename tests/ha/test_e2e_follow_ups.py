"""End to end through a real Home Assistant 2025.4.4 over Wyoming (issue #28 points 3 and 4), in
en, de, fr, es, nl: a command, then follow-ups ("and the bedroom too", "turn it off") and an
indirect and a relative command ("it's too dark in the living room", "a bit dimmer") carried out
on HA's entities by the hub's own templates and the fast path. HA 2025.4 names no conversation
over Wyoming: the follow-ups refer to the same client's last command. The hub's model server is
down, so a turn the model took would say so: every turn here must be the fast path's."""

from __future__ import annotations

import asyncio
from typing import Iterator

import pytest

from ha.ha_harness import HomeAssistantInstance, free_port
from ha.test_e2e_wyoming import (  # noqa: F401  (ha_module: a module fixture)
    HubProcess,
    add_hub_to_home_assistant,
    converse,
    ha_module,
    hub_turn_lines,
    speech,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
LIGHTS = ("light.kitchen_light", "light.bedroom_lamp", "light.living_room_light")

# language: (turn on the kitchen light, and the bedroom too, turn it off,
#            it's too dark in the living room, a bit dimmer)
SAID = {
    "en": ("turn on the kitchen light", "and the bedroom too", "turn it off",
           "it's too dark in the living room", "a bit dimmer"),
    "de": ("Schalte das Licht in der Küche ein", "und im Schlafzimmer auch", "schalte es aus",
           "es ist zu dunkel im Wohnzimmer", "etwas dunkler"),
    "fr": ("Allume la lumière de la cuisine", "et aussi dans la chambre", "éteins-la",
           "il fait trop sombre dans le salon", "un peu plus sombre"),
    "es": ("Enciende la luz de la cocina", "y también en el dormitorio", "apágala",
           "está demasiado oscuro en el salón", "un poco más oscuro"),
    "nl": ("Zet het licht in de keuken aan", "en de slaapkamer ook", "zet hem uit",
           "het is te donker in de woonkamer", "iets donkerder"),
}


@pytest.fixture(scope="module")
def hub_en(ha_module: HomeAssistantInstance, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HubProcess, str]]:
    """A hub whose home language is English, with a model server that is down (nothing listens
    on its port): a turn handed to the model is answered "model not available"."""
    hub = HubProcess(tmp_path_factory.mktemp("hub-follow-ups"), ha_module, language="en",
                     engine="openai", remote_url=f"http://127.0.0.1:{free_port()}/v1", remote_model="none")
    hub.start()
    try:
        agent_id = asyncio.run(add_hub_to_home_assistant(ha_module, hub))
        asyncio.run(converse(ha_module, agent_id, "turn off the kitchen light"))  # a first turn warms up
        yield hub, agent_id
    finally:
        hub.stop()


async def brightness_pct(ha: HomeAssistantInstance, entity_id: str) -> int:
    state = await ha.state(entity_id)
    return round((state["attributes"].get("brightness") or 0) * 100 / 255) if state["state"] == "on" else 0


@pytest.mark.parametrize("language", list(SAID))
async def test_follow_ups_and_relative_commands_through_home_assistant(ha: HomeAssistantInstance, hub_en,
                                                                      language) -> None:
    hub, agent_id = hub_en
    for light in LIGHTS:
        await ha.call_service("light", "turn_off", entity_id=light)
        await ha.wait_for_state(light, "off")
    turn_on, bedroom_too, turn_off, too_dark, dimmer = SAID[language]
    turns_before = len(hub_turn_lines(hub))
    replies = []

    async def say(text: str) -> None:
        result, seconds = await converse(ha, agent_id, text, language=language)
        assert result["response"]["response_type"] != "error", result
        replies.append(f"{text!r} → {speech(result)!r} ({seconds:.2f} s)")

    await say(turn_on)
    await ha.wait_for_state("light.kitchen_light", "on")
    await say(bedroom_too)
    await ha.wait_for_state("light.bedroom_lamp", "on")
    await say(turn_off)
    await ha.wait_for_state("light.bedroom_lamp", "off")
    assert (await ha.state("light.kitchen_light"))["state"] == "on", "it was the bedroom lamp, the last target"
    await say(too_dark)
    await ha.wait_for_state("light.living_room_light", "on")
    assert await brightness_pct(ha, "light.living_room_light") == 20
    await say(dimmer)
    for _ in range(20):  # the template light reports its new level a moment later
        if await brightness_pct(ha, "light.living_room_light") == 10:
            break
        await asyncio.sleep(0.25)
    assert await brightness_pct(ha, "light.living_room_light") == 10
    lines = hub_turn_lines(hub)[turns_before:]
    assert len(lines) == 5 and all("via fast_path" in line for line in lines), lines
    print(f"\n[e2e] {language}: " + " | ".join(replies))
