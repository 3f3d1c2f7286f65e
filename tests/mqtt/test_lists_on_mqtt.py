"""Lists the hub keeps itself and a broadcast, in an MQTT home with no Home Assistant (issue #27):
the real hub (HubApp: agent, fast path, tools) on a real mosquitto. Add, read, check off and
remove items on the shopping list and on a list of the `todo_lists` option, in en, de, fr; the
lists survive a restart; a disk that cannot be written changes nothing and says so; a broadcast
goes out on `<base>/announce` and the reply says so.

The model is scripted and never asked: every request here is the fast path's."""

from __future__ import annotations

import asyncio
import errno
import json
import os
from pathlib import Path

import pytest

from hub.agent.types import TurnRequest
from hub.app import HubApp
from hub.config import validate
from hub.locales import phrase
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import Sniffer

pytestmark = pytest.mark.timeout(180)

BASE = "bolt_hub/bolt_hub"


async def started(mosquitto, folder: Path, language: str = "en") -> HubApp:
    config = validate({"data_dir": str(folder), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                       "rate_limit_per_minute": 0, "todo_lists": "Chores, chores", "language": language})
    app = HubApp(config, engine=ScriptedEngine([]))
    await app.start(listeners=False)
    return app


async def ask(app: HubApp, text: str, language: str, **context: str) -> str:
    assert app.agent is not None
    result = await app.agent.ask(TurnRequest(text, language=language, **context))
    assert result.path == "fast_path", (text, result)
    return result.reply


# add to the shopping list, add to Chores, read the shopping list, check off, read Chores, remove
SAID = {
    "en": ("add milk to my shopping list", "add mop the floor to my chores list", "what's on my shopping list?",
           "check off milk on my shopping list", "what's on the chores list", "remove mop the floor from my chores list"),
    "de": ("Setze Milch auf die Einkaufsliste", "Füge Boden wischen zur Chores Liste hinzu",
           "Was steht auf meiner Einkaufsliste?", "Hake Milch auf der Einkaufsliste ab",
           "Was steht auf der Chores Liste", "Entferne Boden wischen von der Chores Liste"),
    "fr": ("Ajoute du lait à ma liste de courses", "Ajoute laver le sol à la liste Chores",
           "Qu'est-ce qu'il y a sur ma liste de courses ?", "Coche lait sur ma liste de courses",
           "Qu'est-ce qu'il y a sur la liste Chores", "Supprime laver le sol de la liste Chores"),
}
MILK = {"en": "milk", "de": "Milch", "fr": "lait"}
CHORE = {"en": "mop the floor", "de": "Boden wischen", "fr": "laver le sol"}


@pytest.mark.parametrize("language", list(SAID))
async def test_the_hubs_own_lists_through_the_agent(mosquitto, tmp_path, language) -> None:
    add, add_chore, read, check, read_chores, remove = SAID[language]
    app = await started(mosquitto, tmp_path, language)
    try:
        shopping = app.store.get("todo.shopping_list")
        assert shopping is not None and shopping.name == phrase(language, "lists.shopping_list")
        assert sorted(e.entity_id for e in app.store.all() if e.domain == "todo") == ["todo.chores", "todo.shopping_list"]
        assert MILK[language] in await ask(app, add, language)
        assert CHORE[language] in await ask(app, add_chore, language)
        assert (app.store.get("todo.shopping_list").state, app.store.get("todo.chores").state) == ("1", "1")
        assert await ask(app, read, language) == phrase(language, "list.items", name=shopping.name,
                                                        items=MILK[language])
    finally:
        await app.stop()
    app = await started(mosquitto, tmp_path, language)  # the lists outlive the hub
    try:
        assert await ask(app, read_chores, language) == phrase(language, "list.items", name="Chores",
                                                               items=CHORE[language])
        assert MILK[language] in await ask(app, check, language)
        assert app.store.get("todo.shopping_list").state == "0"
        assert await ask(app, read, language) == phrase(language, "list.empty", name=shopping.name)
        assert CHORE[language] in await ask(app, remove, language)
        assert app.store.get("todo.chores").state == "0"
    finally:
        await app.stop()
    saved = json.loads(next(tmp_path.rglob("lists.json")).read_text(encoding="utf-8"))
    assert [(i["summary"], i["status"]) for i in saved["lists"]["todo.shopping_list"]] == [(MILK[language], "completed")]
    assert saved["lists"]["todo.chores"] == []


async def test_a_disk_that_cannot_be_written_changes_nothing_and_says_so(mosquitto, tmp_path, monkeypatch) -> None:
    app = await started(mosquitto, tmp_path)
    try:
        await ask(app, "add bread to my shopping list", "en")
        before = next(tmp_path.rglob("lists.json")).read_bytes()

        def full(*_args, **_kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr("hub.state_files.os.replace", full)
        assert await ask(app, "add milk to my shopping list", "en") == phrase("en", "error.lists_not_saved")
        assert await ask(app, "check off bread on my shopping list", "en") == phrase("en", "error.lists_not_saved")
        monkeypatch.undo()
        assert next(tmp_path.rglob("lists.json")).read_bytes() == before
        assert not list(tmp_path.rglob("*.tmp"))
        assert await ask(app, "what's on my shopping list", "en") == phrase(
            "en", "list.items", name="Shopping list", items="bread")
        assert app.store.get("todo.shopping_list").state == "1"
    finally:
        await app.stop()


async def test_a_broadcast_in_an_mqtt_home_goes_out_on_the_announce_topic(mosquitto, tmp_path) -> None:
    app = await started(mosquitto, tmp_path)
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/announce"])
    try:
        reply = await ask(app, "broadcast dinner is ready", "en", satellite_id="kitchen-esp")
        assert reply == phrase("en", "broadcast.published")
        announced = json.loads(await sniffer.wait_for(f"{BASE}/announce", timeout=10))
        assert announced["message"] == "dinner is ready"
        assert (announced["language"], announced["satellite_id"]) == ("en", "kitchen-esp")
    finally:
        await asyncio.to_thread(sniffer.close)
        await app.stop()
