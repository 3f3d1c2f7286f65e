"""Issue 39 point 2 with a scripted stand-in (sized like SmolLM2; it fails the test when asked
more than it was given): what the hub answers itself instead of the stand-in ("what can you do?",
"who are you?" in 35 languages; the weather, calendars and lists; questions of fact), and the
stand-in's chit-chat spoken only when it passes the judge, else the hub's fallback. The served
hub on its embedded defaults (SmolLM2) is `test_stand_in_served.py`."""

from __future__ import annotations

import dataclasses
from typing import Iterator

import pytest

from hub.agent.stand_in_routes import can_do, fallback
from hub.agent.types import ReplyChunk, TurnDone, TurnRequest, TurnResult
from hub.home.device_text import example_name
from hub.home.entities import Entity
from hub.locales import SUPPORTED_LANGUAGES, phrase
from hub.locales.word_tables import table_words
from hub.llm.inspect import inspect_gguf
from hub.llm.models import gemma3_270m_path, smollm2_path
from hub.llm.types import Delta, GenerationRequest, TextDelta

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine, stand_in, text

pytestmark = pytest.mark.timeout(120)


def own_question(language: str, topic: str) -> str:
    return table_words("topics", language, topic, with_english=False)[0]


async def test_what_can_you_do_and_who_are_you_in_35_languages(tmp_path) -> None:
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    example = example_name((), list(hub.store.all()))
    for language in SUPPORTED_LANGUAGES:
        result = await hub.ask(own_question(language, "capability"), conversation_id=f"c-{language}", language=language)
        assert result.reply == can_do(language, example) and result.path == "resolution", (language, result.reply)
        result = await hub.ask(own_question(language, "identity"), conversation_id=f"i-{language}", language=language)
        assert result.reply.startswith(phrase(language, "self.identity")), (language, result.reply)
    assert engine.requests == [], "the stand-in is handed none of them"


WITHOUT = [  # the home has no weather entity, no calendar, no to-do list
    ("en", "what's the weather like?", "missing.weather"), ("de", "Wie wird das Wetter?", "missing.weather"),
    ("fr", "est-ce qu'il va pleuvoir demain", "missing.weather"), ("pl", "jaka będzie jutro pogoda", "missing.weather"),
    ("en", "is today sunny or cloudy?", "missing.weather"),
    ("en", "am I leaving the house today, according to my calendar?", "missing.calendar"),
    ("es", "¿qué tengo en el calendario mañana?", "missing.calendar"),
    ("fr", "avec qui est-ce que je dîne ce soir", "missing.calendar"),  # SmolLM2: "Bien sûr, je dîne ce soir."
    ("en", "who am I having dinner with tonight?", "missing.calendar"),
    ("en", "who do I need to call? check my tasks", "missing.list"), ("nl", "wat staat er op mijn boodschappenlijst", "missing.list"),
]


@pytest.mark.parametrize("language,said,key", WITHOUT)
async def test_what_the_home_has_no_service_for_is_said_plainly(tmp_path, language, said, key) -> None:
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(said, language=language)
    assert result.reply == phrase(language, key) and engine.requests == []


async def test_a_weather_entity_the_hub_cannot_read_is_not_handed_to_the_stand_in(tmp_path) -> None:
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    hub.store.upsert(Entity("weather.home", "Home", "cloudy", {"temperature": 7}))
    result = await hub.ask("will I need an umbrella this afternoon")
    assert engine.requests == [] and result.reply == phrase("en", "self.cannot_read"), result.reply


FACTS = [  # questions of fact about the home or the world (a state, the time, a quantity), in words no template has
    ("en", "what's the battery level of the motion sensor?"), ("en", "is the speaker playing, paused or stopped?"),
    ("en", "what's the temperature inside?"), ("en", "how many legs does a spider have"),
    ("de", "wie voll ist der Akku vom Bewegungsmelder noch"), ("fr", "que fait l'enceinte du salon en ce moment"),
    ("es", "qué temperatura hace ahora en el salón"), ("it", "quanti gradi ci sono adesso in soggiorno"),
    ("nl", "hoeveel batterij heeft de bewegingssensor nog"), ("pt", "quanta bateria resta ao sensor de movimento"),
    ("pl", "ile baterii zostało czujnikowi ruchu"), ("en", "do you know if anybody left the front door unlocked?"),
    # and of the world, which a stand-in would invent: SmolLM2 said "The Hauptstadt von Australien.",
    # "Welche Sprake?", "Bola de 2020-01-28 14:12:53.", "La luna está la luna."
    ("de", "was ist die Hauptstadt von Australien"), ("de", "welche Sprache spricht man in Brasilien"),
    ("pt", "qual é o rio mais longo do mundo"), ("es", "a qué distancia está la luna"),
    ("en", "who wrote Romeo and Juliet"), ("it", "mi servirà l'ombrello oggi pomeriggio"),
]


@pytest.mark.parametrize("language,question", [("es", "¿te gusta la música?"), ("pt", "gostas de música?"),
                                               ("en", "do you like music?")])
async def test_a_question_of_taste_is_chit_chat(tmp_path, language, question) -> None:
    """Not the paused speaker's state (it was answered so): the stand-in's, judged like any."""
    engine = stand_in([text("Sí, ¡me encanta!" if language == "es" else "Sim, adoro!" if language == "pt" else
                            "Yes, I love it!")])
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(question, language=language)
    assert len(engine.requests) == 1 and result.path == "model" and "!" in result.reply, result.reply


@pytest.mark.parametrize("language,question", FACTS)
async def test_a_question_of_fact_is_never_handed_to_a_stand_in(tmp_path, language, question) -> None:
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(question, language=language)
    assert engine.requests == [] and result.reply, result.reply
    assert result.path != "model"


OUTSIDE = [  # commands outside the home the hub cannot carry out, as the bench and users said them
    ("en", "read my emails"), ("en", "call Liza"), ("en", "send a text message to mum"), ("de", "schick Mama eine Nachricht"),
    ("fr", "appelle le plombier"), ("es", "reserva un vuelo a París"), ("nl", "bestel een pizza voor me"),
    ("it", "svegliami domani alle sei"), ("pl", "przeczytaj moje maile"), ("pt", "envia uma mensagem à minha mãe"),
]


async def test_a_command_outside_the_home_is_never_handed_to_a_stand_in(tmp_path) -> None:
    """"I can't do that here", and what it can do; a question with the same words is chit-chat."""
    engine = stand_in([text("A kitten.")])
    hub = TestHub(tmp_path, engine, fast_path=True)
    for language, said in OUTSIDE:
        result = await hub.ask(said, conversation_id=said, language=language)
        assert result.reply == f"{phrase(language, 'self.cannot_do')} {can_do(language, None)}", (said, result.reply)
    assert engine.requests == []
    assert (await hub.ask("what do you call a baby cat?", conversation_id="q")).path == "model"


async def test_a_real_model_is_handed_them(tmp_path) -> None:
    engine = ScriptedEngine([text("It looks cloudy."), text("I can control your lights.")])
    hub = TestHub(tmp_path, engine, fast_path=True)
    hub.store.upsert(Entity("weather.home", "Home", "cloudy", {"temperature": 7}))
    assert (await hub.ask("will I need an umbrella this afternoon")).path == "model"
    assert (await hub.ask("what can you do?", conversation_id="c2")).path == "model"
    assert len(engine.requests) == 2


HEARD = [  # a stand-in's replies as issue 39 heard them, each with a fault of the judge's in its first sentence
    ("de", "Erzähl mir einen Witz", "Erzähl mir einen Witz. Ich habe nichts verändert."),
    ("en", "say something nice", "The user replied to the function in English."),
    ("en", "say something funny", "You can call this tool."),
    ("en", "how are you today", "I'm fine, and today is sunny."),
    # SmolLM2 through a served hub (bench_unspoken), heard by the widened judge
    ("nl", "banaan telefoon zeventien", "Baanaan telefoon zeventien."),
    ("en", "purple monkey dishwasher", "The device is a Samsung Galaxy S22, which is a smart home device."),
    ("nl", "vertel een mop", "Hello."),
    # SmolLM2 through a served hub, heard by the judge of unrelated replies and non-words
    ("en", "do you like music?", "I'm glad to hear that you're enjoying your trip to the UK."),
    ("fr", "est-ce que tu aimes la musique", "Je suis le monde de la musique."),
    ("it", "qual è il tuo colore preferito", "Il tuo colore dei sui per favore."),
    ("en", "tell me a joke", "What's a joke about a joke?"),
    ("en", "tell me a story about a dragon",
     "The story of a dragon is a classic example of how a single detail can have far-reaching consequences."),
]


async def spoken_turn(hub: TestHub, said: str, language: str = "en") -> tuple[TurnResult, str]:
    """The turn's result, and all its chunks said: what was spoken."""
    events = [e async for e in hub.agent.run(TurnRequest(said, conversation_id="c1", language=language))]
    result = next(e.result for e in events if isinstance(e, TurnDone))
    spoken = "".join(e.text for e in events if isinstance(e, ReplyChunk))
    assert hub.agent.conversations.get("c1").messages[-1].content == result.reply == spoken, "spoken, kept, returned"
    return result, spoken


@pytest.mark.parametrize("language,said,reply", HEARD)
async def test_chit_chat_whose_first_sentence_fails_the_judge_gets_the_fallback(tmp_path, language, said,
                                                                                reply) -> None:
    engine = stand_in([text(reply)])
    hub = TestHub(tmp_path, engine, fast_path=True)
    result, _ = await spoken_turn(hub, said, language)
    assert len(engine.requests) == 1 and result.reply == fallback(language, hub.store.all())


ENDED = [  # the reply ends after its last sentence that passed the judge with all before it (SmolLM2's
    # "El cambio de la cambión de la cronuma. El cambio de la …" to "Cuéntame un chiste" fails from its
    # first sentence on: "cambión", "cronuma" are no Spanish, test_judge.py)
    ("en", "tell me a story", ["Once upon a time, there was a cat named Tom. ", "Tom liked to nap on the sofa. ",
                               "The user asked for a story. ", "Tom woke up. ", "The end."],
     "Once upon a time, there was a cat named Tom. Tom liked to nap on the sofa."),
]


@pytest.mark.parametrize("language,said,written,reply", ENDED)
async def test_a_later_sentence_that_fails_the_judge_ends_the_reply_and_the_model(tmp_path, language, said,
                                                                                  written, reply) -> None:
    engine = stand_in([text(*written)])
    hub = TestHub(tmp_path, engine, fast_path=True)
    result, _ = await spoken_turn(hub, said, language)
    assert result.reply == reply and engine.requests[0].halt.is_set()
    # a sentence ends where the next one starts: the model is halted on the first part after the fault
    assert result.timings.model.completion_tokens == len(written) - 1


async def test_a_stand_ins_sentences_are_spoken_as_the_model_writes_them(tmp_path) -> None:
    """The first sentence is spoken before the model writes the next (a lead-in waits for the
    sentence it leads to); the last, cut off when the model stopped, is not spoken."""
    order: list[str] = []
    parts = ["Here's a joke. ", "Why don't scientists trust atoms? ", "Because they make up everything. ",
             "Ha ha, ", "that one is old. ", "And then the"]

    def written(request: GenerationRequest) -> Iterator[Delta]:
        for n, part in enumerate(parts):
            order.append(f"written {n}")
            yield TextDelta(part)
    hub = TestHub(tmp_path, stand_in([written], delay=0.01), fast_path=True)
    async for event in hub.agent.run(TurnRequest("tell me a joke", conversation_id="c1")):
        if isinstance(event, ReplyChunk):
            order.append(event.text)
        elif isinstance(event, TurnDone):
            result = event.result
    # a sentence is complete once the next starts (part n is logged as it is handed over, before the hub reads it)
    first = order.index("Here's a joke. Why don't scientists trust atoms?")
    assert order.index("written 2") < first < order.index("written 4"), order
    assert result.reply == ("Here's a joke. Why don't scientists trust atoms? Because they make up everything. "
                            "Ha ha, that one is old.")
    assert result.withheld == ["unfinished"]


async def test_a_stand_in_reciting_its_prompt_is_halted_there(tmp_path) -> None:
    """Gemma 3 270M recites its instructions to every chit-chat request (105 tokens a turn, all
    withheld): once a sentence is its prompt recited, the round is halted and the fallback spoken."""
    recital = ["You are Bolt, the voice assistant of a smart home. ",
               "You control devices with the tools and answer questions briefly. ", "If a request is unclear, ",
               "ask back. ", "Why did the chicken cross the road? ", "To get to the other side."]
    engine = stand_in([text(*recital)])
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask("tell me a joke")
    assert result.reply == fallback("en", hub.store.all()) and result.path == "model"
    assert engine.requests[0].halt.is_set() and result.timings.model.completion_tokens == 2, "halted at once"


@pytest.mark.parametrize("language,said", [("en", "blorp the fnord please"), ("fr", "blorp zibble ouat"),
                                           ("en", "blorp zibble wat")])
async def test_words_of_no_language_are_not_understood_in_the_language_named(tmp_path, language, said) -> None:
    """SmolLM2: "I'm glad to hear that you're enjoying the features of the Blorp.", "Bluetooth
    zibble ouat."; "wat" is Dutch too, and the reply stays in the language the request named."""
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(said, language=language)
    example = phrase(language, "command.example_turn_on", name=example_name((), list(hub.store.all())))
    assert engine.requests == [] and result.reply == phrase(language, "command.not_understood", example=example)


@pytest.mark.parametrize("language,said,intent", [
    # were "There is no calendar in this home." ("right now" read as a day, "away" as away from home)
    ("en", "how warm is it in the living room at the moment", "HassClimateGetTemperature"),
    ("en", "is any light still on in the living room", "HassGetState"),
    ("en", "what's the speaker in the living room doing at the moment", "HubMediaState"),
    ("de", "was macht der Lautsprecher im Wohnzimmer gerade", "HubMediaState"),
    ("fr", "que fait l'enceinte du salon en ce moment", "HubMediaState")])
async def test_a_question_about_now_is_read_from_the_home(tmp_path, language, said, intent) -> None:
    engine = stand_in()
    hub = TestHub(tmp_path, engine, fast_path=True)
    result = await hub.ask(said, language=language)
    assert result.intent == intent and engine.requests == [], result.reply


async def test_how_far_away_is_no_calendar_question(tmp_path) -> None:
    hub = TestHub(tmp_path, stand_in(), fast_path=True)
    result = await hub.ask("how far away is the moon")
    assert result.reply == phrase("en", "self.cannot_read"), result.reply



async def test_is_it_playing_in_european_portuguese_is_no_to_do_list(tmp_path) -> None:
    """ "está a fazer" was read as a to-do list: "Nada nas suas listas sobre sala." (bench_unspoken)."""
    hub = TestHub(tmp_path, stand_in(), fast_path=True)
    result = await hub.ask("o que está a fazer a coluna da sala neste momento", language="pt")
    assert result.intent == "HubMediaState", result.reply


async def test_chit_chat_in_a_language_the_model_does_not_speak_gets_the_fallback(tmp_path) -> None:
    """SmolLM2's file says it speaks English alone (GGUF general.languages): its German, French
    and Italian chit-chat was nonsense in real words ("Ich habe die Lieblingsfarbe, die für die
    Auswahl von wasen Kommunen können.", "Je suis-moi le musique.")."""
    engine = stand_in([text("My favourite colour is blue.")])
    engine.info = dataclasses.replace(engine.info, languages=("en",))
    hub = TestHub(tmp_path, engine, fast_path=True)
    german = await hub.ask("was ist deine Lieblingsfarbe", conversation_id="de", language="de")
    assert german.reply == fallback("de", hub.store.all()) and engine.requests == []
    english = await hub.ask("what is your favourite colour", conversation_id="en", language="en")
    assert english.reply == "My favourite colour is blue." and len(engine.requests) == 1


def test_the_model_files_languages_are_read() -> None:
    assert inspect_gguf(smollm2_path()).languages == ("en",)
    assert inspect_gguf(gemma3_270m_path()).languages == ()  # none said: any
