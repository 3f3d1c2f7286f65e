"""make_speakable / SpeakableStream: markdown, emoji, URLs, units per language, length cap."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.agent.speakable import SpeakableStream, make_speakable


def stream_chunks(language: str, chunks: list[str], max_chars: int | None = None) -> str:
    stream = SpeakableStream(language, max_chars)
    sentences: list[str] = []
    for chunk in chunks:
        sentences += stream.feed(chunk)
    return stream.join(sentences + stream.flush())


def split_at(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in zip(points, points[1:])]


# --- markdown -------------------------------------------------------------------------------


def test_markdown_list_reply_becomes_plain_sentences() -> None:
    reply = "Here are your lights:\n- **Kitchen**: on\n- Living room: off"
    assert make_speakable(reply, "en") == "Here are your lights: Kitchen: on. Living room: off."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("## Status\nAll *good*.", "Status. All good."),
        ("1. Turn on the hall\n2) Dim the kitchen;\n* [x] done", "Turn on the hall. Dim the kitchen. done."),
        ("Use `light.kitchen_main` and __bold__ or _it_ or ~~old~~ ***both***.",
         "Use light.kitchen_main and bold or it or old both."),
        ("Read [the manual](https://example.com/m) ![logo](x.png) now.", "Read the manual now."),
        ("> Quoted line\n\n---\n\nAfter the rule", "Quoted line. After the rule."),
        ("Code:\n```python\nprint('x'). y = 2\n```\nDone", "Code: Done."),
        ("Inline ```ls -l``` works.", "Inline ls -l works."),
        ("| Light | State |\n|---|:---:|\n| Kitchen | on |\n| Hall | off |\nThat is all.",
         "Kitchen, on. Hall, off. That is all."),
        ("| just | one row |", "just, one row."),
        ("Line one<br>and <b>two</b>", "Line one and two."),
        ("2 * 3 is 6", "2 * 3 is 6."),
        ("Done, ✅", "Done."),
        ("Okay\n\n\nNext", "Okay. Next."),
    ],
)
def test_markdown_is_removed(text: str, expected: str) -> None:
    assert make_speakable(text, "en") == expected


def test_emoji_and_urls_are_dropped() -> None:
    text = "The sun is out 🌞☀️! See https://weather.example.com/today?x=1 or www.example.org. Bye 👋🏽 👨‍👩‍👧 🇩🇪 1️⃣"
    assert make_speakable(text, "en") == "The sun is out! See or. Bye 1."
    assert make_speakable("👍", "en") == ""
    assert make_speakable("<https://example.com> Open it.", "en") == "Open it."


def test_whitespace_is_collapsed() -> None:
    assert make_speakable("  It   is\ton .  ", "en") == "It is on."


# --- numbers and units ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "It is 21.5°C.", "It is 21.5 degrees Celsius."),
        ("en", "It is 21,5 °C and 70°F.", "It is 21.5 degrees Celsius and 70 degrees Fahrenheit."),
        ("en", "Set to 50%.", "Set to 50 percent."),
        ("en", "Turn it 90°. Wind 3 km/h.", "Turn it 90 degrees. Wind 3 kilometers per hour."),
        ("en", "It used 2 kWh at 100 W.", "It used 2 kilowatt hours at 100 watts."),
        ("en", "Outside -3℃ and 1,000 W.", "Outside -3 degrees Celsius and 1,000 watts."),
        ("de", "Es sind 21.5°C.", "Es sind 21,5 Grad Celsius."),
        ("de", "Es sind 21,5 °C bei 50 %.", "Es sind 21,5 Grad Celsius bei 50 Prozent."),
        ("de", "Wind 3 km/h, 2 kWh, 100 W, 1.000 W.", "Wind 3 Kilometer pro Stunde, 2 Kilowattstunden, 100 Watt, 1.000 Watt."),
        ("de", "Um 7.30 Uhr sind es 20°.", "Um 7.30 Uhr sind es 20 Grad."),
        ("fr", "Il fait 21.5°C.", "Il fait 21,5 degrés Celsius."),
        ("fr", "Humidité 50 %, vent 3 km/h.", "Humidité 50 pour cent, vent 3 kilomètres par heure."),
        ("fr", "Consommation 2 kWh, 100 W, 70 °F.", "Consommation 2 kilowattheures, 100 watts, 70 degrés Fahrenheit."),
        ("de-DE", "Es sind 4.25 Grad.", "Es sind 4,25 Grad."),
    ],
)
def test_units_are_spoken_in_the_reply_language(language: str, text: str, expected: str) -> None:
    assert make_speakable(text, language) == expected


def test_numbers_that_are_not_decimals_stay() -> None:
    text = "Version v1.2.3 from 3.5.2024, items 1,2,3, at 7:30, room 12."
    assert make_speakable(text, "de") == text


# --- length cap -----------------------------------------------------------------------------


def test_cap_ends_on_a_sentence_boundary() -> None:
    text = "The kitchen light is on. The living room light is off. The hall is at 40%."
    assert make_speakable(text, "en", max_chars=60) == "The kitchen light is on. The living room light is off."
    assert make_speakable(text, "en", max_chars=54) == "The kitchen light is on. The living room light is off."
    assert make_speakable(text, "en", max_chars=53) == "The kitchen light is on."


def test_cap_cuts_a_too_long_first_sentence_at_a_word() -> None:
    text = "The kitchen light is on and the living room light is off, as you asked."
    assert make_speakable(text, "en", max_chars=40) == "The kitchen light is on and the living."
    assert make_speakable("Supercalifragilistic", "en", max_chars=6) == "Super."


def test_cap_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        make_speakable("Hi.", "en", max_chars=0)


sentence_words = st.lists(st.sampled_from(["light", "kitchen", "on", "is", "the", "21.5°C", "50%", "hall"]), min_size=1, max_size=12)
replies = st.lists(sentence_words.map(lambda w: " ".join(w).capitalize() + "."), min_size=1, max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(replies, st.integers(1, 200))
def test_cap_property(text: str, max_chars: int) -> None:
    full = make_speakable(text, "en")
    sentences = re.split(r"(?<=\.) ", full)
    capped = make_speakable(text, "en", max_chars=max_chars)
    assert len(capped) <= max_chars
    fitting = [k for k in range(1, len(sentences) + 1) if len(" ".join(sentences[:k])) <= max_chars]
    if fitting:
        assert capped == " ".join(sentences[: max(fitting)])
    elif " " in sentences[0][:max_chars]:
        # The first sentence alone is too long: cut after a whole word, ended with a full stop.
        assert capped.endswith(".")
        assert sentences[0].startswith(capped[:-1] + " ")
    else:
        # Only part of the first word fits: it is cut inside (nothing when only the stop fits).
        assert capped == (sentences[0][: max_chars - 1] + "." if max_chars > 1 else "")


# --- streaming ------------------------------------------------------------------------------


def test_stream_speaks_each_sentence_as_soon_as_it_is_complete() -> None:
    stream = SpeakableStream("en")
    assert stream.feed("The **kitch") == []
    assert stream.feed("en** light is on. The h") == ["The kitchen light is on."]
    assert stream.feed("all is at 21.5") == []
    assert stream.feed("°C.\n- Fan: ") == ["The hall is at 21.5 degrees Celsius."]
    assert stream.flush() == ["Fan."]


def test_stream_cap_marks_truncation_and_ignores_the_rest() -> None:
    stream = SpeakableStream("en", max_chars=30)
    assert stream.feed("The kitchen light is on. The hall light is off. ") == ["The kitchen light is on."]
    assert not stream.truncated  # the second sentence is not decided yet
    assert stream.feed("More text. ") == []
    assert stream.truncated
    assert stream.feed("Even more. ") == []
    assert stream.flush() == []


markdown_pieces = st.sampled_from(
    [
        "Here are your lights:", "\n", "- ", "**", "Kitchen", ": on", "21.5°C", " 50 %", " 3 km/h", " ",
        "```", "code. x", "| a | b |", "|---|---|", "# ", "[link](http://x.y)", "https://e.com/a.b", "🌞",
        ". ", "! ", "e.g. ", "Dr. ", "`x`", "_", "*", "1. ", "Done", "7.30 Uhr",
    ]
)
markdown_texts = st.lists(markdown_pieces, max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    markdown_texts,
    st.lists(st.integers(0, 10_000), max_size=15),
    st.sampled_from(["en", "de", "fr"]),
    st.one_of(st.none(), st.integers(1, 120)),
)
def test_any_chunking_speaks_like_the_whole_text(text, cuts, language, max_chars) -> None:
    whole = make_speakable(text, language, max_chars)
    assert stream_chunks(language, split_at(text, cuts), max_chars) == whole
    assert "**" not in whole and "```" not in whole and "http" not in whole and "🌞" not in whole
    if max_chars is not None:
        assert len(whole) <= max_chars


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["en", "de", "fr", "ja", "pl", "xx-YY", ""]), st.one_of(st.none(), st.integers(1, 80)))
def test_any_text_in_any_language_is_handled(text: str, language: str, max_chars: int | None) -> None:
    spoken = make_speakable(text, language, max_chars)
    assert spoken == spoken.strip()
    assert "  " not in spoken
    if max_chars is not None:
        assert len(spoken) <= max_chars
