"""Which to-do list people mean, by what they call it: "my tasks", "my to-do list", "the grocery
list", "the trader joes list" (issue #40 point 4). One finder for the commands (add, complete,
remove: the names below are the `name` slot's values, so HA's own templates read them) and for
the readings ("what's on my to-do list?", "who do I need to call?").

Besides its own name and aliases, a list answers to:
- its name as said without an apostrophe ("Trader Joe's" → "trader joes");
- a word of a kind its name says ("tasks" of "Personal Tasks");
- the words of its kind ("shopping", "grocery list", "Einkaufsliste"; "tasks", "to-do list",
  "Aufgaben"; `hub/locales/words/questions/`, in every language: names are not per language),
  when it is of that kind — a shopping list is `todo.shopping_list` or one whose name says a
  shopping word, else the lists whose names say no kind (a shop's: "Trader Joe's"); a to-do list
  one whose name says a to-do word, else the lists that are no shopping list;
- every kind's words, when it is the home's only list;
- the word "list" itself ("add milk to my list"), as every list does.
A name several lists answer to means them all: the planner asks which one.
"""

from __future__ import annotations

from typing import Sequence

from hub.home.entities import Entity
from hub.home.normalize import fold
from hub.home.question_words import every_language

SHOPPING_LIST = "todo.shopping_list"
KINDS = ("shopping", "todo")


def kind_of(todo: Entity) -> str | None:
    """"shopping", "todo" or None: what the list's id or name says it is."""
    if todo.entity_id == SHOPPING_LIST:
        return "shopping"
    said = f" {' '.join(fold(n) for n in (todo.name, *todo.aliases))} "
    for kind in KINDS:
        if any(f" {word} " in said for word in every_language(f"list.{kind}")):
            return kind
    return None


def list_names(todo: Entity, lists: Sequence[Entity]) -> tuple[str, ...]:
    """The names `todo` answers to beyond its own (see the module's docstring), as written."""
    own = {fold(n) for n in (todo.name, *todo.aliases)}
    meant = {name for name, lists_meant in called(lists).items() if todo in lists_meant and name not in own}
    written = [n for n in (todo.name, *todo.aliases) if fold(n.replace("'", "").replace("\u2019", "")) in meant]
    written += [n.replace("'", "").replace("\u2019", "") for n in written]
    written += [w for key in (*(f"list.{kind}" for kind in KINDS), "list.word")
                for w in every_language(key, written=True) if fold(w) in meant]
    return tuple(n for n in dict.fromkeys(written) if n not in (todo.name, *todo.aliases))


def lists_meant(said: str, lists: Sequence[Entity]) -> list[Entity]:
    """The lists `said` (folded text with spaces around it) names: the longest name said, a
    list's own before what people call it; [] when it names none."""
    for name, meant in sorted(called(lists).items(), key=lambda item: -len(item[0])):
        if f" {name} " in said:
            return list(meant)
    return []


def called(lists: Sequence[Entity]) -> dict[str, tuple[Entity, ...]]:
    """Every folded name a list of `lists` answers to → the lists it means: their own names
    (and without an apostrophe), then a kind's word in some lists' names ("tasks": "Personal
    Tasks"), then the kinds' words (the first of these that claims a name keeps it)."""
    table: dict[str, tuple[Entity, ...]] = {}
    for todo in lists:
        for name in (todo.name, *todo.aliases):
            for form in {fold(name), fold(name.replace("'", "").replace("\u2019", ""))} - {""}:
                table[form] = (*table.get(form, ()), todo)
    for kind in KINDS:
        for word in every_language(f"list.{kind}"):
            having = tuple(t for t in lists if f" {word} " in f" {fold(t.name)} ")
            if having:
                table.setdefault(word, having)
    for kind in KINDS:
        meant = tuple(t for t in lists if kind in kinds_answered(t, lists))
        for word in every_language(f"list.{kind}") if meant else ():
            table.setdefault(word, meant)
    for word in every_language("list.word") if lists else ():  # "my list": every list
        table.setdefault(word, tuple(lists))
    return table


def kinds_answered(todo: Entity, lists: Sequence[Entity]) -> list[str]:
    """The kinds whose words mean `todo` among `lists` (the home's to-do lists)."""
    if len(lists) == 1:
        return list(KINDS)
    kinds = {e.entity_id: kind_of(e) for e in lists}
    answered = []
    for kind in KINDS:
        of_kind = [i for i, k in kinds.items() if k == kind]
        if kind == "todo" and not of_kind:  # no list says it holds tasks: the one that is no shopping list
            of_kind = [i for i, k in kinds.items() if k != "shopping"]
        if kind == "shopping" and not of_kind:  # no list says it: those of no kind (a shop's)
            of_kind = [i for i, k in kinds.items() if k is None]
        if todo.entity_id in of_kind:
            answered.append(kind)
    return answered
