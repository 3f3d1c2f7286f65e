"""What kind of sentence a request or a reply is, from each language's word lists (hub.locales).

- `is_question`: the request asks for information ("Is the desk lamp on?", "¿Está encendida la
  luz?", "客厅的灯开着吗") rather than asking for something to be done. A question never acts:
  the agent offers the model only read-only tools for it.
- `asks_back`: a reply ends on a question ("Which room?"): the client may listen for the answer.
- `claims_action`: a reply sentence says something was done ("Done.", "I've turned on …"); the
  agent lets it through only when a call in the same turn really did something.
- `repeats_itself`: the text ends in the same stretch three times over (a decoding loop).
- `ordinal_position`: which option an answer to "which one?" counts to ("the second one").
- `in_other_language`: a reply sentence is plainly in another language than the request's.

Languages written without spaces between words (and Korean, whose endings attach to words)
are matched by substring; the others by whole words at the start or end of the text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

from hub.locales import UNSPACED_LANGUAGES, normalize_language, word_list
from hub.understanding.language import script_language

_QUESTION_MARKS = frozenset("?？؟;")  # ";" is the Greek question mark
_LOOP_TAIL = 240  # characters of the text's end that are searched for a loop
_MIN_LOOP, _MAX_LOOP = 4, 80  # length of the repeated stretch
_SINGLE_LETTER = re.compile(r"(?<!\w)[^\W\d_](?!\w)")
_PLAINLY = 0.5  # the other language's share at least; the request's at most a quarter of it, or
_HARDLY_RATIO, _HARDLY_SHORT, _SHORT = 0.25, 0.02, 4  # 0.02 for under 4 words (they say less of their language)
_NO_LANGUAGE_TOP, _NO_LANGUAGE_OWN = 0.25, 0.05  # see `in_no_language`
_MIXED_WORDS, _MIXED_RATIO, _MIXED_OWN = 4, 0.75, 0.7  # see `in_other_language`
# languages so close that a sentence of one is often taken for the other
_CLOSE = ({"da", "nb", "sv"}, {"cs", "sk"}, {"hr", "sr", "sl"}, {"id", "ms"}, {"es", "ca"})


def _words(text: str) -> str:
    """Case folded, punctuation (but apostrophes and hyphens) made spaces, single-spaced."""
    kept = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) and ch not in "'-" else ch
                   for ch in unicodedata.normalize("NFKC", text).casefold())
    return " ".join(kept.split())


def _starts_with(words: str, candidates: tuple[str, ...], unspaced: bool) -> bool:
    if unspaced:
        return any(c in words for c in candidates)
    return any(words == c or words.startswith(c + " ") for c in candidates)


def _ends_with(words: str, candidates: tuple[str, ...], unspaced: bool) -> bool:
    if unspaced:
        return any(words.endswith(c) for c in candidates)
    return any(words == c or words.endswith(" " + c) for c in candidates)


def is_question(text: str, language: str | None) -> bool:
    """Whether a request asks for information. Polite requests ("Can you turn on …?") are not."""
    language = normalize_language(language)
    unspaced = language in UNSPACED_LANGUAGES
    words = _words(text)
    if not words:
        return False
    if _starts_with(words, word_list(language, "question.request_words"), unspaced):
        return False
    if asks_back(text, language):
        return True
    ends = tuple(w for w in word_list(language, "question.end_words") if w)
    return _ends_with(words, ends, unspaced) or _starts_with(
        words, word_list(language, "question.start_words"), unspaced)


def polite_request(text: str, language: str | None) -> bool:
    """Whether a text asks for something politely ("Can you turn on …", "Kannst du …")."""
    language = normalize_language(language)
    return _starts_with(_words(text), word_list(language, "question.request_words"), language in UNSPACED_LANGUAGES)


def asks_back(text: str, language: str | None) -> bool:
    """Whether a text ends on a question mark (of its script; ";" is one in Greek alone), closing
    quotes and brackets aside."""
    stripped = text.strip().rstrip("\"'”’»)」』）.!。！ ")
    return stripped[-1:] in _QUESTION_MARKS and not (stripped[-1] == ";" and normalize_language(language) != "el")


def claims_action(sentence: str, language: str | None, also: str | None = None) -> bool:
    """Whether a reply sentence says an action was carried out: the claim words of `language`
    (or of `also`: small models often answer in English whatever the request's language)."""
    words = _words(sentence)
    padded = f" {words} "
    for lang in dict.fromkeys(normalize_language(code) for code in (language, also or language)):
        claims = word_list(lang, "action.claim_words")
        if lang in UNSPACED_LANGUAGES:
            if any(c in words for c in claims):
                return True
        elif any(f" {c} " in padded for c in claims):
            return True
    return False


def repeats_itself(text: str) -> bool:
    """Whether `text` ends with one stretch (4–80 characters, case and spacing ignored, any
    single letter as any other) written three times in a row: "Le Grand Garou, le Grand Garou,
    le Grand Garou,", "A: A joke. B: A: A joke. C: A: A joke."."""
    tail = " " + " ".join(_SINGLE_LETTER.sub("#", text[-_LOOP_TAIL:].casefold()).split())
    for size in range(_MIN_LOOP, min(_MAX_LOOP, len(tail) // 3) + 1):
        unit = tail[-size:]
        if unit.strip() and tail.endswith(unit * 3):
            return True
    return False


def in_other_language(sentence: str, language: str, confidences: Callable[[str], dict[str, float]],
                      characters: Callable[[str], dict[str, float]] | None = None) -> bool:
    """Whether a sentence of two words or more is plainly in another language than `language`
    by the identifier's `confidences` (a close neighbour of it aside: Danish for Bokmål is not
    "another language" here); or, of four words or more, a mix the hub's known words carry:
    `characters` (the identifier on letters alone) put another language first and `language`
    under 3/4 of it, and `confidences` give `language` under 0.7 ("qualsiasi cor de sua suerte."
    to a Portuguese request: Italian by its letters; 0.6% of the hub's own phrases and 0.4% of
    HA's test sentences of 4+ words are read so)."""
    language = normalize_language(language)
    words = len(sentence.split())
    if words < 2 and script_language(sentence) is None:
        return False
    scores = confidences(sentence)
    if not scores:
        return False
    top = _top_other(scores, language)
    if top is not None:
        hardly = _HARDLY_RATIO * scores[top] if words >= _SHORT else _HARDLY_SHORT
        if scores[top] >= _PLAINLY and scores.get(language, 0.0) < hardly:
            return True
    if characters is None or words < _MIXED_WORDS or scores.get(language, 0.0) >= _MIXED_OWN:
        return False
    by_letters = characters(sentence)
    top = _top_other(by_letters, language) if by_letters else None
    return top is not None and by_letters.get(language, 0.0) < _MIXED_RATIO * by_letters[top]


def _top_other(scores: dict[str, float], language: str) -> str | None:
    """The language `scores` put first, unless it is `language` or a close neighbour of it."""
    top = max(scores, key=scores.__getitem__)
    return None if top == language or any({top, language} <= close for close in _CLOSE) else top


def in_no_language(text: str, language: str, confidences: Callable[[str], dict[str, float]]) -> bool:
    """Whether `text` looks like none of the hub's languages ("blorp zibble uat"): no language
    has a quarter of the identifier's confidence and `language` hardly any (1 of the 17,723
    sentences of HA's intent tests in 35 languages is read so, a bare "plafondventilator 50%")."""
    scores = confidences(text)
    return bool(scores) and max(scores.values()) < _NO_LANGUAGE_TOP \
        and scores.get(normalize_language(language), 0.0) < _NO_LANGUAGE_OWN


def ordinal_position(answer: str, language: str | None) -> int | None:
    """0 for "the first one", 1 for "die zweite", …: `choice.ordinal_words`. When several
    positions are said ("the second one" also says "one"), the highest counts."""
    language = normalize_language(language)
    words = _words(answer)
    padded = f" {words} "
    said = [position for position, alternatives in enumerate(word_list(language, "choice.ordinal_words"))
            if any((w in words) if language in UNSPACED_LANGUAGES else (f" {w} " in padded)
                   for w in (a.strip() for a in alternatives.split(",")) if w)]
    return max(said) if said else None
