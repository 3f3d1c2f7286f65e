"""A device's whole name before its place and kind (issue #40): in the real home beside 1,000
generated devices (16 lights in its Hallway), "Éteins donc la Hallway Light" turns off the one
light named so, not every light in the Hallway — as HA's matcher takes a name first
(`async_match_targets`); two devices of one name: the one in the speaker's room, else a question
naming both."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
import pytest_asyncio

from hub.agent.types import TurnRequest
from hub.home.entities import Entity
from tests.home.generated_home import generated_entities
from tests.home.real_home import rig
from tests.understanding.harness import SOURCE, Rig

pytestmark = [pytest.mark.timeout(300), pytest.mark.asyncio(loop_scope="module")]

TWINS = [Entity("light.porch_light", "Porch Light", "off", area="Porch"),
         Entity("light.porch_light_2", "Porch Light", "off", area="Garden")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub() -> AsyncIterator[Rig]:
    async with rig([*generated_entities(1000), *TWINS]) as built:
        yield built


async def said(hub: Rig, text: str, language: str, area: str | None = None) -> tuple[list[str], str]:
    """The entities the request acted on, and the reply; the home put back after."""
    hub.backend.calls.clear()
    result = await hub.agent.ask(TurnRequest(text, f"named-{text}-{area}", language=language, source="rest",
                                             client=SOURCE, area=area))
    acted = sorted(entity_id for entity_id, *_ in hub.backend.calls)
    for entity in hub.store.all():
        if entity.state != "off" and entity.domain == "light":
            hub.store.update_state(entity.entity_id, "off", {})
    hub.agent.clear_conversations()
    return acted, result.reply


@pytest.mark.parametrize("text, language", [
    ("Éteins donc la Hallway Light", "fr"),
    ("Allume donc la lumière Hallway Light", "fr"),
    ("turn on the hallway light then", "en"),
    ("switch off the Hallway Light then", "en"),
    ("Schalte doch mal das Hallway Light ein", "de"),
    ("Mach jetzt bitte das Hallway Light an", "de"),
])
async def test_a_whole_name_wins_over_its_area_and_kind(hub: Rig, text: str, language: str) -> None:
    in_hallway = [e for e in hub.store.all() if e.domain == "light" and e.area == "Hallway"]
    assert len(in_hallway) > 10  # the reading that acted on them all is there to be taken
    acted, reply = await said(hub, text, language)
    assert acted == ["light.hallway_light"], reply


@pytest.mark.parametrize("text, language", [("turn on the porch light then", "en"),
                                            ("Allume donc la Porch Light", "fr"),
                                            ("Schalte doch das Porch Light ein", "de")])
async def test_two_devices_of_one_name_the_speakers_or_a_question(hub: Rig, text: str, language: str) -> None:
    acted, _ = await said(hub, text, language, area="Garden")
    assert acted == ["light.porch_light_2"]
    acted, reply = await said(hub, text, language)
    assert acted == [] and reply.rstrip().endswith("?") and reply.count("Porch Light") >= 2, reply


@pytest.mark.parametrize("text, language", [("turn on the bedroom television", "en"),
                                            ("allume la télévision de la chambre", "fr"),
                                            ("schalte den Fernseher im Schlafzimmer ein", "de")])
async def test_a_players_kind_word_picks_that_sort_of_player(hub: Rig, text: str, language: str) -> None:
    """A kind word of media players names a sort of them: the Bedroom's TV, not its five speakers too."""
    speakers = [e for e in hub.store.all() if e.domain == "media_player" and e.area == "Bedroom" and "speaker" in e.name]
    assert len(speakers) > 1
    acted, reply = await said(hub, text, language)
    assert acted == ["media_player.bedroom_tv"], reply
