"""The language of each request: identified from the text, through the real agent and fast path."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from hub.options import hub_options
from hub.agent.types import TurnRequest
from hub.understanding import language
from hub.understanding.template_words import template_words
from hub.locales import phrase
from tests.understanding.harness import (
    MAIN_LANGUAGES,
    Rig,
    home_for,
    languages,
    preferred_other,
    sample_cases,
)

pytestmark = pytest.mark.timeout(300)

# share of sampled sentences of 3+ words whose text alone gets the right first candidate
# (ratchet: the measured floor), with the home preferring another language
TEXT_FLOOR = {
    "ar": 1.0, "bg": 1.0, "ca": 1.0, "cs": 1.0, "da": 0.94, "de": 1.0, "el": 1.0, "en": 1.0,
    "es": 1.0, "fi": 1.0, "fr": 1.0, "he": 1.0, "hi": 1.0, "hr": 1.0, "hu": 1.0, "id": 1.0,
    "it": 1.0, "ja": 1.0, "ko": 1.0, "ms": 0.86, "nb": 0.87, "nl": 1.0, "pl": 1.0, "pt": 1.0,
    "ro": 1.0, "ru": 1.0, "sk": 0.97, "sl": 1.0, "sr": 1.0, "sv": 1.0, "th": 1.0, "tr": 1.0,
    "uk": 0.97, "vi": 1.0, "zh": 1.0,
}


# sampled sentences of 3+ words the turn answered in another language than the text's (ratchet)
TURN_WRONG_AT_MOST = {"en": 0, "de": 0, "fr": 0, "es": 0, "nl": 0, "it": 0, "pl": 0, "pt": 0}


@pytest.fixture(scope="module", autouse=True)
def loaded() -> None:
    assert asyncio.run(language.prepare()), "py3langid is installed"


@pytest.mark.parametrize("text, expected", [
    ("Άναψε το φως στην κουζίνα", "el"), ("הדלק את האור", "he"), ("เปิดไฟในห้องครัว", "th"),
    ("거실 불 켜줘", "ko"), ("キッチンの電気をつけて", "ja"), ("रसोई की बत्ती जलाओ", "hi"),
    ("أشعل الضوء", "ar"), ("打开厨房的灯", None), ("Включи свет", None), ("turn on the light", None),
])
def test_a_script_only_one_language_writes_settles_it(text: str, expected: str | None) -> None:
    assert language.script_language(text) == expected


@pytest.mark.parametrize("text, given, preferred, first", [
    ("Schalte das Licht in der Küche ein", None, "en", "de"),
    ("Allume la lumière de la cuisine", None, "de", "fr"),
    ("打开厨房的灯", None, "en", "zh"),
    ("Выключи свет в спальне", None, "en", "ru"),
    ("timer di 2 ore", None, "en", "it"),  # py3langid alone: ca, id, nb, da, fr, then it
    ("turn on the kitchen light please", "de", "de", "en"),  # named German, plainly English
    ("set the heat pump to 21 degrees", "fr", "fr", "en"),
    ("Licht an", "de", "en", "de"),  # German or Dutch: the client's word stands
    ("Garage open", None, "nl", "nl"),  # English or Dutch: without a named one, the home's language
    ("Garage open", None, "en", "en"),  # breaks the tie
    ("TV pause", None, "de", "de"),  # the hub's state labels (fr "en pause", da "på pause") don't count
    ("ok", None, "fr", "fr"),  # too short to tell
    ("21", "pl", "en", "pl"),  # no letters at all
    ("21", None, "it", "it"),
])
def test_candidates(text: str, given: str | None, preferred: str, first: str) -> None:
    found = language.candidates(text, given, preferred)
    assert found[0] == first, found
    assert len(found) <= language.MAX_CANDIDATES and len(set(found)) == len(found)
    if given:
        assert given in found, "the named language is always tried"


def test_text_identification_of_sampled_commands_per_language() -> None:
    shares = {}
    for code in languages():
        texts = [c.text for c in sample_cases(code, 3, seed=3) if c.words >= 3]
        right = sum(language.candidates(t, None, preferred_other(code))[0] == code for t in texts)
        shares[code] = right / len(texts)
    print({code: round(share, 3) for code, share in shares.items()})
    assert {c: s for c, s in shares.items() if s < TEXT_FLOOR[c]} == {}


@pytest.mark.parametrize("code", MAIN_LANGUAGES)
async def test_the_turn_speaks_the_language_of_the_text(code: str) -> None:
    """Language left out, the home preferring another: the turn's language is the text's on
    sampled sentences of 3+ words (the templates' say included). The goal is ≥ 97%; the
    floors are what holds while questions, timers and dates are not on the fast path yet."""
    home = home_for(code)
    cases = [c for c in sample_cases(code, 3, seed=5, home=home) if c.words >= 3]
    async with Rig(home, language_option=preferred_other(code)) as rig:
        found = [(await rig.run(case, give_language=False)).result.language for case in cases]
    wrong = [(c.text, f) for c, f in zip(cases, found) if f != code]
    print(f"{code}: {len(cases) - len(wrong)}/{len(cases)} turns in the text's language")
    assert len(wrong) <= TURN_WRONG_AT_MOST[code], wrong


@pytest.mark.parametrize("given", [None, "en"])
async def test_a_german_command_with_no_or_the_wrong_language_is_carried_out_in_german(given) -> None:
    home = home_for("de")
    async with Rig(home, language_option="en") as rig:
        result = await rig.agent.ask(TurnRequest("Schalte die Deckenlampe ein", language=given, source="rest"))
        assert result.path == "fast_path" and result.language == "de"
        assert rig.backend.calls == [("light.ceiling", "turn_on", {})]
        assert result.reply == phrase("de", "action.turned_on", name="Deckenlampe")
        conversation = rig.agent.conversations.get(result.conversation_id)
        assert conversation is not None and conversation.language == "de"


def test_the_words_a_languages_templates_may_say_are_spelled_out() -> None:
    """Slovenian "([na] kakšno|[na] kaksno) <temp> je [nastavljen[a|o|i]] <name>": each ending,
    each alternative, the rules' words; no rule's, list's or slot's own name, no syntax."""
    words = template_words("sl")
    assert {"nastavljen", "nastavljena", "nastavljeno", "nastavljeni", "kakšno", "kaksno", "odgrni", "v"} <= words
    assert not {"temp", "name", "area", "brightness"} & words
    assert not [word for word in words if set(word) & set("[]()|<>{};")]


@pytest.mark.parametrize("text", ["odgrni Termostat 22", "22 minut in 50 sekunda timer", "v Termostat termostat",
                                  "nima veze"])
async def test_a_short_slovenian_command_is_carried_out_with_no_language_as_with_it(text: str) -> None:
    """Issue #15: two or three words around a name many languages share ("Termostat") ranked
    Slovenian fourth or lower, past the candidates the fast path tries; the words of each
    language's templates ("odgrni", "sekunda", "v") tell."""
    done = {}
    for given in ("sl", None):
        async with Rig(home_for("sl"), language_option="en") as rig:
            result = await rig.agent.ask(TurnRequest(text, language=given, source="rest"))
            done[given] = (result.path, result.language, result.reply, rig.backend.calls,
                           [(c.call.name, c.call.arguments) for c in result.tool_calls])
    assert done["sl"][:2] == ("fast_path", "sl")
    assert done[None] == done["sl"]


@pytest.mark.parametrize("code, text, call", [
    ("en", "turn on the Ventilator", ("fan.bedroom", "turn_on", {})),
    ("en", "set the Termostat to 22", ("climate.thermostat", "set_temperature", {"temperature": 22.0})),
    ("de", "Schalte den Ventilator ein", ("fan.bedroom", "turn_on", {})),
    ("de", "Ventilator aus", ("fan.bedroom", "turn_off", {})),
])
async def test_a_name_other_languages_have_does_not_take_a_command_away_from_its_language(code, text, call) -> None:
    """The templates' words count against a language that lacks them: an English or German
    command to a device named in words of many languages stays English or German."""
    shared = {"Fan": "Ventilator", "Thermostat": "Termostat"}
    home = home_for(code, lambda name, language: shared.get(name, name))
    async with Rig(home, language_option=preferred_other(code)) as rig:
        result = await rig.agent.ask(TurnRequest(text, source="rest"))
    assert (result.path, result.language) == ("fast_path", code)
    assert rig.backend.calls == [call]


async def test_the_model_is_told_the_language_of_the_text() -> None:
    home = home_for("fr")
    async with Rig(home, language_option="en") as rig:
        result = await rig.agent.ask(TurnRequest("Raconte-moi une blague sur les lampes", source="mqtt"))
    assert result.path == "model" and result.language == "fr"
    assert "reply in French" in rig.engine.requests[0].messages[-1].content


async def test_a_bilingual_home_follows_each_request() -> None:
    home = home_for("en")
    async with Rig(home, language_option="de") as rig:
        english = await rig.agent.ask(TurnRequest("turn on the Ceiling light", language="de"))
        assert english.language == "en" and rig.backend.calls == [("light.ceiling", "turn_on", {})]
        rig.backend.calls.clear()
        german = await rig.agent.ask(TurnRequest("Schalte den Fan ein", conversation_id=english.conversation_id))
        assert german.language == "de" and rig.backend.calls == [("fan.bedroom", "turn_on", {})]


async def test_a_short_answer_keeps_the_conversations_language() -> None:
    home = home_for("de")
    async with Rig(home, language_option="en") as rig:
        first = await rig.agent.ask(TurnRequest("Schalte die Deckenlampe ein"))
        assert first.language == "de"
        short = await rig.agent.ask(TurnRequest("ok", conversation_id=first.conversation_id))
        assert short.language == "de"
        fresh = await rig.agent.ask(TurnRequest("ok"))
        assert fresh.language == "en", "a new conversation starts from the home's language"


async def test_wyoming_as_home_assistant_2025_4_sends_it_in_german() -> None:
    """Only the text over a real Wyoming socket, to a hub whose home prefers English."""
    from wyoming.client import AsyncTcpClient
    from wyoming.event import Event
    from wyoming.handle import Handled

    from hub.config import validate
    from hub.interfaces.wyoming.server import WyomingServer

    async with Rig(home_for("de"), language_option="en") as rig:
        server = WyomingServer(rig.agent, hub_options(validate({"language": "en"})).wyoming, host="127.0.0.1", port=0,
                               discovery=False)
        await server.start()
        try:
            async with AsyncTcpClient("127.0.0.1", server.port) as client:
                await client.write_event(Event(type="transcript", data={"text": "Schalte die Deckenlampe ein"}))
                while not Handled.is_type((event := await asyncio.wait_for(client.read_event(), 30)).type):
                    pass
        finally:
            await server.stop()
        assert Handled.from_event(event).text == phrase("de", "action.turned_on", name="Deckenlampe")
        assert rig.backend.calls == [("light.ceiling", "turn_on", {})]


async def test_a_request_while_identification_still_loads_is_answered_without_waiting(monkeypatch) -> None:
    """Identification slow to load (a Raspberry Pi, a busy start): a request without a language
    waits at most READY_WAIT_S; then a script settles it, else the named and the preferred
    language's templates decide. Once loaded, the text decides again."""
    release = threading.Event()
    loaded_identifier = language._Identifier._confidences
    assert loaded_identifier is not None

    def slow_loader():
        release.wait(60)
        return loaded_identifier

    async with Rig(home_for("de"), language_option="de") as rig:
        monkeypatch.setattr(language._Identifier, "_confidences", None)
        monkeypatch.setattr(language._Identifier, "loader", staticmethod(slow_loader))
        monkeypatch.setattr(language, "READY_WAIT_S", 0.3)
        await rig.agent.start()
        try:
            started = time.perf_counter()
            result = await rig.agent.ask(TurnRequest("Schalte die Deckenlampe ein", source="rest"))
            waited = time.perf_counter() - started
            assert not language.ready(), "still loading"
            assert waited < 3, f"waited {waited:.1f} s for the load"
            assert result.path == "fast_path" and result.language == "de"
            assert rig.backend.calls == [("light.ceiling", "turn_on", {})]
            assert language.candidates("turn on the kitchen light please", "fr", "de") == ["fr", "de"]
            assert language.candidates("Άναψε το φως στην κουζίνα", None, "de")[0] == "el"
            release.set()
            assert await asyncio.wait_for(asyncio.shield(rig.agent._reception._loading), 10)
            assert language.candidates("turn on the kitchen light please", None, "de")[0] == "en"
        finally:
            release.set()
            await rig.agent.stop()


def test_identification_is_ready_before_the_templates_words_are_in(monkeypatch) -> None:
    """The templates' words take a second or two to gather: a request just after a start is
    identified by py3langid and the hub's own words meanwhile, not left without a language."""
    release = threading.Event()
    real_template_words = language.template_words

    def slow_template_words(code: str) -> list[str]:
        release.wait(60)
        return real_template_words(code)

    monkeypatch.setattr(language._Identifier, "_confidences", None)
    monkeypatch.setattr(language._KnownWords, "table", {})
    monkeypatch.setattr(language._KnownWords, "with_templates", False)
    monkeypatch.setattr(language, "template_words", slow_template_words)
    loading = threading.Thread(target=language._Identifier.load)
    loading.start()
    try:
        deadline = time.monotonic() + 30
        while not language.ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert language.ready() and not language._KnownWords.with_templates
        assert language.candidates("Schalte das Licht in der Küche und im Schlafzimmer ein", None, "en")[0] == "de"
    finally:
        release.set()
        loading.join(60)
    assert language._KnownWords.with_templates
    assert language.candidates("odgrni Termostat 22", None, "en")[:3].count("sl") == 1
