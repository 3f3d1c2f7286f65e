"""The word-list readings of requests and replies (hub.agent.utterances), across languages."""

from __future__ import annotations

import pytest

from hub.agent.utterances import claims_action, is_question, ordinal_position, repeats_itself
from hub.core.speech import looks_like_code
from hub.locales import SUPPORTED_LANGUAGES, word_list


@pytest.mark.parametrize("language,text", [
    ("en", "Is the desk lamp on?"), ("en", "what lights are on"), ("en", "How warm is it outside"),
    ("de", "Ist die Haustür abgeschlossen"), ("fr", "Quelle température fait-il dehors"),
    ("es", "¿Está encendida la luz de la cocina?"), ("it", "Quali luci sono accese"),
    ("pl", "Czy drzwi są zamknięte"), ("ru", "Сколько градусов в гостиной"), ("tr", "Işık açık mı"),
    ("ja", "キッチンの電気はついていますか"), ("zh", "客厅的灯开着吗"), ("ko", "거실 불 켜져 있나요"),
    ("th", "ไฟห้องครัวเปิดอยู่ไหม"), ("vi", "Đèn bếp có bật không"), ("ar", "هل الباب مقفل"),
    ("el", "Είναι αναμμένο το φως;"),
])
def test_questions_are_read_as_questions(language, text) -> None:
    assert is_question(text, language)


@pytest.mark.parametrize("language,text", [
    ("en", "Turn on the kitchen light"), ("en", "Can you turn on the light?"), ("en", "do it"),
    ("de", "Schalte das Licht ein"), ("de", "Kannst du das Licht einschalten?"),
    ("fr", "Allume la lumière"), ("es", "Enciende la luz"), ("zh", "请打开厨房的灯"),
    ("ja", "電気をつけてください"), ("ko", "불 켜 줘"), ("el", "Άναψε το φως; όχι, σβήσ' το"),
])
def test_commands_and_polite_requests_are_not_questions(language, text) -> None:
    assert not is_question(text, language)


def test_claims_are_read_in_the_language_and_in_english() -> None:
    assert claims_action("Done.", "en") and claims_action("Ich habe das Licht eingeschaltet.", "de")
    assert claims_action("I've turned on the lamp.", "de", also="en")
    assert claims_action("已打开客厅的灯。", "zh")
    assert not claims_action("The desk lamp is on.", "en") and not claims_action("Hello there!", "en")


def test_code_and_loops() -> None:
    assert looks_like_code('{"error": "unsupported", "message": "x"}')
    assert looks_like_code('{"name": "check_payment", "arguments": {"item": "sword"}}.')
    assert not looks_like_code("The kitchen light is on.")
    assert repeats_itself("Le Grand Garou, le Grand Garou, le Grand Garou, ")
    assert not repeats_itself("Paris is the capital of France, and it is lovely in spring.")


@pytest.mark.parametrize("language,answer,position", [
    ("en", "the first one", 0), ("en", "the second one", 1), ("en", "third", 2),
    ("de", "die zweite", 1), ("fr", "le premier", 0), ("ja", "二番目", 1), ("zh", "第二个", 1),
    ("en", "the lamp", None),
])
def test_ordinals_count_the_options(language, answer, position) -> None:
    assert ordinal_position(answer, language) == position


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_every_language_lists_four_positions_and_some_question_words(language) -> None:
    assert len(word_list(language, "choice.ordinal_words")) == 4
    assert word_list(language, "question.start_words") and word_list(language, "action.claim_words")
