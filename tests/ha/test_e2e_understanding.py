"""End to end through a real Home Assistant 2025.4 (its Wyoming client sends no language): several
commands in one sentence in five languages to a home named in English, and chit-chat, which goes
to the model and changes nothing. The hub identifies each request's language itself."""

from __future__ import annotations

import asyncio
import re
from typing import Iterator

import pytest

from ha.ha_harness import HomeAssistantInstance
from ha.ha_harness import free_port
from ha.test_e2e_wyoming import (  # noqa: F401  (ha_module: a module fixture)
    CONTROLLABLE,
    HubProcess,
    add_hub_to_home_assistant,
    controllable_states,
    converse,
    ha_module,
    hub_turn_lines,
    speech,
)
from hub.locales import template

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
LIGHTS = ("light.kitchen_light", "light.bedroom_lamp")


@pytest.fixture(scope="module")
def hub_en(ha_module: HomeAssistantInstance, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HubProcess, str]]:
    """A hub whose home language is English, with a model server that is down (nothing listens
    on its port): what the fast path leaves to the model gets the hub's spoken "model not
    available", so routing is tested without a model's own answers (or its CPU time)."""
    hub = HubProcess(tmp_path_factory.mktemp("hub-understanding"), ha_module, language="en",
                     engine="openai", remote_url=f"http://127.0.0.1:{free_port()}/v1", remote_model="none")
    hub.start()
    try:
        yield hub, asyncio.run(add_hub_to_home_assistant(ha_module, hub))
    finally:
        hub.stop()


async def lights_off(ha: HomeAssistantInstance) -> None:
    for light in LIGHTS:
        await ha.call_service("light", "turn_off", entity_id=light)
        await ha.wait_for_state(light, "off")


@pytest.mark.parametrize("text, language", [
    ("turn on the kitchen light and the bedroom lamp", "en"),
    ("Schalte das Licht in der Küche und im Schlafzimmer ein", "de"),
    ("Allume la lumière de la cuisine et la lumière de la chambre", "fr"),
    ("Enciende la luz de la cocina y la luz del dormitorio", "es"),
    ("Zet het licht in de keuken aan en het licht in de slaapkamer", "nl"),
])
async def test_several_commands_in_five_languages_through_home_assistant(ha: HomeAssistantInstance, hub_en,
                                                                        text, language) -> None:
    hub, agent_id = hub_en
    await lights_off(ha)
    result, seconds = await converse(ha, agent_id, text, language=language)
    assert result["response"]["response_type"] != "error", result
    for light in LIGHTS:
        await ha.wait_for_state(light, "on")
    line = hub_turn_lines(hub)[-1]
    assert "via fast_path" in line, line
    answer = speech(result)
    assert "Kitchen" in answer and "Bedroom" in answer, answer
    print(f"\n[e2e] {language} {seconds:.2f} s: {answer!r}; hub: {line}")


@pytest.mark.parametrize("text, language", [
    ("Hey, what can you do for me?", "en"), ("Was kannst du für mich tun?", "de"),
    ("Raconte-moi une blague", "fr"), ("¿Qué puedes hacer por mí?", "es"), ("Vertel me een mop", "nl"),
])
async def test_chit_chat_goes_to_the_model_and_changes_nothing(ha: HomeAssistantInstance, hub_en, text,
                                                              language) -> None:
    hub, agent_id = hub_en
    before = await controllable_states(ha)
    turns_before = len(hub_turn_lines(hub))
    result, seconds = await converse(ha, agent_id, text, language=language)
    answer = speech(result)
    assert answer, result
    await asyncio.sleep(1)
    lines = hub_turn_lines(hub)[turns_before:]
    assert len(lines) == 1 and "via model" in lines[0], lines
    not_found = re.escape(template(language, "entity.not_found")).replace(re.escape("{name}"), ".+")
    assert not re.fullmatch(not_found, answer.strip()), answer
    changed = [e for e in CONTROLLABLE if before[e] != (await controllable_states(ha))[e]]
    called = re.findall(r"\w+\(([\w.]+)\)=ok", lines[0])
    assert set(changed) <= set(called), f"{changed} changed without a tool call the hub logged"
    print(f"\n[e2e] chit-chat {language} {seconds:.2f} s: {answer!r}; hub: {lines[0]}")
