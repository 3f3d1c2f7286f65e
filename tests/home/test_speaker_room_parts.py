"""Several commands in one sentence, said in a room (issue #27): each part is understood as it
would be alone there (hub.understanding.parts) — in the speaker's area, a media command on the
room's floor, a command the room cannot carry out as without a room, a shared name decided by
the room — with the real hassil matcher and HA's sentence data, through the fast path and the
real agent."""

from __future__ import annotations

import pytest

from hub.agent.types import TurnRequest
from home.test_speaker_room import Home, acted_on, agent_for

pytestmark = pytest.mark.timeout(120)


async def test_each_part_acts_in_the_speakers_area() -> None:
    home = Home()
    home.store.update_state("cover.bedroom_blinds", "open", {"current_position": 100})
    outcome = await home.say("turn on the lights and close the blinds", "Bedroom")
    assert sorted(acted_on(outcome)) == ["cover.bedroom_blinds", "light.bedroom", "light.bedroom_ceiling"]
    assert home.state("light.kitchen") == "off" and home.state("cover.bedroom_blinds") == "closed"


async def test_a_nameless_media_part_goes_to_the_player_on_the_rooms_floor() -> None:
    home = Home()
    outcome = await home.say("pause and turn on the lights", "Bedroom")  # no player in the bedroom
    assert sorted(acted_on(outcome)) == ["light.bedroom", "light.bedroom_ceiling", "media_player.office_speaker"]
    assert home.state("media_player.office_speaker") == "paused"
    assert home.state("media_player.living_room_speaker") == "paused"  # downstairs: untouched


async def test_a_part_the_room_cannot_carry_out_reads_as_without_a_room() -> None:
    home = Home()
    outcome = await home.say("turn on the lights and set the temperature to 19 degrees", "Kitchen")
    assert sorted(acted_on(outcome)) == ["climate.living_room", "light.kitchen", "light.kitchen_ceiling"]
    assert home.store.get("climate.living_room").attributes["temperature"] == 19


async def test_a_shared_name_in_a_part_is_the_one_in_the_room_then_on_its_floor() -> None:
    home = Home()
    outcome = await home.say("turn on the ceiling light and the desk lamp", "Living room")
    assert sorted(acted_on(outcome)) == ["light.desk_lamp", "light.kitchen_ceiling"]
    assert home.state("light.bedroom_ceiling") == "off" and home.state("light.office_ceiling") == "off"


@pytest.mark.parametrize("text, language, area, expected", [
    ("pause and turn on the lights", "en", "Bedroom",
     ["light.bedroom", "light.bedroom_ceiling", "media_player.office_speaker"]),
    ("Mach das Licht an und stell die Temperatur auf 19 Grad", "de", "Küche",
     ["climate.living_room", "light.kitchen", "light.kitchen_ceiling"]),
    ("Allume la lumière et règle la température à 19 degrés", "fr", "Kitchen",
     ["climate.living_room", "light.kitchen", "light.kitchen_ceiling"]),
])
async def test_through_the_agent(text, language, area, expected) -> None:
    home = Home()
    result = await agent_for(home).ask(TurnRequest(text, language=language, area=area))
    assert result.path == "fast_path", result
    assert sorted(c.call.arguments["entity_id"] for c in result.tool_calls) == expected
    assert all(c.ok for c in result.tool_calls)
