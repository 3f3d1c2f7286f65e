"""Every language carries every phrase with the same placeholders, and formatting is safe."""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache
from importlib import resources

import pytest
import yaml

from hub import locales
from hub.locales import (
    SUPPORTED_LANGUAGES,
    PhraseError,
    format_number,
    is_yes,
    join_list,
    no_words,
    normalize_language,
    phrase,
    plural_category,
    plural_phrase,
    yes_words,
)

VERBS = ("unlock", "lock", "open", "close", "move", "disarm", "arm", "turn_on", "turn_off", "change")
COUNTED_UNITS = ("hour", "minute", "second")
# The hub's own labels for states HA does not translate into a language (hub.locales.states).
STATUSES = ("opening closing stopped cleaning docked returning paused idle playing buffering standby error "
            "jammed locking unlocking mowing armed armed_away armed_home armed_night armed_vacation "
            "armed_custom_bypass arming disarmed disarming pending triggered home not_home heat cool "
            "heat_cool auto dry fan_only active").split()
# Phrases with a form per plural category (`plural_phrase`): the units, the count of held devices.
COUNTED = (*(f"unit.{unit}" for unit in COUNTED_UNITS), "policy.confirm_many")
# Plural forms beyond English's one/other that a language may add, when its plural rule uses them.
EXTRA_FORMS = ("zero", "two", "few", "many")
# The keys the team brief promises, with their placeholders.
PROMISED_KEYS = {
    "error.generic": set(), "error.timeout": set(), "error.busy": set(), "error.stopping": set(),
    "error.model": set(),
    "error.empty": set(), "error.too_long": set(), "error.ha_unavailable": set(),
    "error.ha_auth": set(), "error.speech_unavailable": set(), "error.unknown_persona": set(),
    "entity.not_found": {"name"}, "entity.ambiguous": {"options"},
    "action.done": set(), "action.turned_on": {"name"}, "action.turned_off": {"name"},
    "action.set_brightness": {"name", "value"}, "action.set_temperature": {"name", "value"},
    "action.set_position": {"name", "value"}, "action.acknowledged": {"name"},
    "action.reported": {"name", "state"}, "action.failed": {"reason"},
    "policy.not_allowed": {"name"}, "policy.confirm": {"action", "name"}, "policy.yes_words": set(),
    "policy.no_words": set(), "policy.cancelled": set(), "policy.rate_limited": {"name"},
    **{f"policy.verb.{verb}": set() for verb in VERBS},
    "timer.started": {"duration"}, "timer.finished": {"name"}, "timer.word": set(),
    "state.is": {"name", "state"}, "state.on": set(), "state.off": set(), "state.open": set(),
    "state.closed": set(), "state.locked": set(), "state.unlocked": set(),
    "state.unavailable": set(), "state.unknown": set(), "state.battery_low": set(),
    "state.battery_normal": set(), "state.label": {"name", "state"},
    **{f"status.{state}": set() for state in STATUSES},
    "list.and": {"items", "last"},
    "unit.celsius": {"value"}, "unit.fahrenheit": {"value"}, "unit.percent": {"value"},
    "unit.degrees": {"value"}, "unit.kmh": {"value"}, "unit.kwh": {"value"}, "unit.watt": {"value"},
    **{f"unit.{unit}.{form}": {"value"} for unit in COUNTED_UNITS for form in ("one", "other")},
    **{f"policy.confirm_many.{form}": {"action", "value"} for form in ("one", "other")},
    "number.decimal_separator": set(),
    "tool.timeout": {"name"}, "tool.unavailable": {"name"}, "tool.failed": {"name"},
    "tool.waiting": {"name"},
    "question.start_words": set(), "question.end_words": set(), "question.request_words": set(),
    "action.claim_words": set(), "action.nothing_done": set(), "error.unsupported": {"name"},
    "error.invalid_value": {"name"}, "error.not_understood": set(), "error.action_failed": set(),
    "reply.withheld": set(), "command.not_understood": {"example"}, "command.example_turn_on": {"name"},
    "choice.ordinal_words": set(),
    "answer.yes": set(), "answer.no": set(), "answer.which": {"state", "items"},
    "answer.which_none": {"state"}, "answer.which_none_label": {"state"}, "answer.count": {"state", "count", "total"},
    "answer.time": {"time"}, "answer.date": {"date"}, "date.pattern": {"day", "month", "year"},
    "date.months": set(),
}
# Keys whose text is a "|"-separated list of words, not a sentence.
WORD_LISTS = ("policy.yes_words", "policy.no_words", "question.start_words", "question.end_words",
              "question.request_words", "action.claim_words", "choice.ordinal_words")
# Things text-to-speech would read out or choke on; a colon or comma is fine, markup is not.
UNSPEAKABLE = re.compile(r"[*_#`~<>\[\]|%°€$@\\/=+^]|\s{2,}")


@lru_cache(maxsize=None)
def raw_file(language: str, features: bool = True) -> dict:
    """The language's phrases as written: its file and (`features`) its features' files
    (`phrases/<feature>/<lang>.yaml`, which only add keys)."""
    folder = resources.files("hub.locales").joinpath("phrases")
    data = yaml.safe_load(folder.joinpath(f"{language}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{language}.yaml is not a mapping"
    for feature in folder.iterdir() if features else ():
        path = feature.joinpath(f"{language}.yaml")
        if feature.is_dir() and path.is_file():
            more = yaml.safe_load(path.read_text(encoding="utf-8"))
            assert isinstance(more, dict) and not set(more) & set(data), f"{feature.name}/{language}.yaml"
            data.update(more)
    return data


def fields(text: str) -> list[tuple[str, str, str | None]]:
    return [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None]


def test_supported_languages_are_exactly_the_35() -> None:
    expected = ("ar bg ca cs da de el en es fi fr he hi hr hu id it ja ko ms nb nl pl pt ro ru sk sl "
                "sr sv th tr uk vi zh").split()
    assert list(SUPPORTED_LANGUAGES) == expected
    assert len(set(SUPPORTED_LANGUAGES)) == 35


def test_english_defines_exactly_the_promised_keys_and_placeholders() -> None:
    english = raw_file("en", features=False)
    assert set(english) == set(PROMISED_KEYS)
    for key, expected in PROMISED_KEYS.items():
        assert locales.placeholders(english[key]) == expected, key
    assert locales.phrase_keys() == set(raw_file("en"))
    assert locales.phrase_keys() >= set(PROMISED_KEYS)


def categories_used(language: str) -> set[str]:
    return {plural_category(n, language) for n in range(0, 1001)}


def english_key(key: str) -> str:
    """The reference key a plural form stands for: unit.minute.few → unit.minute.other."""
    head, _, form = key.rpartition(".")
    return f"{head}.other" if form in EXTRA_FORMS else key


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_language_has_every_key_with_the_english_placeholders(language: str) -> None:
    english = raw_file("en")
    data = raw_file(language)
    allowed_extra = {f"{key}.{form}" for key in COUNTED for form in EXTRA_FORMS
                     if form in categories_used(language)}
    assert set(english) <= set(data) <= set(english) | allowed_extra, (
        f"{language}: missing {sorted(set(english) - set(data))}, "
        f"extra {sorted(set(data) - set(english) - allowed_extra)}"
    )
    for key, text in data.items():
        assert isinstance(text, str), f"{language} {key}: not a quoted string ({text!r})"
        assert text.strip(), f"{language} {key}: empty"
        assert text == text.strip(), f"{language} {key}: stray whitespace"
        names = [name for name, _, _ in fields(text)]
        expected = fields_of(english[english_key(key)])
        if key.endswith((".one", ".two")) and key.startswith(COUNTED):
            # "שעתיים", "ساعة واحدة": the word alone may say the number
            assert set(names) <= expected and expected - set(names) <= {"value"}, \
                f"{language} {key}: placeholders {names}"
        else:
            assert set(names) == expected, f"{language} {key}: placeholders {names}"
        assert len(names) == len(set(names)), f"{language} {key}: a placeholder repeats"
        for name, spec, conversion in fields(text):
            assert name.isidentifier() and not spec and conversion is None, f"{language} {key}: {{{name}}}"
        if key not in (*WORD_LISTS, "number.decimal_separator", "date.months", "calendar.weekdays"):
            assert not UNSPEAKABLE.search(text), f"{language} {key}: unspeakable characters in {text!r}"


def fields_of(text: str) -> set[str]:
    return {name for name, _, _ in fields(text)}


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_language_specific_values_are_well_formed(language: str) -> None:
    data = raw_file(language)
    assert data["number.decimal_separator"] in (".", ",")
    words = yes_words(language)
    assert len(words) >= 3 and all(words), f"{language}: too few yes words"
    for word in words:
        assert word == word.strip() and not UNSPEAKABLE.search(word), f"{language}: yes word {word!r}"
    refusals = no_words(language)
    assert len(refusals) >= 3 and all(refusals), f"{language}: too few no words"
    assert not refusals & words, f"{language}: both yes and no: {refusals & words}"
    for word in refusals:
        # replies are compared with their punctuation (but the apostrophe) dropped
        assert not any(unicodedata.category(ch).startswith("P") and ch != "'" for ch in word), word
        assert word == word.strip() and not UNSPEAKABLE.search(word), f"{language}: no word {word!r}"
    months = data["date.months"].split("|")
    assert len(months) == 12 and all(m.strip() == m and m and not UNSPEAKABLE.search(m) for m in months), \
        f"{language}: date.months must be 12 month names separated by |"
    if language != "en":
        english = raw_file("en")
        translated = [k for k in english if data[k] != english[k]]
        assert len(translated) > len(english) * 0.8, f"{language}: mostly English text"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("de", "de"), ("de-DE", "de"), ("de_DE", "de"), ("DE", "de"), (" de-at ", "de"),
        ("nb-NO", "nb"), ("no", "nb"), ("nn-NO", "nb"), ("zh-Hans", "zh"), ("zh-CN", "zh"),
        ("zh-TW", "zh"), ("pt-BR", "pt"), ("iw", "he"), ("in", "id"), ("sr-Latn-RS", "sr"),
        ("en-US", "en"),
    ],
)
def test_normalize_language(code: str, expected: str) -> None:
    assert normalize_language(code) == expected


@pytest.mark.parametrize(
    "code", [None, "", "   ", "xx", "klingon", "-", "_", "e", 42, "q" * 10_000, "\x00de"], ids=lambda code: repr(code)[:16]
)
def test_unknown_language_gives_the_default_without_error(code) -> None:
    assert normalize_language(code) == "en"
    assert normalize_language(code, default="fr") == "fr"


def test_unknown_language_speaks_english() -> None:
    assert phrase("xx-YY", "entity.not_found", name="the lamp") == phrase("en", "entity.not_found", name="the lamp")
    assert phrase(None, "action.done") == "Done."
    assert "the lamp" in phrase("xx", "entity.not_found", name="the lamp")


def test_unknown_key_raises_a_clear_key_error() -> None:
    with pytest.raises(KeyError, match="unknown phrase key 'error.nope'"):
        phrase("de", "error.nope")


def test_missing_value_raises_a_clear_error() -> None:
    with pytest.raises(PhraseError, match=r"entity.not_found.*\{name\}"):
        phrase("de", "entity.not_found")


@pytest.mark.parametrize("language", ["en", "de", "ja", "ar"])
def test_values_with_braces_stay_literal(language: str) -> None:
    hostile = "{name} {0} {__class__} {value.__dict__} }{ {{"
    text = phrase(language, "entity.not_found", name=hostile)
    assert hostile in text
    assert phrase(language, "action.set_brightness", name="{value}", value="{name}").count("{") == 2
    assert join_list(["{a}", "b}"], language).count("{a}") == 1


def test_values_are_converted_to_text_and_extras_ignored() -> None:
    assert phrase("en", "unit.percent", value=40, unused="x") == "40 percent"


def test_german_and_french_not_found_are_in_their_language() -> None:
    german = phrase("de-DE", "entity.not_found", name="Küchenlicht")
    french = phrase("fr_FR", "entity.not_found", name="lampe du salon")
    english = phrase("en", "entity.not_found", name="x")
    assert "Küchenlicht" in german and "nicht" in german and "finden" in german
    assert "lampe du salon" in french and "trouve" in french
    assert german != english and french != english


def test_spoken_phrases_look_right_in_a_few_languages() -> None:
    assert phrase("de", "unit.celsius", value="21,5") == "21,5 Grad Celsius"
    assert phrase("fr", "unit.celsius", value="21,5") == "21,5 degrés Celsius"
    assert phrase("en", "state.is", name="The door", state=phrase("en", "state.open")) == "The door is open."


def test_join_list() -> None:
    assert join_list([], "en") == ""
    assert join_list(["kitchen"], "de") == "kitchen"
    assert join_list(["a", "b"], "en") == "a and b"
    assert join_list(["a", "b", "c"], "en") == "a, b and c"
    assert join_list(["a", "b", "c"], "de-DE") == "a, b und c"
    assert join_list(["a", "b", "c"], "fr") == "a, b et c"
    assert join_list(["甲", "乙", "丙"], "ja") == "甲、乙と丙"
    assert join_list(["a", "b"], "xx") == "a and b"


def test_yes_words() -> None:
    assert "yes" in yes_words("en")
    assert "ja" in yes_words("de")
    assert "oui" in yes_words("fr-CA")
    assert "sí" in yes_words("es")
    assert yes_words("xx") == yes_words("en")
    assert "nein" not in yes_words("de")


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("Yes.", "en", True), ("  OKAY! ", "en", True), ("Go ahead", "en", True),
        ("Ja, bitte!", "de", True), ("ＯＫ", "en", True), ("Si\u0300!", "it", True), ("Oui.", "fr", True), ("はい。", "ja", True),
        ("no", "en", False), ("yes but not the door", "en", False), ("", "en", False),
        ("Nein", "de", False), ("ja", "en", False),
    ],
)
def test_is_yes(text: str, language: str, expected: bool) -> None:
    assert is_yes(text, language) is expected


def test_format_number_uses_the_decimal_separator() -> None:
    assert format_number(21.5, "de") == "21,5"
    assert format_number(21.5, "en") == "21.5"
    assert format_number(21.0, "fr") == "21"
    assert format_number(21.04, "de") == "21"
    assert format_number(-3.25, "ru", max_decimals=2) == "-3,25"
    assert format_number(float("nan"), "de") == "nan"


def test_phrase_files_are_cached() -> None:
    locales._phrases.cache_clear()
    phrase("de", "action.done")
    phrase("de", "state.on")
    info = locales._phrases.cache_info()
    assert info.misses == 2 and info.hits >= 2  # de and en loaded once each
