"""Words said around a command that HA's templates do not take ("now", "please", "jetzt",
"ahora"): the fast path reads the sentence without them when it did not understand it with them,
in the 8 main languages; a word of a device's name stays."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio

from hub.home.normalize import fold
from hub.understanding.courtesy import without_courtesy
from tests.helpers.answering_home import AnsweringHome

pytestmark = pytest.mark.timeout(120)
IN_ONE_LOOP = pytest.mark.asyncio(loop_scope="module")

LIGHT = "light.kitchen"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def home(tmp_path_factory: pytest.TempPathFactory):
    home = AnsweringHome(Path(tmp_path_factory.mktemp("courtesy")))
    await home.start({})
    yield home
    await home.stop()


@pytest.mark.parametrize("text, language", [
    ("turn on the kitchen light right now", "en"),
    ("ok, turn on the kitchen light", "en"),
    ("schalte das Küchenlicht jetzt ein", "de"),
    ("Küchenlicht an, bitte", "de"),
    ("allume la lumière de la cuisine maintenant", "fr"),
    ("enciende la luz de la cocina ahora", "es"),
    ("zet het keukenlicht nu aan", "nl"),
    ("accendi la luce della cucina adesso", "it"),
    ("włącz teraz światło w kuchni", "pl"),
    ("acende a luz da cozinha agora", "pt"),
])
@IN_ONE_LOOP
async def test_a_command_with_now_or_please_around_it_is_carried_out(home: AnsweringHome, text: str,
                                                                     language: str) -> None:
    outcome = await home.ask(text, language)
    assert outcome is not None, text
    assert [(c.name, c.arguments.get("entity_id")) for c in outcome.calls] == [("turn_on", LIGHT)], text


@IN_ONE_LOOP
async def test_a_question_with_now_is_the_question_not_the_calendars(home: AnsweringHome) -> None:
    outcome = await home.ask("how many lights are on right now", "en")
    assert outcome is not None and outcome.reply == (await home.ask("how many lights are on", "en")).reply
    assert [c.name for c in outcome.calls] == []


@IN_ONE_LOOP
async def test_a_missing_device_is_named_without_the_words_around_it(home: AnsweringHome) -> None:
    outcome = await home.ask("turn on the garage light now", "en")
    assert outcome is not None and not outcome.calls
    assert "garage light" in outcome.reply and "now" not in outcome.reply


@pytest.mark.parametrize("text, names, language, expected", [
    ("Küchenlicht an, bitte", [], "de", "Küchenlicht an"),
    ("ok, turn on the kitchen light right now!", [], "en", "turn on the kitchen light!"),
    ("allume la lumière s'il te plaît", [], "fr", "allume la lumière"),
    ("turn on the Now TV", ["now tv"], "en", "turn on the Now TV"),  # a word of a name stays
    ("turn on the light", [], "en", "turn on the light"),
])
def test_words_around_a_command(text: str, names: list[str], language: str, expected: str) -> None:
    unnamed = fold(text, language)
    for name in names:
        unnamed = " ".join(unnamed.replace(name, " ").split())
    assert without_courtesy(text, unnamed, language) == expected
