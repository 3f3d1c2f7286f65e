"""Which of the hub's languages a request is in, from its text.

HA 2025.4 over Wyoming sends no language, MQTT and REST asks may leave it out, and a bilingual
home may name one language and speak another. So every request's text is identified among the
hub's 35 languages: a script only one of them writes (Greek, Hebrew, Thai, Hangul, kana,
Devanagari, Arabic) settles it; otherwise py3langid, restricted to the 35 and its probabilities
normalized, ranks them. The result is an ordered list of candidates, not one answer: the fast
path tries them in order and the first language whose sentence templates match decides
(`hub.agent.agent`).

Why py3langid (`bench/bench_language_id.py`; 2–8-word home commands sampled from the templates):

  identifier                  load   resident   first, 3+ words   turn, 3+ words (templates' say)
                                                35 langs / 8 main  8 main / 35 langs
  py3langid                   0.6 s   +92 MiB     93.6% / 98.0%     99.2% / 96.2%
  lingua (the previous one)  5–30 s  +791 MiB     94.2% / 96.3%     97.0% / 96.3%
  lingua, lazy models         1.4 s  +181 MiB, +674 MiB once every language was seen; same accuracy
  lingua, low accuracy        0.2 s   +51 MiB     86.2% / 86.5%     89.6% (8 main)

(the 8 main: en de fr es nl it pl pt; turn level with the language left out and the home
preferring another.) Lingua's ranking is a little better on the hardest pairs (Malay against
Indonesian, Slovak against Czech, Bokmål against Danish), so over all 35 the two come out even,
but it loads for seconds to half a minute into 800 MiB; py3langid's model ships in its wheel
(4.6 MB, nothing is downloaded) and is as good or better on the main languages. It still loads off the event loop at start; a
request without a language that comes before it has loaded waits at most `READY_WAIT_S`, then
goes on with the script, the named and the preferred language as its candidates.

The language the client named comes first unless the text is plainly another; the home's
preferred language breaks near ties (nearer ones on a few words: "start vacuuming" leaned Dutch);
a text too short to tell ("ok", "21") keeps the named or preferred language.

On a few words py3langid's character statistics are nearly flat: "timer di 2 ore" ranked
Catalan, Indonesian, Bokmål, Danish, French before Italian. So the words the hub knows in each
language add to its confidence, each word shared among the languages that have it
(`_KNOWN_WORD_WEIGHT`), and each known word a language lacks divides its confidence
(`_MISSING_WORD`): a word only one language has counts most. The known words are the hub's
phrases, its device and room words, and every word the language's sentence templates may say
(`hub.understanding.template_words`; one letter is a word: Slovenian "v"). Identification
is ready once py3langid and the hub's own words are in (under a second); the templates' words
follow in the same thread (2 s of CPU for the 35 languages; 37,000 words, 5 MiB) and count from
then on, so a request just after a start is not left without its language meanwhile.
"odgrni Termostat 22", "22 minut in 50 sekunda timer" ranked Slovenian 4th or lower, past the
candidates the fast path tries; now first.

Text-level first choice on 3+ words, sampled sentences (seed 1 / seed 5; the samples say the
templates' words, so this flatters what is heard beyond them): all 35, the hub's words alone
95.5% / 95.7%, with the templates' words 99.4% / 99.3%; the 8 main 99.2 → 99.7% / 98.3 → 99.9%;
the right language among the first three (all sentences) 99.6 → 99.9% / 99.5 → 99.9%.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import unicodedata
from array import array
from importlib.metadata import version
from typing import Any, Callable

import numpy as np

from hub.understanding import template_cache
from hub.understanding.recognition import intents_language
from hub.understanding.template_words import template_words
from hub.home.vocabulary import all_words
from hub.locales import SUPPORTED_LANGUAGES, normalize_language, own_phrases
from hub.memory import give_back

_LOGGER = logging.getLogger(__name__)

MAX_CANDIDATES = 3
# the longest a request without a language waits for identification still loading (seconds)
READY_WAIT_S = 1.0
# a candidate below this share of the best one's confidence is not worth a try
_KEEP_RATIO = 0.15
# the preferred language goes first when its confidence is at least this share of the best one's
_TIE_RATIO = 0.7
# ... or this share, on a text of a few words: "start vacuuming" leaned Dutch (0.26 to English's
# 0.16), which says little; the home's language stands unless the text is plainly another
_SHORT_WORDS, _SHORT_TIE_RATIO = 3, 0.4
# the named language is plainly wrong when another holds this much and it less than this share of it
_PLAINLY, _HARDLY = 0.4, 0.2
# below this the text says too little ("ok", "Radio"): the named or preferred language stands
_UNSURE = 0.15

# what the known words of a text add to the confidences (which sum to 1), all words together
_KNOWN_WORD_WEIGHT = 0.6
# a language's confidence is multiplied by this for each known word of the text it does not have
_MISSING_WORD = 0.3
_WORD = re.compile(r"[^\W\d_]+")  # one letter is a word too: Slovenian "v", Polish "w"
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")

# scripts that only one of the 35 languages writes (first word of the Unicode character name)
_SCRIPT_LANGUAGE = {"GREEK": "el", "HEBREW": "he", "THAI": "th", "HANGUL": "ko", "HIRAGANA": "ja",
                    "KATAKANA": "ja", "DEVANAGARI": "hi", "ARABIC": "ar"}


def script_language(text: str) -> str | None:
    """The language a script only one of the hub's languages uses says the text is in, if any."""
    counts: dict[str, int] = {}
    for char in text:
        if char.isalpha():
            script = unicodedata.name(char, "").split(" ", 1)[0]
            if script in _SCRIPT_LANGUAGE:
                language = _SCRIPT_LANGUAGE[script]
                counts[language] = counts.get(language, 0) + 1
    if "ja" in counts:  # kana: Japanese, even among kanji
        return "ja"
    return max(counts, key=counts.__getitem__) if counts else None


def _load_py3langid() -> Callable[[str], dict[str, float]]:
    """py3langid's model restricted to the hub's languages, its probabilities normalized."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([_TO_PY3LANGID.get(code, code) for code in SUPPORTED_LANGUAGES])
    _slimmed(identifier)

    def confidences(text: str) -> dict[str, float]:
        return {_FROM_PY3LANGID.get(code, code): float(p) for code, p in identifier.rank(text) if p > 0}
    return confidences


def _slimmed(identifier: Any) -> None:
    """py3langid keeps the weights of all its 97 languages beside the 35 chosen (27 MiB), its
    automaton's row offsets and outputs as lists of Python ints (8 MiB), and its transitions in
    memory (37 MiB, of which a request reads a few rows): the chosen weights alone, the lists
    as arrays (3 MiB), the transitions mapped from disk (`template_cache.mapped`), read the same."""
    identifier.nb_ptc = np.ascontiguousarray(identifier.nb_ptc)
    identifier._full_model = (identifier.nb_ptc, identifier.nb_pc, identifier.nb_classes)
    identifier._rowbase = array("q", identifier._rowbase)
    identifier.tk_output = array("l", identifier.tk_output)
    identifier.tk_nextmove = template_cache.mapped(f"py3langid-{version('py3langid')}-transitions",
                                                   identifier.tk_nextmove)


# py3langid names Norwegian Bokmål by the macrolanguage
_TO_PY3LANGID = {"nb": "no"}
_FROM_PY3LANGID = {v: k for k, v in _TO_PY3LANGID.items()}


class _Identifier:
    """The text identifier for the hub's languages, loaded once per process in a thread."""

    _lock = threading.Lock()
    _confidences: Callable[[str], dict[str, float]] | None = None
    _failed = False
    loader: Callable[[], Callable[[str], dict[str, float]]] = staticmethod(_load_py3langid)

    @classmethod
    def ready(cls) -> bool:
        return cls._confidences is not None

    @classmethod
    def load(cls) -> bool:
        """Ready with the hub's own words (tenths of a second); the templates' words (a second
        or two more) are counted once they are in."""
        with cls._lock:
            if cls._confidences is None and not cls._failed:
                try:
                    confidences = cls.loader()
                    _KnownWords.table = _word_table(with_templates=False)
                    cls._confidences = confidences
                except Exception:  # an install without it: the named or preferred language stands
                    _LOGGER.exception("language identification unavailable")
                    cls._failed = True
            if cls._confidences is not None and not _KnownWords.with_templates:
                _KnownWords.table = _word_table(with_templates=True)
                _KnownWords.with_templates = True
                give_back()  # the 35 languages' templates read for their words: tens of MiB
                _LOGGER.info("language identification ready, with the templates' words")
        return cls._confidences is not None

    @classmethod
    def confidences(cls, text: str) -> dict[str, float]:
        assert cls._confidences is not None
        return cls._confidences(text)


def ready() -> bool:
    """Whether identification has loaded (until then only scripts, named and preferred languages)."""
    return _Identifier.ready()


async def prepare() -> bool:
    """Load the identifier off the event loop (at start, so the first request need not wait)."""
    return _Identifier.ready() or await asyncio.to_thread(_Identifier.load)


def confidences(text: str) -> dict[str, float]:
    """Each language's share of the confidence that `text` is in it (empty: no idea yet)."""
    return _identified(text, known_words=True)


def character_confidences(text: str) -> dict[str, float]:
    """`confidences` from the letters alone, without the hub's known words: for text that is not
    a command (a model's reply), whose words may come from several languages."""
    return _identified(text, known_words=False)


def _identified(text: str, known_words: bool) -> dict[str, float]:
    by_script = script_language(text)
    if by_script is not None:
        return {by_script: 1.0}
    if not _Identifier.ready() or not any(ch.isalpha() for ch in text):
        return {}
    scores = _Identifier.confidences(text)
    return _with_known_words(text, scores) if known_words else scores


class _KnownWords:
    """Folded word → the hub's languages that have it (`_word_table`), as loaded so far."""

    table: dict[str, frozenset[str]] = {}
    with_templates = False


def _word_table(with_templates: bool) -> dict[str, frozenset[str]]:
    """Folded word → the hub's languages that have it among their phrases and words, and, with
    `with_templates`, that their sentence templates say."""
    found: dict[str, set[str]] = {}
    for language in SUPPORTED_LANGUAGES:
        code = intents_language(language) if with_templates else None
        texts = [_PLACEHOLDER.sub(" ", text) for text in (*own_phrases(language), *all_words(language))]
        texts += template_words(code) if code else ()
        for word in {w.casefold() for text in texts for w in _WORD.findall(text)}:
            found.setdefault(word, set()).add(language)
    shared: dict[frozenset[str], frozenset[str]] = {}  # one set for all the words of the same languages
    return {word: shared.setdefault(key := frozenset(languages), key) for word, languages in found.items()}


def _with_known_words(text: str, scores: dict[str, float]) -> dict[str, float]:
    """The identifier's confidences plus each known word's share, less for each known word a
    language lacks (a word only one language has counts most), normalized again."""
    known = _KnownWords.table
    words = [w.casefold() for w in _WORD.findall(text)]
    said = [known[word] for word in words if word in known]  # each known word's languages
    scores = dict(scores)
    for languages in said:
        for language in languages:
            scores[language] = scores.get(language, 0.0) + _KNOWN_WORD_WEIGHT / len(languages) / len(words)
    for languages in said:
        for language in scores.keys() - languages:
            scores[language] *= _MISSING_WORD
    total = sum(scores.values())
    return {code: score / total for code, score in scores.items()}


class TextLanguages:
    """Language identification as the agent is handed it (`hub.agent.ports.LanguageIdentifier`):
    the process's one identifier (its model loads once, whoever asks first)."""

    ready_wait_s = READY_WAIT_S

    @staticmethod
    def ready() -> bool:
        return ready()

    @staticmethod
    async def prepare() -> bool:
        return await prepare()

    @staticmethod
    def candidates(text: str, given: str | None, preferred: str | None) -> list[str]:
        return candidates(text, given, preferred)

    @staticmethod
    def confidences(text: str) -> dict[str, float]:
        return confidences(text)

    @staticmethod
    def character_confidences(text: str) -> dict[str, float]:
        return character_confidences(text)


def _tie_ratio(text: str) -> float:
    """The preferred language's share of the best confidence that puts it first."""
    return _SHORT_TIE_RATIO if len(_WORD.findall(text)) <= _SHORT_WORDS else _TIE_RATIO


def candidates(text: str, given: str | None = None, preferred: str | None = "en",
               limit: int = MAX_CANDIDATES) -> list[str]:
    """The languages `text` may be in, most likely first (never empty).

    `given` is the language the client named (None: none), `preferred` the home's (None: none).
    """
    named = normalize_language(given, default="") if given else ""
    preferred = normalize_language(preferred) if preferred else ""
    scores = confidences(text)
    if not scores:  # not loaded yet, or no letters: the templates of both get their try
        return [code for code in dict.fromkeys((named, preferred)) if code][:limit] or ["en"]
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    best = scores[ranked[0]]
    ranked = [code for code in ranked if scores[code] >= _KEEP_RATIO * best]
    if best < _UNSURE and (named or preferred):
        first = named or preferred
    elif named and not (best >= _PLAINLY and scores.get(named, 0.0) < _HARDLY * best):
        first = named  # the client's word, unless the text is plainly another language
    elif preferred and scores.get(preferred, 0.0) >= _tie_ratio(text) * best:
        first = preferred
    else:
        first = ranked[0]
    ordered = [first, *(code for code in ranked if code != first)][:limit]
    if named and named not in ordered:  # still worth a try, last
        ordered = [*ordered[:limit - 1], named]
    return ordered

