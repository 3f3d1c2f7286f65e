"""To-do and shopping lists (HA's `todo` entities): add, complete, remove an item, read a list.

Through HA's `todo.*` services (`todo.get_items` answers with the items), or, in a home with no
Home Assistant, the lists the hub keeps itself (`hub.home.local_lists`): the same entities and
services either way. An item is found as HA's handler finds it, by its text (any case), among
those still to do.
"""

from __future__ import annotations

from typing import Any

from hub.core.tools import ToolContext, ToolError, ToolResult
from hub.home.entity_tool import ENTITY, EntityTool, entity_schema
from hub.home.entities import BackendError, Entity
from hub.home.queries import service_response
from hub.home.normalize import base_language, fold
from hub.home.question_words import WORDS_ARGUMENT, mentions, question_words
from hub.locales import join_list, phrase

_ITEM = {"type": "string", "minLength": 1, "maxLength": 200}


class _ListTool(EntityTool):
    domains = frozenset({"todo"})
    parameters = entity_schema(("entity_id", "item"), item=_ITEM)

    async def _items(self, entity: Entity, ctx: ToolContext) -> list[str]:
        """The items still to do on the list."""
        try:
            answer = await service_response(self._store, entity, "get_items", {"status": "needs_action"})
        except BackendError as err:
            raise ToolError(phrase(ctx.language, "error.action_failed"), code="backend_unavailable",
                            entity_id=entity.entity_id, detail=str(err)) from err
        items = answer.get("items") or []
        return [str(i.get("summary")) for i in items
                if isinstance(i, dict) and i.get("summary") and i.get("status", "needs_action") == "needs_action"]

    async def _on_list(self, entity: Entity, item: str, ctx: ToolContext) -> str:
        """The item as the list writes it, said with or without an article ("des timbres" is
        "timbres"); ToolError when it is not on the list."""
        items = await self._items(entity, ctx)
        for wanted in _with_and_without_articles(item, ctx.language):
            for written in items:
                if " ".join(written.casefold().split()) == wanted:
                    return written
        raise ToolError(phrase(ctx.language, "list.not_on", item=item, name=entity.name), code="item_not_found",
                        entity_id=entity.entity_id)


def _with_and_without_articles(item: str, language: str) -> list[str]:
    """The item as said, casefolded, then without the words before it that name no item ("des",
    "the", "die"): the language's question stop words."""
    words = item.casefold().split()
    table = question_words(base_language(language))
    forms = [" ".join(words)]
    while len(words) > 1 and table is not None and table.says(f" {fold(words[0], language)} ", "word.stop"):
        words = words[1:]
        forms.append(" ".join(words))
    return forms


class AddToList(_ListTool):
    name = "add_to_list"
    description = "Add an item to a to-do or shopping list."

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        item = args["item"].strip()
        await self._call(entity, "add_item", {"item": item}, ctx, args)
        return ToolResult(ok=True, speech=phrase(ctx.language, "list.added", item=item, name=entity.name),
                          data={"entity_id": entity.entity_id, "added": item})


class CompleteOnList(_ListTool):
    name = "complete_on_list"
    description = "Check off (complete) an item on a to-do or shopping list."

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        item = await self._on_list(entity, args["item"].strip(), ctx)
        await self._call(entity, "update_item", {"item": item, "status": "completed"}, ctx, args)
        return ToolResult(ok=True, speech=phrase(ctx.language, "list.completed", item=item, name=entity.name),
                          data={"entity_id": entity.entity_id, "completed": item})


class RemoveFromList(_ListTool):
    name = "remove_from_list"
    description = "Remove an item from a to-do or shopping list."

    async def act(self, entity: Entity, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        item = await self._on_list(entity, args["item"].strip(), ctx)
        await self._call(entity, "remove_item", {"item": item}, ctx, args)
        return ToolResult(ok=True, speech=phrase(ctx.language, "list.removed", item=item, name=entity.name),
                          data={"entity_id": entity.entity_id, "removed": item})


class ListItems(_ListTool):
    name = "list_items"
    description = ("What is still to do on a to-do or shopping list (none named: on every list); only "
                   "the items that say one of `words`, when given.")
    parameters = {"type": "object", "additionalProperties": False,
                  "properties": {"entity_id": ENTITY, "words": WORDS_ARGUMENT}}
    changes_home = False

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if "entity_id" in args:
            todo = self._entity(args["entity_id"], ctx)
            if todo.domain != "todo":
                raise self._unsupported(todo, ctx.language)
            lists = [todo]
        else:
            lists = [e for e in self._store.all() if e.domain == "todo"]
        if not lists:
            raise ToolError(phrase(ctx.language, "missing.list"), code="unknown_entity")
        words = tuple(args.get("words") or ())
        found = [(todo, [i for i in await self._items(todo, ctx) if not words or mentions(i, words)]) for todo in lists]
        return ToolResult(ok=True, speech=_spoken_lists(found, words, ctx.language), data={"lists": [
            {"entity_id": todo.entity_id, "name": todo.name, "items": items} for todo, items in found]})


def _spoken_lists(found: list[tuple[Entity, list[str]]], words: tuple[str, ...], language: str) -> str:
    """"On Personal Tasks: Call Liza." for each list with items (that say the words); else that
    the list is empty, or that nothing on the lists says them."""
    said = [phrase(language, "list.items", name=todo.name, items=join_list(items, language))
            for todo, items in found if items]
    if said:
        return " ".join(said)
    if words:
        return phrase(language, "list.nothing_about", words=join_list(list(words), language))
    return " ".join(phrase(language, "list.empty", name=todo.name) for todo, _ in found)


def build_list_tools(*args: Any) -> list[EntityTool]:
    """The list tools, built as the home tools are (store, resolver, policy, tracker)."""
    return [tool(*args) for tool in (AddToList, CompleteOnList, RemoveFromList, ListItems)]
