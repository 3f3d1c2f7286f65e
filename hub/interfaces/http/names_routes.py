"""The REST routes of the Names page: `GET /api/names` (every entity, area and floor with the
names the hub accepts and where each came from), `POST` / `DELETE /api/names` (add or take away
one name), `PUT /api/names/untargeted` (the entities the hub never acts on). Changes are saved in
the data folder and apply at once."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from aiohttp import web

from hub.home.entities import EntityStore
from hub.home.name_book import NameBook, NameRefused, NamesNotSaved
from hub.home.names_view import TargetNames, names_listing
from hub.interfaces.http.errors import ClientError
from hub.interfaces.http.openai_routes import BodyReader


class NamesHost(Protocol):
    store: EntityStore
    names: NameBook


def _status(code: str) -> int:
    if code.startswith("unknown_") or code == "not_a_name":
        return 404
    return 409 if code in ("already_named", "name_taken") else 400


class NamesRoutes:
    def __init__(self, hub: NamesHost, read_body: BodyReader) -> None:
        self._hub = hub
        self._read_body = read_body

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/api/names", self._list)
        app.router.add_post("/api/names", self._add)
        app.router.add_delete("/api/names", self._remove)
        app.router.add_put("/api/names/untargeted", self._untarget)

    async def _list(self, request: web.Request) -> web.Response:
        return web.json_response(dataclasses.asdict(names_listing(self._hub.store, self._hub.names)))

    async def _add(self, request: web.Request) -> web.Response:
        body = await self._read_body(request, "name")
        self._change(lambda book: book.add(body["kind"], body["target"], body["name"]))
        return web.json_response(self._target(body["kind"], body["target"]))

    async def _remove(self, request: web.Request) -> web.Response:
        body = await self._read_body(request, "name")
        self._change(lambda book: book.remove(body["kind"], body["target"], body["name"]))
        return web.json_response(self._target(body["kind"], body["target"]))

    async def _untarget(self, request: web.Request) -> web.Response:
        body = await self._read_body(request, "untargeted")
        self._change(lambda book: book.set_untargeted(body["entity_ids"]))
        return web.json_response({"untargeted": self._hub.names.untargeted()})

    def _change(self, change: Any) -> None:
        try:
            change(self._hub.names)
        except NameRefused as err:
            raise ClientError(_status(err.code), err.code, str(err)) from None
        except NamesNotSaved as err:  # a full or read-only disk: nothing was applied
            raise ClientError(507, "names_not_saved", str(err)) from None

    def _target(self, kind: str, target: str) -> dict[str, Any]:
        listing = names_listing(self._hub.store, self._hub.names)
        group: list[TargetNames] = {"entity": listing.entities, "area": listing.areas, "floor": listing.floors}[kind]
        return dataclasses.asdict(next(t for t in group if t.target == target))
