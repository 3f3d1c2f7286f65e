"""A reply ends on a sentence the user can follow: never on a lead-in whose words were withheld
("The answer is:"), never on a stand-in's first clause alone ("Bien sûr,"). The replies are the
SmolLM2 stand-in's, as `bench_unspoken.py` and `bolt-hub ask "tell me a joke"` heard them."""

from __future__ import annotations

import pytest

from hub.agent.reply import ReplyBuilder
from hub.agent.stand_in_routes import fallback
from hub.locales import phrase
from hub.understanding import language as language_id

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine, stand_in, text

pytestmark = pytest.mark.timeout(60)


def built(raw: str, *, early_clause: bool = True, withhold=lambda sentence: None) -> tuple[ReplyBuilder, list[str]]:
    chunks: list[str] = []
    reply = ReplyBuilder("en", 400, chunks.append, withhold=withhold, early_clause=early_clause)
    for token in raw.split(" "):
        reply.add_text(token + " ")
    reply.finish()
    return reply, chunks


def test_a_lead_in_is_spoken_with_what_it_leads_to() -> None:
    reply, chunks = built("Sure.\nHere is your list:\nMilk and eggs.\nThat is all.")
    assert reply.text == "Sure. Here is your list: Milk and eggs. That is all."
    assert chunks[1] == " Here is your list: Milk and eggs."  # one chunk: the lead-in never waits alone


def test_a_reply_never_ends_on_a_lead_in() -> None:
    """SmolLM2 to "tell me a joke": the loop after "The answer is:" is cut, and so is the lead-in."""
    reply, _ = built("What do you get for your first gift? A gift card to a coffee shop.\n\n"
                     "The answer is:\n\nThe answer is:\n")
    assert reply.text == "What do you get for your first gift? A gift card to a coffee shop."
    assert reply.withheld == [("unfinished", "The answer is:")]


def test_a_lead_in_before_withheld_words_is_not_spoken() -> None:
    reply, _ = built("The original text is:\nYou are Bolt, the voice assistant.",
                     withhold=lambda sentence: "prompt" if "Bolt" in sentence else None)
    assert reply.text == "" and [reason for reason, _ in reply.withheld] == ["prompt", "unfinished"]


def test_only_a_real_models_first_clause_is_spoken_early() -> None:
    story = "Once upon a time, a keeper lived by the sea."
    _, early = built(story)
    _, whole = built(story, early_clause=False)
    assert early == ["Once upon a time,", " a keeper lived by the sea."]
    assert whole == [story]


def test_a_first_clause_whose_rest_is_withheld_is_not_spoken_alone() -> None:
    reply, chunks = built("Bien sûr, je suis le plombier de la France.", early_clause=False,
                          withhold=lambda sentence: "language")
    assert chunks == [] and reply.text == ""


async def test_a_stand_ins_first_clause_alone_is_never_the_reply(tmp_path) -> None:
    """SmolLM2 to "réserve un vol pour Paris" (which the hub now answers itself): "Bien sûr," was
    spoken, the rest withheld. A bare "Bien sûr." answers nothing: the hub's fallback says what it
    can do."""
    hub = TestHub(tmp_path, stand_in([text("Bien sûr, ", "I can show you ", "Paris today.")]))
    assert await language_id.prepare()
    result = await hub.ask("parle-moi de Paris", language="fr")
    assert result.reply == fallback("fr", hub.store.all()), result.reply


async def test_a_stand_ins_joke_ends_before_its_lead_in(tmp_path) -> None:
    hub = TestHub(tmp_path, stand_in([text(
        "What do you get when you cross a robot with a robot? ", "A robot that can talk to itself.\n\n",
        "The answer is:\n\n", "You are Bolt, the voice assistant of a smart home.\n")]))
    assert await language_id.prepare()
    result = await hub.ask("tell me a joke")
    assert result.reply == "What do you get when you cross a robot with a robot? A robot that can talk to itself."


async def test_a_reply_that_only_loops_gets_the_honest_fallback(tmp_path) -> None:
    """Gemma 3 270M to "tell me a joke": "[\\n[\\n[\\n[" — nothing to say, nothing misunderstood:
    the hub says what it can do."""
    hub = TestHub(tmp_path, stand_in([text(*["A: \"" for _ in range(12)])]))
    result = await hub.ask("tell me a joke")
    assert result.reply == fallback("en", hub.store.all())


async def test_a_made_up_entity_id_is_not_spoken(tmp_path) -> None:
    """Gemma 3 270M recited an overview line of an id the home does not have."""
    hub = TestHub(tmp_path, ScriptedEngine([text("Garage:\ngarden.garden_door\nCats like short names.")]))
    result = await hub.ask("what is a good name for a cat")
    assert result.reply == "Cats like short names." and result.withheld == ["entity_id", "unfinished"]
