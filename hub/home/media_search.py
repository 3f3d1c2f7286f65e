"""HassMediaSearchAndPlay as Home Assistant's handler carries it out: `media_player.search_media`
(a service that answers with data: `hub.home.queries`) for what was asked, optionally of one media
class ("the album …", "the podcast …"), then `media_player.play_media` of the first result. No
result: nothing is played and the user hears so. A backend that cannot search (MQTT players, the
demo home, Home Assistant before the service existed) makes the player unable to do it.
"""

from __future__ import annotations

from typing import Any

from hub.core.tools import ToolContext, ToolError, ToolResult
from hub.home.entities import BackendError, Entity
from hub.home.entity_tool import EntityTool, entity_schema
from hub.home.queries import service_response
from hub.locales import phrase

# HA's MediaClass values (media_player/const.py): what "the album", "the song", "the show" filter by
MEDIA_CLASSES = ("album", "app", "artist", "channel", "composer", "contributing_artist", "directory",
                 "episode", "game", "genre", "image", "movie", "music", "playlist", "podcast", "season",
                 "track", "tv_show", "url", "video")
_QUERY = {"type": "string", "minLength": 1, "maxLength": 200}


class SearchAndPlay(EntityTool):
    name = "search_and_play"
    description = "Search a media player's sources for music, a show or a podcast and play the first result."
    parameters = entity_schema(("entity_id", "query"), query=_QUERY,
                               media_class={"type": "string", "enum": list(MEDIA_CLASSES)})
    domains = frozenset({"media_player"})

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = args["query"].strip()
        data: dict[str, Any] = {"search_query": query}
        if args.get("media_class"):
            data["media_filter_classes"] = [args["media_class"]]
        if getattr(self._store.backend_for(entity), "service_response", None) is None:
            raise self._unsupported(entity, ctx.language, "search media on")  # it cannot search
        if ctx.dry_run:  # the search changes nothing, but a dry run stops before it
            raise self._would_call(entity, "play_media", data, ctx, args)
        found = await self._search(entity, data, ctx)
        if found is None:
            raise ToolError(phrase(ctx.language, "media.nothing_found", query=query, name=entity.name),
                            code="nothing_found", entity_id=entity.entity_id)
        play = {"media_content_id": found["media_content_id"], "media_content_type": found["media_content_type"]}
        after = await self._call(entity, "play_media", play, ctx, args)
        title = str(found.get("title") or query)
        return self._done(after, phrase(ctx.language, "media.playing", title=title, name=entity.name))

    async def _search(self, entity: Entity, data: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        """The first playable result of `search_media`, or None."""
        try:
            answer = await service_response(self._store, entity, "search_media", data)
        except BackendError as err:  # Home Assistant down, or a player that has no search
            raise ToolError(phrase(ctx.language, "error.action_failed"), code="backend_unavailable",
                            entity_id=entity.entity_id, detail=str(err)) from err
        results = answer.get("result") or []
        return next((r for r in results if isinstance(r, dict) and r.get("media_content_id")
                     and r.get("media_content_type")), None)
