"""Lists by what people call them (issue #40 point 4): "my tasks", "my task list", "my to-do list",
"the trader joes list", "the grocery list" mean the only list, or the one whose name fits; add,
complete and remove through the real fast path (HA's templates and the hub's) on the hub's own
lists, in the 8 main languages; one finder (hub.home.list_finder) for these and the readings."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.home.entities import Entity
from hub.home.list_finder import kind_of, list_names, lists_meant
from hub.home.normalize import fold
from tests.helpers.answering_home import AnsweringHome

pytestmark = pytest.mark.timeout(120)

TASKS, SHOPPING, TRADER = "todo.personal_tasks", "todo.shopping_list", "todo.trader_joe_s"


@pytest.fixture
async def home(tmp_path: Path):
    home = AnsweringHome(tmp_path, lists=("Personal Tasks", "Trader Joe's"))
    await home.start({TASKS: ["Call Liza", "Pay rent"], SHOPPING: ["Milk"], TRADER: ["Oat milk"]})
    yield home
    await home.stop()


async def items(home: AnsweringHome, entity_id: str, status: str = "needs_action") -> list[str]:
    answer = await home.lists.service_response(home.store.get(entity_id), "get_items", {"status": status})
    return [i["summary"] for i in answer[entity_id]["items"]]


@pytest.mark.parametrize("text, language, entity_id, item", [
    ("add milk to my tasks", "en", TASKS, "milk"),
    ("add stamps to my task list", "en", TASKS, "stamps"),
    ("add bread to my to-do list", "en", TASKS, "bread"),
    ("put apples on the shopping list", "en", SHOPPING, "apples"),
    ("add bread to the grocery list", "en", SHOPPING, "bread"),
    ("add bananas to the trader joes list", "en", TRADER, "bananas"),
    ("put coffee on my trader joe's list", "en", TRADER, "coffee"),
    ("Füge Milch zu meinen Aufgaben hinzu", "de", TASKS, "Milch"),
    ("Setze Brot auf die Einkaufsliste", "de", SHOPPING, "Brot"),
    ("Ajoute du lait à mes tâches", "fr", TASKS, "lait"),
    ("Ajoute du pain à ma liste de courses", "fr", SHOPPING, "pain"),
    ("Añade leche a mis tareas", "es", TASKS, "leche"),
    ("Voeg melk toe aan mijn taken", "nl", TASKS, "melk"),
    ("Aggiungi latte ai miei compiti", "it", TASKS, "latte"),
    ("Dodaj mleko do mojej listy zadań", "pl", TASKS, "mleko"),
    ("Adiciona leite às minhas tarefas", "pt", TASKS, "leite"),
])
async def test_add_to_a_list_by_what_people_call_it(home: AnsweringHome, text: str, language: str,
                                                    entity_id: str, item: str) -> None:
    outcome = await home.ask(text, language)
    assert outcome is not None and [c.name for c in outcome.calls] == ["add_to_list"], text
    assert item in await items(home, entity_id)
    assert home.store.get(entity_id).name in outcome.reply


@pytest.mark.parametrize("text, language, entity_id, item, tool", [
    ("check off call liza on my tasks", "en", TASKS, "Call Liza", "complete_on_list"),
    ("remove pay rent from my to-do list", "en", TASKS, "Pay rent", "remove_from_list"),
    ("remove milk from the grocery list", "en", SHOPPING, "Milk", "remove_from_list"),
    ("check off oat milk on the trader joes list", "en", TRADER, "Oat milk", "complete_on_list"),
    # HA's shopping-list templates read it as checking off, and so does the hub (the list has its
    # names from the list finder too: HA's reading comes first)
    ("Entferne Milk von der Einkaufsliste", "de", SHOPPING, "Milk", "complete_on_list"),
])
async def test_complete_or_remove_on_a_list_by_what_people_call_it(
        home: AnsweringHome, text: str, language: str, entity_id: str, item: str, tool: str) -> None:
    before = await items(home, entity_id)
    outcome = await home.ask(text, language)
    assert outcome is not None and [c.name for c in outcome.calls] == [tool], text
    assert item in before and item not in await items(home, entity_id)
    if tool == "complete_on_list":
        assert item in await items(home, entity_id, "completed")


def lists(*names: str) -> list[Entity]:
    return [Entity("todo.shopping_list" if n == "Shopping list" else f"todo.{fold(n).replace(' ', '_')}", n)
            for n in names]


def test_what_each_list_answers_to() -> None:
    home = lists("Shopping list", "Personal Tasks", "Trader Joe's")
    shopping, tasks, trader = home
    assert [kind_of(e) for e in home] == ["shopping", "todo", None]
    assert {"grocery list", "Einkaufsliste", "liste de courses"} <= set(list_names(shopping, home))
    assert {"tasks", "to-do list", "Aufgaben", "mes tâches"} - {"mes tâches"} <= set(list_names(tasks, home))
    # a shop's list is no shopping list by its name alone; every list answers to "list"
    assert [n for n in list_names(trader, home) if fold(n) not in ("list", "lists", "liste", "listen", "lista")][:1] \
        == ["Trader Joes"] and "grocery list" not in list_names(trader, home)
    assert all("list" in list_names(todo, home) for todo in home)


def test_the_only_list_answers_to_every_kind() -> None:
    (only,) = home = lists("Chores")
    assert {"grocery list", "to-do list", "tasks"} <= set(list_names(only, home))


def test_a_kind_two_lists_share_means_both_and_a_name_word_one() -> None:
    home = lists("Shopping list", "Personal Tasks", "Work Tasks", "Chores")
    _, personal, work, chores = home
    assert lists_meant(" add it to my to do list ", home) == [personal, work, chores]  # which one? is asked
    assert lists_meant(" add it to my tasks ", home) == [personal, work]  # the lists whose names say it
    assert lists_meant(" add it to the work tasks list ", home) == [work]  # its own name first
    assert lists_meant(" what about the weather ", home) == []


@pytest.mark.parametrize("text, language", [("add eggs to my list", "en"), ("setz Eier auf die Liste", "de"),
                                            ("ajoute des œufs à la liste", "fr")])
async def test_the_word_list_of_several_lists_asks_which(home: AnsweringHome, text: str, language: str) -> None:
    outcome = await home.ask(text, language)
    assert outcome is not None and outcome.intent == "ambiguous" and not outcome.calls, text
    assert all(name in outcome.reply for name in ("Personal Tasks", "Shopping list", "Trader Joe's"))


@pytest.mark.parametrize("text, language", [("was steht auf meiner Liste", "de"), ("qué hay en mi lista", "es"),
                                            ("qu'y a-t-il sur ma liste", "fr"), ("what's on my list", "en"),
                                            # were "No hay nada en tus listas sobre queda." (bench_unspoken)
                                            ("qué me queda en mi lista", "es"), ("cosa resta sulla mia lista", "it"),
                                            ("co zostało na mojej liście", "pl"), ("o que falta na minha lista", "pt")])
async def test_what_is_on_the_list_of_several_lists_reads_them_all(home: AnsweringHome, text: str,
                                                                   language: str) -> None:
    """Not "which one?", nor "nothing about 'steht'" (a verb read as the item looked for)."""
    outcome = await home.ask(text, language)
    assert outcome is not None and [c.name for c in outcome.calls] == ["list_items"], text
    assert all(item in outcome.reply for item in ("Call Liza", "Milk", "Oat milk")), outcome.reply


async def test_a_list_kind_two_lists_share_asks_which(tmp_path: Path) -> None:
    home = AnsweringHome(tmp_path, lists=("Personal Tasks", "Work Tasks"))
    await home.start()
    try:
        outcome = await home.ask("add milk to my tasks")
        assert outcome is not None and outcome.intent == "ambiguous" and not outcome.calls
        assert "Personal Tasks" in outcome.reply and "Work Tasks" in outcome.reply
    finally:
        await home.stop()
