"""A reply says what it waits for (`TurnResult.awaiting`), so that a voice client listens again
at once (Home Assistant's continue_conversation, issue 41): a held action's yes, the answer to
"which one?", a question the model asked; nothing once it is answered. And what a client tells
the model about a request (HA's extra_system_prompt) reaches the model's prompt, never its
stable part."""

from __future__ import annotations

import pytest

from hub.agent.utterances import asks_back
from hub.home.entities import Entity
from helpers.scripted_engine import ScriptedEngine, text
from async_policy.async_helpers import FakeClock, TestHub, prompt_text

pytestmark = pytest.mark.timeout(60)


def hub_for(tmp_path, rounds=(), **options) -> tuple[TestHub, ScriptedEngine]:
    engine = ScriptedEngine(list(rounds))
    return TestHub(tmp_path, engine, policy_clock=FakeClock(), fast_path=True, **options), engine


async def test_a_held_unlock_awaits_its_yes_and_the_yes_awaits_nothing(tmp_path) -> None:
    hub, engine = hub_for(tmp_path)
    asked = await hub.ask("unlock the front door", client="rest:a")
    assert asked.awaiting == "confirmation" and asked.ok
    assert hub.state("lock.front_door") == "locked"
    done = await hub.ask("yes", client="rest:a")
    assert done.awaiting is None and done.path == "confirmation"
    assert hub.state("lock.front_door") == "unlocked"
    assert engine.requests == [], "neither turn needed the model"


async def test_which_one_awaits_the_choice(tmp_path) -> None:
    hub, _ = hub_for(tmp_path)
    hub.store.upsert(Entity("light.desk_light_strip", "Desk light strip", "off", {}, (), "Office"))
    asked = await hub.ask("turn on the desk light", client="rest:a")
    assert asked.awaiting == "choice", asked.reply
    chosen = await hub.ask("the second one", client="rest:a")
    assert chosen.awaiting is None and hub.state("light.desk_light_strip") == "on"


@pytest.mark.parametrize("reply,awaiting", [("Which room do you mean?", "question"), ("It is sunny.", None)])
async def test_a_model_reply_awaits_an_answer_when_it_asks(tmp_path, reply, awaiting) -> None:
    hub, _ = hub_for(tmp_path, [text(reply)])
    result = await hub.ask("tell me something", client="rest:a")
    assert result.path == "model" and result.reply == reply and result.awaiting == awaiting


async def test_a_failed_turn_awaits_nothing(tmp_path) -> None:
    hub, _ = hub_for(tmp_path)
    result = await hub.ask("   ", client="rest:a")
    assert not result.ok and result.awaiting is None


@pytest.mark.parametrize("reply,language,asks", [
    ("Welches Zimmer?", "de", True), ("¿Cuál?", "es", True), ("哪一个？", "zh", True), ("Ποιο;", "el", True),
    ("«Lequel ?»", "fr", True), ("Done; thanks", "en", False), ("Τέλος;", "en", False), ("Done.", "en", False),
])
def test_asks_back_reads_each_scripts_question_mark(reply, language, asks) -> None:
    assert asks_back(reply, language) is asks


async def test_the_clients_note_reaches_the_model_outside_the_stable_prompt(tmp_path) -> None:
    note = "You asked the user whether to close the garage door."
    hub, engine = hub_for(tmp_path, [text("Alright.")])
    await hub.ask("tell me a joke", client="rest:a", extra_system_prompt=note)
    [request] = engine.requests
    assert note in request.messages[-1].content and note in prompt_text(request)
    assert note not in request.messages[0].content, "the system message stays byte-identical between turns"
