"""To-do and shopping lists the hub keeps itself, in a home with no Home Assistant (an MQTT or
the demo home): one `todo` entity per list, `todo.shopping_list` always there, with the same
services as HA's to-do lists (`add_item`, `update_item`, `remove_item`, and `get_items`
answering with the items: hub.home.queries), so the same tools and intents work on them.

The items are kept in `lists.json` in the state folder, written atomically before the change
is made (hub.state_files): a full or read-only disk changes nothing and says so (BackendError);
a damaged file is set aside and its readable items kept. An entity's state is the number of
items still to do, as HA's.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from hub.home.entities import BackendError, Entity, EntityStore
from hub.home.normalize import fold
from hub.locales import phrase
from hub.state_files import JsonStateFile, Reading

LISTS_FILE = "lists.json"
SOURCE = "lists"
SHOPPING_LIST = "todo.shopping_list"
NEEDS_ACTION, COMPLETED = "needs_action", "completed"
MAX_ITEMS = 500  # per list: a list read aloud is short; a runaway automation must not fill the disk
MAX_ITEM_CHARS = 200

Item = dict[str, str]  # {"uid", "summary", "status"}


@dataclass(frozen=True)
class ListsOptions:
    todo_lists: str | None  # "Chores, Packing": lists besides the shopping list (`list_names`)
    language: str  # the shopping list's name is said in it
    state_dir: Path  # lists.json is kept there


class ListsNotSaved(BackendError):
    """The lists could not be written: nothing was changed."""

    code = "lists_not_saved"  # its own phrase, "error.lists_not_saved" (hub.home.entity_tool)


def list_names(option: str | None) -> list[str]:
    """The `todo_lists` option's names ("Chores, Packing"), each once, blanks left out."""
    names: dict[str, str] = {}
    for name in (option or "").split(","):
        if name.strip():
            names.setdefault(fold(name), " ".join(name.split())[:100])
    return list(names.values())


def list_id(name: str) -> str:
    """A list's entity id: "Chores" → "todo.chores" (letters of any script kept)."""
    slug = re.sub(r"\W+", "_", name.casefold()).strip("_") or uuid.uuid5(uuid.NAMESPACE_URL, name).hex[:8]
    return f"todo.{slug}"


class LocalLists:
    """The lists as a backend of the store (source "lists"); a component (`start` loads them)."""

    def __init__(self, path: Path, store: EntityStore, shopping_name: str, names: Sequence[str] = ()) -> None:
        self._file = JsonStateFile(path, _read_lists, _no_lists, lambda lists: {"lists": lists})
        self._store = store
        self._names = {SHOPPING_LIST: shopping_name, **{list_id(n): n for n in names}}
        self._items: dict[str, list[Item]] = {}
        self._others: dict[str, list[Item]] = {}  # lists the file holds that are no longer configured: kept

    @classmethod
    def from_options(cls, options: ListsOptions, store: EntityStore) -> "LocalLists":
        return cls(options.state_dir / LISTS_FILE, store, phrase(options.language, "lists.shopping_list"),
                   list_names(options.todo_lists))

    async def start(self) -> None:
        saved = self._file.load() or {}
        self._items = {entity_id: saved.get(entity_id, []) for entity_id in self._names}
        self._others = {entity_id: items for entity_id, items in saved.items() if entity_id not in self._names}
        self._store.register_backend(SOURCE, self)
        for entity_id in self._names:
            self._publish(entity_id)

    async def stop(self) -> None:
        return None

    # --- EntityBackend and hub.home.queries ------------------------------------------------

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        items = [dict(i) for i in self._list(entity)]
        if service == "add_item":
            if len(items) >= MAX_ITEMS:
                raise BackendError(f"{entity.name} already holds {MAX_ITEMS} items")
            items.append({"uid": uuid.uuid4().hex, "summary": _summary(data.get("item")), "status": NEEDS_ACTION})
        elif service == "update_item":
            status = data.get("status", NEEDS_ACTION)
            if status not in (NEEDS_ACTION, COMPLETED):
                raise BackendError(f"unknown status {status!r}")
            self._find(entity, items, data.get("item"))["status"] = str(status)
        elif service == "remove_item":
            wanted = data.get("item")
            for item in wanted if isinstance(wanted, list) else [wanted]:
                items.remove(self._find(entity, items, item))
        else:
            raise BackendError(f"todo.{service} is not a service of the hub's own lists")
        self._save({**self._items, entity.entity_id: items})
        self._publish(entity.entity_id)

    async def service_response(self, entity: Entity, service: str, data: dict[str, Any]) -> dict[str, Any]:
        if service != "get_items":
            raise BackendError(f"todo.{service} answers nothing")
        wanted = data.get("status") or (NEEDS_ACTION, COMPLETED)
        statuses = {wanted} if isinstance(wanted, str) else set(wanted)
        items = [dict(i) for i in self._list(entity) if i["status"] in statuses]
        return {entity.entity_id: {"items": items}}

    # --- helpers ---------------------------------------------------------------------------

    def _list(self, entity: Entity) -> list[Item]:
        if entity.entity_id not in self._items:
            raise BackendError(f"{entity.entity_id} is not one of the hub's lists")
        return self._items[entity.entity_id]

    @staticmethod
    def _find(entity: Entity, items: list[Item], wanted: Any) -> Item:
        """The item by its uid or its text (any case), as HA's to-do services find it."""
        text = " ".join(str(wanted or "").casefold().split())
        for item in items:
            if wanted == item["uid"] or " ".join(item["summary"].casefold().split()) == text:
                return item
        raise BackendError(f"{wanted!r} is not on {entity.name}")

    def _publish(self, entity_id: str) -> None:
        to_do = sum(1 for i in self._items[entity_id] if i["status"] == NEEDS_ACTION)
        self._store.upsert(Entity(entity_id, self._names[entity_id], str(to_do), {"supported_features": 15},
                                  source=SOURCE))

    def _save(self, lists: dict[str, list[Item]]) -> None:
        """Write `lists`, then make them the hub's; ListsNotSaved (nothing changed) when the
        folder cannot be written."""
        try:
            self._file.save({**self._others, **lists})
        except OSError as err:
            raise ListsNotSaved(f"the lists could not be saved in {self._file.path.parent} "
                                f"({err.strerror or err}); nothing was changed") from None
        self._items = lists


def _read_lists(saved: Any) -> Reading[dict[str, list[Item]]]:
    lists: dict[str, list[Item]] = {}
    problems = []
    for entity_id, items in saved["lists"].items():
        if not isinstance(items, list):
            problems.append(f"{entity_id} is not a list")
            continue
        kept = []
        for item in items:
            try:
                kept.append(_item(item))
            except (BackendError, AttributeError):
                problems.append(f"an item of {entity_id} could not be read")
        if len(kept) > MAX_ITEMS:
            problems.append(f"{entity_id} holds more than {MAX_ITEMS} items")
        lists[str(entity_id)] = kept[:MAX_ITEMS]
    return Reading(lists, tuple(problems), "the items it could read are kept")


def _no_lists(text: str | None) -> Reading[dict[str, list[Item]]]:
    return Reading({}, ("unreadable",), "the lists start empty; their items are in the copy")


def _summary(text: Any) -> str:
    summary = " ".join(str(text or "").split())[:MAX_ITEM_CHARS]
    if not summary:
        raise BackendError("an item needs some text")
    return summary


def _item(saved: dict[str, Any]) -> Item:
    status = saved.get("status")
    return {"uid": str(saved.get("uid") or uuid.uuid4().hex), "summary": _summary(saved.get("summary")),
            "status": status if status in (NEEDS_ACTION, COMPLETED) else NEEDS_ACTION}
