"""One judge of spoken replies: a stand-in's in the hub (`hub.agent.model_turn`: a reply with a
fault is not spoken) and every reply in the benches and tests (`tests/helpers/unspoken_judge.py`,
`bench/bench_unspoken.py`) — the same code. The kinds of fault, over the reply's sentences:

- "machinery": words about how the hub works (tool, function, prompt, instruction, "the user",
  entity, JSON, "I was given", "the request"), in the request's language or English
  (`hub/locales/replies`);
- "prompt", "entity_id", "tool_name", "markup", "device": what the model was given, a device's
  words read as instructions among it (`PromptEcho`);
- "echo": the request said back (most of its words, in order, most of the sentence; or a
  sentence that starts with it; or most of them with nothing of its own), its words alike
  when misspelt ("Baanaan telefoon zeventien." to "banaan telefoon zeventien");
- "loop": a phrase of 3+ words said 3+ times, or a sentence said twice (nearly: 7 of its 10
  words), or a phrase of 4 said twice, or a clause said twice in a sentence;
- "unfinished": the last sentence cut off (mid-word, on a word no sentence ends with, inside a
  quotation), trailing off, a lead-in ("Here's a joke.") to nothing, or a bare "Sure.";
- "language": a sentence plainly in another language than the request's, or a short one
  ("Hello." to a Dutch request) made of another language's short words alone;
- "invented": a value that the turn did not read: a state ("… is off", "…: paused"), the
  weather, a time (a clock time, a weekday, a month), a quantity with its unit, an event, a
  fact about a device or a maker's product ("The device is a Samsung Galaxy S22");
- "unrelated", "nonsense", and a number that neither the request nor a reading holds
  ("invented"): a reply that shows no sign of answering the request, a word of no word list of
  its language (`hub.agent.relevance`);
- "empty": nothing said.

What the turn read (`read`) is the results of its calls and, for an answer the hub composed
itself, that answer (the hub's own answer is no echo either): neither the request's words ("is it sunny?") nor the states in a model's
prompt are a reading it answered from.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Callable, Iterable

from hub.agent.ports import LanguageIdentifier
from hub.agent.prompt_echo import PromptEcho
from hub.agent.relevance import nonsense, repeated_clause, unrelated, unread_number
from hub.agent.reply import loop_key
from hub.agent.sentences import SentenceSplitter
from hub.agent.utterances import in_other_language
from hub.locales import SUPPORTED_LANGUAGES, normalize_language, phrase_keys, template
from hub.locales.states import state_labels
from hub.locales.word_tables import first_said, fold, spaced, table_words, tokens

KINDS = ("machinery", "prompt", "entity_id", "tool_name", "markup", "device", "echo", "loop", "unfinished",
         "language", "invented", "unrelated", "nonsense", "empty")
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w])")
_CLOCK = re.compile(r"(?<![\w.,:])\d{1,2}[:h]\d{2}(?::\d{2})?(?![\w.,:]?\d)|(?<!\w)\d{4}-\d{2}-\d{2}(?!\w)")
_TERMINALS = ".!?。！？"
_CLOSERS = "\"'”’»)]」』）"
_ECHO_OF_REQUEST, _ECHO_OF_SENTENCE, _ECHO_MIN_WORDS = 0.7, 0.6, 3
_ECHO_AT_START = 0.8  # or a sentence that starts with this share of the request's words, in order
_ECHO_BARE = 0.6  # or a sentence with this share of them and no word of its own (of 4+ letters)
_ALIKE, _ALIKE_LETTERS = 0.65, 4  # words of 4+ letters this alike (accents aside) are one misspelt
_SHORT_WORDS = 3  # a sentence this short is told apart by the languages' short words, not identified
_PHRASE_WORDS, _PHRASE_TIMES = 3, 3  # a loop: a phrase of 3 words said 3 times,
_LONG_PHRASE_WORDS = 4  # one of 4 said twice ("de la misma manera"),
_LIKE_SENTENCE, _LIKE_WORDS = 0.7, 4  # or a sentence of 4+ words said again with 7 of 10 of its words
_WORD = re.compile(r"\w+")
_QUOTES = (('"', '"'), ("“", "”"), ("«", "»"), ("„", "“"))
_LEAD_IN_WORDS = 8  # a last sentence this short that starts as a lead-in leads to nothing
_REPLIES = "replies"
# English for a number's unit, beside the language's unit phrases
_UNIT_SIGNS = ("%", "°", "degrees", "degree", "percent", "celsius", "fahrenheit", "watts", "kwh")


class ReplyJudge:
    """The checks of one turn's reply: to `request` in `language`, by a model that was given
    what `echo` knows (None: what it was given is not judged), having read `read`; `identify`
    tells languages apart (None: the language is not judged), leaving out `names` (the home's:
    "Shopping list ist leer." is German, whatever its list is called)."""

    def __init__(self, language: str, request: str, *, echo: PromptEcho | None = None, read: Iterable[str] = (),
                 identify: LanguageIdentifier | None = None, names: Iterable[str] = ()) -> None:
        self.language = normalize_language(language)
        self._names = sorted({fold(n) for n in names if n and n.strip()}, key=len, reverse=True)
        self._request = tokens(request)
        self._request_text = request
        self._echo = echo
        self._identify = identify
        self._read = list(read)
        self._read_text = " ".join(self._read)
        self._read_padded = spaced(self._read_text)
        self._read_numbers = {_number(n) for text in self._read for n in _NUMBER.findall(text)}

    def faults(self, reply: str) -> list[str]:
        """The kinds of fault of the whole reply, in `KINDS` order."""
        sentences = split_sentences(reply, self.language)
        if not sentences:
            return ["empty"]
        found = {kind for sentence in sentences for kind in self.sentence_faults(sentence)}
        if _loops(reply, sentences) or any(map(repeated_clause, sentences)):
            found.add("loop")
        if unfinished(sentences[-1], self.language):
            found.add("unfinished")
        own = fold(reply) in fold(self._read_text)  # the hub's own answer, which the turn read
        if not own and unrelated(self._request_text, sentences, self.language, (*self._read, *self._names)):
            found.add("unrelated")
        return [kind for kind in KINDS if kind in found]

    def sentence_faults(self, sentence: str) -> list[str]:
        """The kinds of fault one sentence has by itself (those of a whole reply aside)."""
        found = []
        if first_said(sentence, table_words(_REPLIES, self.language, "machinery")):
            found.append("machinery")
        if self._echo is not None:
            echoed = self._echo.withheld_for(sentence)
            if echoed is not None:
                found.append(echoed)
        if self._echoes_request(tokens(sentence)) and fold(sentence) not in fold(self._read_text):
            found.append("echo")
        if self._identify is not None and self._in_other_language(self._unnamed(sentence)):
            found.append("language")
        if self.unread_value(sentence) is not None \
                or unread_number(self._unnamed(sentence), self._request_text, self._read_text) is not None:
            found.append("invented")
        if nonsense(sentence, self.language, self._request_text, (*self._read, *self._names)) is not None:
            found.append("nonsense")
        return found

    def _in_other_language(self, unnamed: str) -> bool:
        assert self._identify is not None
        if len(tokens(unnamed)) <= _SHORT_WORDS and short_in_other_language(unnamed, self.language):
            return True
        return in_other_language(unnamed, self.language, self._identify.confidences,
                                 self._identify.character_confidences)

    def _unnamed(self, sentence: str) -> str:
        """The sentence without the names of the home it says."""
        folded = fold(sentence)
        for name in self._names:
            folded = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", folded)
        return " ".join(folded.split())

    def unread_value(self, sentence: str) -> str | None:
        """A value the sentence states that the turn did not read, or None."""
        folded = fold(sentence)
        for number in _valued_numbers(folded, self.language):
            if _number(number) not in self._read_numbers:
                return number
        for clock in _CLOCK.finditer(folded):
            if not {_number(n) for n in re.split(r"[:h-]", clock.group())} <= self._read_numbers:
                return clock.group()
        for key in ("weather", "event", "weekday"):
            word = first_said(sentence, table_words(_REPLIES, self.language, key))
            if word is not None and not self._read_any(key):
                return word
        unnamed = self._unnamed(sentence)
        for key in ("device_claim", "brand"):  # "The device is a Samsung Galaxy S22."
            word = first_said(unnamed, table_words(_REPLIES, self.language, key))
            if word is not None and first_said(self._read_text, (word,)) is None:
                return word
        month = first_said(sentence, _months(self.language))
        if month is not None and first_said(self._read_text, _months(self.language)) is None:
            return month
        state = _stated(folded, self.language)
        if state is not None and not any(f" {w} " in self._read_padded for w in state):
            return state[0]
        return None

    def _read_any(self, key: str) -> bool:
        """Whether the turn read anything of the kind (the weather, a calendar, a day)."""
        return first_said(self._read_text, table_words(_REPLIES, self.language, key)) is not None

    def _echoes_request(self, said: list[str]) -> bool:
        asked = self._request
        if said and f" {' '.join(said)} " in f" {' '.join(asked)} " and \
                not _only_of(spaced(" ".join(said)), table_words(_REPLIES, self.language, "short")):
            return True  # a piece of the request: "Włącz zmywarkę." to "włącz zmywarkę", "Boil an egg." to
            # "how do I boil an egg" ("Hallo!" to "hallo" answers it)
        if len(asked) < _ECHO_MIN_WORDS or not said:
            return False
        common = _common_in_order(asked, said, _alike)
        if common >= _ECHO_OF_REQUEST * len(asked) and common >= _ECHO_OF_SENTENCE * len(said):
            return True  # "Erzähl mir einen Witz.", "Baanaan telefoon zeventien."
        if common >= _ECHO_BARE * len(asked) and all(
                len(word) < _ALIKE_LETTERS or any(_alike(word, w) for w in asked) for word in said):
            return True  # "una montagna più alta del mondo." to "qual è la montagna più alta del mondo"
        # "Enviado un mensaje a mi madre: …" to "envía un mensaje a mi madre"
        return _common_in_order(asked, said[:len(asked) + 1], _alike) >= _ECHO_AT_START * len(asked)


def split_sentences(reply: str, language: str) -> list[str]:
    """The reply's sentences as the hub splits them."""
    splitter = SentenceSplitter(language)
    return [s for s in (*splitter.feed(reply), *splitter.flush()) if any(ch.isalnum() for ch in s)]


def unfinished(sentence: str, language: str) -> bool:
    """Whether a reply's last sentence is cut off, trails off or only leads in."""
    stripped = sentence.strip().rstrip(_CLOSERS)
    if not stripped or stripped.endswith((":", "：", "…", "...", ",")) or stripped[-1] not in _TERMINALS:
        return True
    if any(sentence.count(opening) > sentence.count(closing) if opening != closing else sentence.count(opening) % 2
           for opening, closing in _QUOTES):
        return True  # a quotation never closed: cut off
    said = tokens(stripped)
    if not said:
        return True
    last = said[-1]
    language = normalize_language(language)
    if " ".join(said) in table_words(_REPLIES, language, "bare"):
        return True
    if last in table_words(_REPLIES, language, "dangling", with_english=False):
        return True
    if len(last) == 1 and last.isalpha() and last not in table_words(_REPLIES, language, "one_letter",
                                                                     with_english=False):
        return True
    return len(said) <= _LEAD_IN_WORDS and first_said(stripped, table_words(_REPLIES, language, "lead_in")) is not None


def _loops(reply: str, sentences: list[str]) -> bool:
    """A sentence said again (its letters and numbers aside, or 7 of 10 of its words), a phrase
    of 3 words said 3 times or one of 4 said twice ("I'm sorry" counts as "I m sorry")."""
    keys = [loop_key(s) for s in sentences]
    if len(set(keys)) < len(keys):
        return True
    words = [_WORD.findall(fold(s)) for s in sentences]
    for i, one in enumerate(words):
        for other in words[i + 1:]:
            shorter = min(len(one), len(other))
            if shorter >= _LIKE_WORDS and _common_in_order(one, other) >= _LIKE_SENTENCE * shorter:
                return True
    said = _WORD.findall(fold(reply))
    return _said_times(said, _PHRASE_WORDS) >= _PHRASE_TIMES or _said_times(said, _LONG_PHRASE_WORDS) >= 2


def _said_times(said: list[str], size: int) -> int:
    """How often the phrase of `size` words said most often is said."""
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(said) - size + 1):
        phrase = tuple(said[i:i + size])
        counts[phrase] = counts.get(phrase, 0) + 1
    return max(counts.values(), default=0)


def _common_in_order(a: list[str], b: list[str], same: Callable[[str, str], bool] = str.__eq__) -> int:
    """The length of the longest common subsequence of two word lists (words `same` as one)."""
    row = [0] * (len(b) + 1)
    for word in a:
        previous = 0
        for j, other in enumerate(b, 1):
            previous, row[j] = row[j], previous + 1 if same(word, other) else max(row[j], row[j - 1])
    return row[-1]


@lru_cache(maxsize=4096)
def _alike(a: str, b: str) -> bool:
    """Whether two folded words are one, or one misspelt ("baanaan", "banaan")."""
    if a == b:
        return True
    if min(len(a), len(b)) < _ALIKE_LETTERS:
        return False
    return SequenceMatcher(None, _unaccented(a), _unaccented(b)).ratio() >= _ALIKE


def _unaccented(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))


def short_in_other_language(sentence: str, language: str) -> bool:
    """Whether a short sentence ("Hello.", "Merci beaucoup !") is made of another language's
    short words alone, not of `language`'s (language identification cannot tell a word or two
    apart)."""
    said = spaced(sentence)
    if said.strip() == "" or _only_of(said, table_words(_REPLIES, language, "short", with_english=False)):
        return False
    return any(_only_of(said, words) for words in _short_words())


def _only_of(said: str, words: Iterable[str]) -> bool:
    """Whether the spaced words `said` are all of the phrases `words`."""
    for word in sorted(words, key=len, reverse=True):
        said = re.sub(rf"(?<!\S){re.escape(word)}(?!\S)", " ", said)
    return said.strip() == ""


@lru_cache(maxsize=1)
def _short_words() -> tuple[tuple[str, ...], ...]:
    """Each language's own short words (those without a table have English's)."""
    return tuple(dict.fromkeys(table_words(_REPLIES, code, "short", with_english=False)
                               for code in SUPPORTED_LANGUAGES))


def _number(text: str) -> str:
    return text.replace(",", ".")


def _valued_numbers(folded: str, language: str) -> list[str]:
    """The numbers of a folded sentence said with a unit or as a time of day ("21 degrees",
    "55 %", "7 o'clock")."""
    found = []
    marks = _marks(language)
    for match in _NUMBER.finditer(folded):
        after = folded[match.end():].lstrip()
        if any(after.startswith(mark) and not after[len(mark):len(mark) + 1].isalnum() for mark in marks):
            found.append(match.group())
    return found


@lru_cache(maxsize=64)
def _marks(language: str) -> tuple[str, ...]:
    """What after a number makes it a value: the units of the language's phrases, time marks."""
    units = [fold(template(language, key).replace("{value}", "")) for key in phrase_keys()
             if key.startswith("unit.") and key.count(".") == 1]
    marks = {*(u for u in units if u), *_UNIT_SIGNS, *table_words(_REPLIES, language, "time_mark")}
    return tuple(sorted(marks, key=len, reverse=True))


@lru_cache(maxsize=64)
def _months(language: str) -> tuple[str, ...]:
    return tuple(fold(m) for code in dict.fromkeys((language, "en"))
                 for m in template(code, "date.months").split("|") if len(m) > 3)


@lru_cache(maxsize=64)
def _state_pattern(language: str) -> tuple[re.Pattern[str], dict[str, tuple[str, ...]]]:
    """"<verb> <state>" or ": <state>" in `language` or English, and each state word's readings
    (the word and the states it says): the hub's own state words and Home Assistant's."""
    readings: dict[str, tuple[str, ...]] = {}
    for code in dict.fromkeys((language, "en")):
        said = [(key.split(".", 1)[1], template(code, key)) for key in phrase_keys()
                if key.startswith(("state.", "status.")) and "{" not in template(code, key)]
        said += [(key.rsplit(".", 1)[1], word) for key, word in state_labels(code).items()]
        for state, word in said:
            readings[fold(word)] = (fold(word), *readings.get(fold(word), ()), state)
    verbs = "|".join(re.escape(v) for v in table_words(_REPLIES, language, "state_verb"))
    states = "|".join(re.escape(w) for w in sorted(readings, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{verbs})\s+(?:now\s+)?({states})(?!\w)|:\s*({states})\s*(?:[.!?,;]|$)"), readings


def _stated(folded: str, language: str) -> tuple[str, ...] | None:
    """The readings of a state the sentence says a thing is in, or None."""
    pattern, readings = _state_pattern(language)
    match = pattern.search(folded)
    return readings[match.group(1) or match.group(2)] if match else None
