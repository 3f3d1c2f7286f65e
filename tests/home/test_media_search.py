"""HassMediaSearchAndPlay through the real fast path (hassil, HA's templates in en, de, fr) and the
search_and_play tool: `media_player.search_media` as HA's handler asks it, the first result played
with `play_media`; nothing found, a player that cannot search, and several players with none
named each answered without playing anything.

The backend answers `search_media` as a Home Assistant player integration does (HA 2025.4.4, the
Home Assistant the end-to-end tests run, has no such service: HA added it later)."""

from __future__ import annotations

from typing import Any

import pytest

from hub.core.messages import ToolCall
from hub.core.tools import ToolContext, ToolRegistry
from hub.home.catalogue import build_home_tools
from hub.home.entities import Entity, EntityStore
from hub.home.resolve import EntityResolver
from hub.locales import phrase
from hub.understanding.fast_path import FastPath

pytestmark = pytest.mark.timeout(120)

LIBRARY = {"queen": ("Queen", "media-source://library/artist/queen", "artist"),
           "the office": ("The Office", "media-source://library/show/the-office", "tv_show")}


class Player:
    """A backend whose players search a small library (`LIBRARY`) and record every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        self.calls.append((entity.entity_id, service, data))

    async def service_response(self, entity: Entity, service: str, data: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((entity.entity_id, service, data))
        found = LIBRARY.get(str(data.get("search_query")).casefold())
        classes = data.get("media_filter_classes")
        result = [] if found is None or (classes and found[2] not in classes) else [
            {"title": found[0], "media_content_id": found[1], "media_content_type": found[2],
             "media_class": found[2], "can_play": True}]
        return {entity.entity_id: {"version": 1, "result": result}}


class Home:
    def __init__(self, *players: Entity, backend: Any = None) -> None:
        self.store = EntityStore()
        for entity in players:
            self.store.upsert(entity)
        self.backend = backend or Player()
        self.store.register_backend("test", self.backend)
        resolver = EntityResolver(self.store)
        self.registry = ToolRegistry()
        for tool in build_home_tools(self.store, resolver):
            self.registry.register(tool)
        self.fast_path = FastPath(self.store, self.registry, resolver)

    async def say(self, text: str, language: str = "en", area: str | None = None):
        return await self.fast_path.try_handle(text, language, ToolContext("t", language=language, area=area))


TV = Entity("media_player.tv", "TV", "idle", area="Living Room", source="test")
SPEAKER = Entity("media_player.kitchen_speaker", "Kitchen Speaker", "idle", area="Kitchen", source="test")


@pytest.mark.parametrize("text, language, query, media_class", [
    ("play Queen", "en", "Queen", None),
    ("play the artist Queen on the TV", "en", "Queen", "artist"),
    ("spiele Queen", "de", "Queen", None),
    ("mets The Office sur la TV", "fr", "The Office", None),
])
async def test_search_then_play_the_first_result(text, language, query, media_class) -> None:
    home = Home(TV)
    outcome = await home.say(text, language)
    assert outcome is not None and outcome.results[0].ok, outcome
    search = {"search_query": query, **({"media_filter_classes": [media_class]} if media_class else {})}
    title, content_id, kind = LIBRARY[query.casefold()]
    assert home.backend.calls == [("media_player.tv", "search_media", search),
                                  ("media_player.tv", "play_media", {"media_content_id": content_id,
                                                                     "media_content_type": kind})]
    assert outcome.reply == phrase(language, "media.playing", title=title, name="TV")


async def test_nothing_found_plays_nothing_and_says_so() -> None:
    home = Home(TV)
    outcome = await home.say("play the album Queen")  # Queen is an artist, not an album
    assert [s for _, s, _ in home.backend.calls] == ["search_media"]
    assert outcome.reply == phrase("en", "media.nothing_found", query="Queen", name="TV")


async def test_a_player_that_cannot_search_is_not_searched() -> None:
    class NoSearch:
        def __init__(self) -> None:
            self.calls: list[Any] = []

        async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
            self.calls.append((entity.entity_id, service, data))

    home = Home(TV, backend=NoSearch())
    assert await home.say("play Queen") is None  # nothing done, nothing refused: the model's turn
    result = await home.registry.call(ToolCall("search_and_play", {"entity_id": "media_player.tv", "query": "Queen"}),
                                      ToolContext("t", language="en"))
    assert not result.ok and result.data["error"] == "unsupported" and home.backend.calls == []
    assert result.data["message"] == phrase("en", "error.unsupported", name="TV")


async def test_one_player_of_several_the_named_one_the_rooms_else_which_one() -> None:
    home = Home(TV, SPEAKER)
    asked = await home.say("play Queen")
    assert asked.intent == "ambiguous" and not home.backend.calls
    assert sorted(asked.candidates) == ["media_player.kitchen_speaker", "media_player.tv"]
    in_kitchen = await home.say("play Queen", area="Kitchen")
    assert [(e, s) for e, s, _ in home.backend.calls] == [("media_player.kitchen_speaker", "search_media"),
                                                          ("media_player.kitchen_speaker", "play_media")]
    assert in_kitchen.results[0].ok
    home.backend.calls.clear()
    named = await home.say("play Queen on the TV", area="Kitchen")
    assert named.results[0].ok and {e for e, _, _ in home.backend.calls} == {"media_player.tv"}
