"""Confirmation questions, refusals and spoken durations come out in the request's language.

These words used to be tables for eight languages inside the policy, the pending-confirmation
hook and the timers; now they are phrases (`policy.verb.*`, `policy.no_words`, `unit.hour.*` …,
`timer.word`) that every language carries, and the plural form is chosen per language.
"""

from __future__ import annotations

import pytest

from hub.agent.pending import is_no
from hub.home.entities import Entity
from hub.home.policy import CONFIRMATION_REQUIRED, ActionPolicy, confirm_verb
from hub.home.timers import spoken_duration
from hub.core.tools import ToolContext, ToolError
from hub.core.messages import ToolCall
from hub.locales import SUPPORTED_LANGUAGES, plural_category, plural_phrase


def question(language: str, entity: Entity, service: str) -> str:
    policy = ActionPolicy(allowed_domains="lock,cover,alarm_control_panel")
    with pytest.raises(ToolError) as raised:
        policy.check(entity, service, ToolCall("x", {}), ToolContext("c1", language=language))
    assert raised.value.code == CONFIRMATION_REQUIRED
    return str(raised.value)


DOOR = Entity("lock.front_door", "玄関ドア")
GARAGE = Entity("cover.garage", "Brama garażowa", device_class="garage")


def test_japanese_confirmation_question_is_japanese() -> None:
    assert question("ja-JP", DOOR, "unlock") == "本当に玄関ドアを解錠してもよろしいですか？"
    assert question("ja", DOOR, "open") == "本当に玄関ドアを開けてもよろしいですか？"


def test_polish_confirmation_question_is_polish() -> None:
    assert question("pl", GARAGE, "open_cover") == "Czy na pewno chcesz otworzyć urządzenie Brama garażowa?"
    assert question("pl-PL", GARAGE, "close_cover") == "Czy na pewno chcesz zamknąć urządzenie Brama garażowa?"


def test_the_eight_old_languages_keep_their_verbs_and_others_get_their_own() -> None:
    assert confirm_verb("unlock", "en") == "unlock" and confirm_verb("turn_on", "en") == "turn on"
    assert confirm_verb("alarm_disarm", "de") == "unscharf schalten"
    assert confirm_verb("alarm_arm_away", "pt") == "armar"
    assert confirm_verb("toggle", "nl") == "wijzigen"
    assert confirm_verb("unlock", "sv") == "låsa upp"
    assert confirm_verb("unlock", "xx") == "unlock"  # unknown language: English
    english = {confirm_verb(service, "en") for service in ("unlock", "open", "alarm_disarm", "toggle")}
    for language in SUPPORTED_LANGUAGES:
        if language != "en":
            verbs = {confirm_verb(service, language) for service in ("unlock", "open", "alarm_disarm", "toggle")}
            assert not verbs & english, f"{language}: English verbs {verbs & english}"


@pytest.mark.parametrize(
    ("minutes", "expected"),
    [(1, "1 minutę"), (2, "2 minuty"), (4, "4 minuty"), (5, "5 minut"), (12, "12 minut"),
     (21, "21 minut"), (22, "22 minuty")],
)
def test_polish_minutes_take_the_right_form(minutes: int, expected: str) -> None:
    assert spoken_duration(minutes * 60, "pl") == expected


def test_spoken_durations_in_japanese_and_polish() -> None:
    assert spoken_duration(5430, "ja") == "1時間、30分と30秒"
    assert spoken_duration(125, "ja") == "2分と5秒"
    assert spoken_duration(3725, "pl") == "1 godzinę, 2 minuty i 5 sekund"
    assert spoken_duration(0, "pl") == "0 sekund"


@pytest.mark.parametrize(
    ("language", "count", "expected"),
    [("ru", 1, "1 минуту"), ("ru", 3, "3 минуты"), ("ru", 11, "11 минут"), ("ru", 21, "21 минуту"),
     ("pl", 112, "112 minut"), ("pl", 124, "124 minuty"), ("uk", 22, "22 хвилини"), ("cs", 3, "3 minuty"), ("cs", 5, "5 minut"),
     ("hr", 21, "21 minutu"), ("sl", 2, "2 minuti"), ("sl", 3, "3 minute"), ("sl", 102, "102 minuti"),
     ("ro", 5, "5 minute"), ("ro", 20, "20 de minute"), ("ro", 101, "101 minute"),
     ("ar", 2, "دقيقتين"), ("ar", 5, "5 دقائق"), ("ar", 11, "11 دقيقة"), ("he", 2, "שתי דקות"),
     ("en", 1, "1 minute"), ("en", 0, "0 minutes"), ("xx", 2, "2 minutes"), ("zh", 1, "1分钟")],
)
def test_counted_minutes(language: str, count: int, expected: str) -> None:
    assert plural_phrase(language, "unit.minute", count) == expected


def test_plural_categories() -> None:
    assert [plural_category(n, "pl") for n in (1, 2, 5, 12, 22, 25)] == ["one", "few", "many", "many", "few", "many"]
    assert [plural_category(n, "ar") for n in (0, 1, 2, 3, 11, 100)] == ["zero", "one", "two", "few", "many", "other"]
    assert {plural_category(n, "ja") for n in range(200)} == {"other"}
    assert plural_category(0, "fr") == "one" and plural_category(0, "en") == "other"


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [("いいえ。", "ja", True), ("やめて", "ja", True), ("はい", "ja", False), ("Nie!", "pl", True),
     ("Lepiej nie.", "pl", True), ("Tak", "pl", False), ("Нет, спасибо", "ru", True),
     ("no", "ja", True), ("Don't!", "de", True), ("nein", "en", False)],
)
def test_refusals(text: str, language: str, expected: bool) -> None:
    assert is_no(text, language) is expected
