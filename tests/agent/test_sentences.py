"""SentenceSplitter: language-aware sentence ends, streamed by arbitrary chunks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.agent.sentences import SentenceSplitter, base_language


def split_whole(language: str, text: str, first_clause_words: int | None = None) -> list[str]:
    splitter = SentenceSplitter(language, first_clause_words)
    return splitter.feed(text) + splitter.flush()


def split_chunks(language: str, chunks: list[str], first_clause_words: int | None = None) -> list[str]:
    splitter = SentenceSplitter(language, first_clause_words)
    out: list[str] = []
    for chunk in chunks:
        out += splitter.feed(chunk)
    return out + splitter.flush()


def split_at(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in zip(points, points[1:])]


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "Hello Dr. Smith. How are you?", ["Hello Dr. Smith.", "How are you?"]),
        ("en", "Use e.g. the kitchen. Or i.e. not.", ["Use e.g. the kitchen.", "Or i.e. not."]),
        ("en", "It is 21.5 degrees. Next!", ["It is 21.5 degrees.", "Next!"]),
        ("en", "Wake me at 7:30. Thanks.", ["Wake me at 7:30.", "Thanks."]),
        ("en", "See https://example.com/a?b=1.5 for more. Done.", ["See https://example.com/a?b=1.5 for more.", "Done."]),
        ("en", "Lights, fans, etc. are on. OK.", ["Lights, fans, etc. are on.", "OK."]),
        ("en", "Is it on? No. It is off.", ["Is it on?", "No.", "It is off."]),
        ("en", "Press No. 5 now. So do I. End", ["Press No. 5 now.", "So do I.", "End"]),
        # a day or month only with its capital: "in the sun." ends a sentence, "Sun. 5 May" does not
        ("en", "I lie in the sun. The beach is nice.", ["I lie in the sun.", "The beach is nice."]),
        ("en", "Open Sun. 5 May. Bye.", ["Open Sun. 5 May.", "Bye."]),
        ("de", "Das ist so. Gut.", ["Das ist so.", "Gut."]),
        ("de", "Am So. 3. Mai. Ja.", ["Am So. 3. Mai.", "Ja."]),
        ("en", "J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]),
        ("en", 'He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
        ("en", "**Done.** Next one… Really? Yes!", ["**Done.**", "Next one…", "Really?", "Yes!"]),
        ("en", "Wait... what? OK.", ["Wait... what?", "OK."]),
        ("en", "Here are your lights:\n- Kitchen: on\n- Living room: off", ["Here are your lights:", "- Kitchen: on", "- Living room: off"]),
        ("en", "1. First step\n2. Second step.\n\nAfter.", ["1. First step", "2. Second step.", "After."]),
        ("en", "The U.S. Army is here. Yes.", ["The U.S. Army is here.", "Yes."]),
        ("de", "Das ist z. B. ein Test. Gut.", ["Das ist z. B. ein Test.", "Gut."]),
        ("de", "Das ist z.B. ein Test. Gut.", ["Das ist z.B. ein Test.", "Gut."]),
        ("de", "Am 3. Oktober sind es 21,5 Grad. Im 2. Stock auch.", ["Am 3. Oktober sind es 21,5 Grad.", "Im 2. Stock auch."]),
        ("de", "Das war 2024. Jetzt nicht.", ["Das war 2024.", "Jetzt nicht."]),
        ("de", "Herr Dr. Müller, Nr. 5, bzw. Frau Prof. Schulz. Ende.", ["Herr Dr. Müller, Nr. 5, bzw. Frau Prof. Schulz.", "Ende."]),
        ("fr", "M. Dupont est là. Il fait 21,5 degrés. Bonjour !", ["M. Dupont est là.", "Il fait 21,5 degrés.", "Bonjour !"]),
        ("fr", "Mme Durand habite av. Foch. Merci.", ["Mme Durand habite av. Foch.", "Merci."]),
        ("es", "La Sra. García llegó. ¿Qué tal? Bien.", ["La Sra. García llegó.", "¿Qué tal?", "Bien."]),
        ("it", "Il Sig. Rossi è qui. Il dott. Bianchi no.", ["Il Sig. Rossi è qui.", "Il dott. Bianchi no."]),
        ("nl", "Dhr. Jansen is thuis. Mevr. De Vries niet.", ["Dhr. Jansen is thuis.", "Mevr. De Vries niet."]),
        ("pt", "O Sr. Silva chegou. A Dra. Costa também.", ["O Sr. Silva chegou.", "A Dra. Costa também."]),
        ("pl", "Jest ok. 5 stopni. Np. Kuchnia jest włączona. Dobrze.", ["Jest ok. 5 stopni.", "Np. Kuchnia jest włączona.", "Dobrze."]),
        ("pl", "Dnia 3. Maja jest święto. Tak.", ["Dnia 3. Maja jest święto.", "Tak."]),
        ("en", "The 3. Next one.", ["The 3.", "Next one."]),
        ("ja", "今日は晴れです。明日は雨？「はい。」そうです！", ["今日は晴れです。", "明日は雨？", "「はい。」", "そうです！"]),
        ("zh", "灯已打开。温度是21.5度！好", ["灯已打开。", "温度是21.5度！", "好"]),
        ("de-DE", "Hallo. Welt", ["Hallo.", "Welt"]),
    ],
)
def test_examples(language: str, text: str, expected: list[str]) -> None:
    assert split_whole(language, text) == expected
    assert split_chunks(language, list(text)) == expected


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "Once upon a time, a keeper lived by the sea, alone. He was old, and tired.",
         ["Once upon a time,", "a keeper lived by the sea, alone.", "He was old, and tired."]),
        ("en", "Yes, the light is on. OK.", ["Yes, the light is on.", "OK."]),  # too short a clause
        ("en", "It is 21,5 or 1,000 degrees in here; cold.", ["It is 21,5 or 1,000 degrees in here;", "cold."]),
        ("en", "Wake me up at 7:30 tomorrow: early.", ["Wake me up at 7:30 tomorrow:", "early."]),
        ("en", '"Once upon a time," she said. End.', ['"Once upon a time,"', "she said.", "End."]),
        ("en", "Lights:\n- Kitchen, on", ["Lights:", "- Kitchen, on"]),
        ("de", "Es war einmal ein Mann, der am Meer wohnte.", ["Es war einmal ein Mann,", "der am Meer wohnte."]),
        ("zh", "从前有一座很高的灯塔，里面住着一位老人。", ["从前有一座很高的灯塔，", "里面住着一位老人。"]),
        ("zh", "从前有灯塔，里面住着一位老人。", ["从前有灯塔，里面住着一位老人。"]),
        ("en", '{"name": "check", "arguments": {"item": "sword"}}. Hi.', ['{"name": "check", "arguments": {"item": "sword"}}.', "Hi."]),
        ("fr", "Le Grand Garou, le Grand Garou, le Grand Garou.", ["Le Grand Garou, le Grand Garou, le Grand Garou."]),
    ],
)
def test_the_first_sentence_may_end_at_its_first_clause(language: str, text: str, expected: list[str]) -> None:
    """With `first_clause_words`, only the first piece ends at a clause mark (followed by space,
    CJK marks by themselves) once it has that many words (CJK: twice as many characters)."""
    assert split_whole(language, text, 4) == expected
    assert split_chunks(language, list(text), 4) == expected


def test_the_first_clause_comes_out_before_its_sentence_is_written() -> None:
    splitter = SentenceSplitter("en", first_clause_words=4)
    assert splitter.feed("Once upon a time,") == []  # "time,5" would be a number
    assert splitter.feed(" a") == ["Once upon a time,"]
    assert splitter.feed(" keeper, lived. ") == []
    assert splitter.feed("Then") == ["a keeper, lived."]


def test_sentences_come_out_as_soon_as_they_are_decided() -> None:
    splitter = SentenceSplitter("en")
    assert splitter.feed("The kitchen light is on") == []
    assert splitter.feed(". ") == []  # "on. " could still be "on. and" or an abbreviation
    assert splitter.feed("The") == ["The kitchen light is on."]
    assert splitter.feed(" hall is off!\n") == ["The hall is off!"]
    assert splitter.feed("灯已打开。") == []  # a closing bracket may follow
    assert splitter.feed("好") == ["灯已打开。"]
    assert splitter.flush() == ["好"]
    assert splitter.flush() == []


def test_base_language() -> None:
    assert base_language("de-DE") == "de"
    assert base_language("pt_BR") == "pt"
    assert base_language("") == "en"


pieces = st.sampled_from(
    [
        "Dr.", "z.", "B.", "e.g.", "etc.", "No.", "3.", "21.5", "21,5", "7:30", "https://x.com/a?b=1",
        ".", "!", "?", "…", "...", "。", "！", "」", "\"", "*", ")", " ", " ", "  ", "\n", "\n\n", "- ",
        "Hello", "world", "the", "Kitchen", "I", "M.", "1.", "a", "Oktober", "日本", ",", ", ", ";", ":", "，",
    ]
)
texts = st.one_of(st.lists(pieces, max_size=40).map("".join), st.text(max_size=120))


@settings(max_examples=400, deadline=None)
@given(texts, st.lists(st.integers(0, 10_000), max_size=20), st.sampled_from(["en", "de", "fr", "es", "it", "nl", "pt", "pl", "ja"]),
       st.sampled_from([None, 2]))
def test_any_chunking_gives_the_same_sentences(text: str, cuts: list[int], language: str,
                                               first_clause_words: int | None) -> None:
    whole = split_whole(language, text, first_clause_words)
    assert split_chunks(language, split_at(text, cuts), first_clause_words) == whole
    assert all(s and s == s.strip() for s in whole)
    # Nothing is lost: the sentences hold every non-space character, in order.
    assert "".join("".join(whole).split()) == "".join(text.split())


def test_long_sentence_keeps_the_buffer_short() -> None:
    text = "a very long sentence " * 5000 + "Dr. No. End. Next"
    splitter = SentenceSplitter("en")
    out: list[str] = []
    for start in range(0, len(text), 3):
        out += splitter.feed(text[start : start + 3])
        assert len(splitter._buffer) <= 50
    assert out + splitter.flush() == split_whole("en", text)
    assert out[0].endswith("Dr. No.") and out[1] == "End."
