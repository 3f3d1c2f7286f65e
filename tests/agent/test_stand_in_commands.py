"""Issue #28 point 2: a stand-in model is never handed a home command it cannot carry out. A
command that names a device, a kind of device or a room, and that the fast path did not carry
out, is answered by the hub in the request's language with an example that works in this home;
chit-chat and other personas still go to the model, and a real model gets the command."""

from __future__ import annotations

import pytest

from hub.agent import prompt
from hub.agent.personas import Persona, PersonaBook, home_persona
from hub.home.vocabulary import speaks_of_home
from hub.locales import SUPPORTED_LANGUAGES, phrase
from hub.understanding import language as language_id

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine, stand_in, text

pytestmark = pytest.mark.timeout(60)


def told(language: str, name: str) -> str:
    example = phrase(language, "command.example_turn_on", name=name)
    return phrase(language, "command.not_understood", example=example)


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
async def test_each_languages_example_works_on_the_fast_path(tmp_path, language) -> None:
    hub = TestHub(tmp_path, stand_in(), fast_path=True)
    assert hub.state("light.kitchen") == "off"
    result = await hub.ask(phrase(language, "command.example_turn_on", name="Kitchen light"), language=language)
    assert result.path == "fast_path" and hub.state("light.kitchen") == "on", result.reply


COMMANDS = [  # what the fast path leaves to the model, each naming a device, a kind or a room
    ("en", "make the desk lamp flicker like a candle", "Desk lamp"),
    ("en", "let the kitchen light pulse to the music", "Kitchen light"),
    ("de", "Lass den Saugroboter tanzen", "Bedroom light"),
    ("pl", "niech odkurzacz posprząta sypialnię", "Bedroom light"),
    ("fr", "mets l'aspirateur en marche", "Bedroom light"),
    ("nl", "laat de stofzuiger het huis doen", "Bedroom light"), ("es", "pon la aspiradora", "Bedroom light"),
]


@pytest.mark.parametrize("language,command,example", COMMANDS)
async def test_a_home_command_the_fast_path_missed_gets_an_honest_answer(tmp_path, language, command,
                                                                         example) -> None:
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    before = {e.entity_id: e.state for e in hub.store.all()}
    result = await hub.ask(command, language=language)
    assert engine.requests == [], "the stand-in is not handed the command"
    assert result.reply == told(language, example) and result.path == "resolution"
    assert {e.entity_id: e.state for e in hub.store.all()} == before and hub.backend.calls == []


@pytest.mark.parametrize("language,command,name", [("en", "start the robot vacuum", "robot vacuum"),
                                                   ("de", "Starte den Saugroboter", "Saugroboter")])
async def test_a_device_the_home_lacks_is_not_found(tmp_path, language, command, name) -> None:
    """A kind of device the home has none of, named alone (issue #40: said the same in any language)."""
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(command, language=language)
    assert engine.requests == [] and result.reply == phrase(language, "entity.not_found", name=name)


async def test_a_home_without_a_light_switch_or_fan_says_it_plainly(tmp_path) -> None:
    hub = TestHub(tmp_path, stand_in(), fast_path=True)
    for entity_id in [e.entity_id for e in hub.store.all() if e.domain in ("light", "switch", "fan")]:
        hub.store.remove(entity_id)
    result = await hub.ask("Lass den Saugroboter tanzen", language="de")
    assert result.reply == phrase("de", "error.not_understood")


@pytest.mark.parametrize("language,chat,reply", [
    ("en", "tell me a joke", "Why did the chicken cross the road? To get to the other side."),
    ("de", "Erzähl mir einen Witz", "Was ist grün und klopft an die Tür? Ein Klopfsalat."),
    ("fr", "raconte-moi une histoire de chat", "Il était une fois un chat qui dormait au soleil."),
    ("en", "how are you today", "I'm fine, thanks."), ("fr", "comment vas-tu aujourd'hui", "Je vais bien, merci."),
    ("es", "¿te gusta el cine?", "Sí, me encanta el cine."),
    # were "Sorry, I couldn't find like music.", "diesen Befehl habe ich nicht verstanden"
    ("en", "do you like music", "Yes, I love music."), ("de", "magst du Musik", "Ja, ich liebe Musik."),
    ("en", "sing me a song", "La la la, the sun is up. La la la, I drink my cup.")])
async def test_chit_chat_still_goes_to_the_stand_in(tmp_path, language, chat, reply) -> None:
    """A reply that answers it (the judge's "unrelated" kind) is spoken."""
    engine = stand_in([text(reply)])
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(chat, language=language)
    assert len(engine.requests) == 1 and result.path == "model" and result.reply == reply


@pytest.mark.parametrize("language,said", [("it", "blorp zibble uat"), ("pt", "blorp zibble uat"),
                                           ("es", "blorp zibble guat"), ("it", "raccontami una barzelletta")])
async def test_words_of_no_language_are_not_handed_to_the_stand_in(tmp_path, language, said) -> None:
    """SmolLM2 answered "blorp zibble uat" with "Frodo breath. Frodo bros." (bench_unspoken)."""
    assert await language_id.prepare()
    nonsense = said.startswith("blorp")
    engine = stand_in([] if nonsense else [text("Ecco una barzelletta.")])
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(said, language=language)
    if nonsense:
        assert engine.requests == [] and result.reply == told(language, "Bedroom light"), result.reply
    else:
        assert len(engine.requests) == 1 and result.path == "model"


async def test_another_personas_words_go_to_the_stand_in(tmp_path) -> None:
    engine = stand_in([text("Aye, the forge lamp burns bright.")])
    hub = TestHub(tmp_path, engine, fast_path=True)
    smith = Persona(key="smith", name="Brom", instructions="You are Brom, a gruff blacksmith.", tools=())
    hub.agent.personas = PersonaBook(home_persona(prompt.ASSISTANT_INSTRUCTIONS), [smith])
    result = await hub.ask("light the lamp in the kitchen", persona="smith")
    assert len(engine.requests) == 1 and result.reply == "Aye, the forge lamp burns bright."


async def test_a_real_model_is_handed_the_command(tmp_path) -> None:
    engine = ScriptedEngine([text("I can only switch it on or off.")])
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask("make the desk lamp flicker like a candle")
    assert len(engine.requests) == 1 and result.path == "model"


@pytest.mark.parametrize("language,said,expected", [
    ("en", "start the robot vacuum", True), ("en", "tell me a joke", False), ("de", "Schalte die Deckenlampe ein", True),
    ("pl", "wyłącz lampę w sypialni", True), ("pl", "opowiedz mi dowcip", False), ("zh", "打开空调", True),
    ("fr", "quelle heure est-il", False), ("nl", "doe de slaapkamerlamp uit", True),
])
def test_speaks_of_home(language, said, expected) -> None:
    assert speaks_of_home(said, language) is expected
