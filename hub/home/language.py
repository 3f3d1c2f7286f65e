"""Which of the hub's languages a request is in, from its text.

HA 2025.4 over Wyoming sends no language, MQTT and REST asks may leave it out, and a bilingual
home may name one language and speak another. So every request's text is identified among the
hub's 35 languages: a script only one of them writes (Greek, Hebrew, Thai, Hangul, kana,
Devanagari, Arabic) settles it; otherwise lingua-language-detector ranks them. Measured on
2–8-word home commands (`bench/bench_language_id.py`), lingua was the most accurate of the
libraries on PyPI (its models ship in the wheel; nothing is downloaded); it takes about 16 s and
600 MB to load, so it loads off the event loop, and until it has the caller's language stands.

The result is an ordered list of candidates, not one answer: the fast path tries them in order
and the first language whose sentence templates match decides (`hub.agent.agent`). The language
the client named comes first unless the text is plainly another; the home's preferred language
breaks near ties.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import unicodedata
from typing import Any

from hub.locales import SUPPORTED_LANGUAGES, normalize_language

_LOGGER = logging.getLogger(__name__)

MAX_CANDIDATES = 3
# a candidate below this share of the best one's confidence is not worth a try
_KEEP_RATIO = 0.15
# the preferred language goes first when its confidence is at least this share of the best one's
_TIE_RATIO = 0.5
# the named language is plainly wrong when another holds this much and it this little
_PLAINLY, _HARDLY = 0.6, 0.05

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


class _Lingua:
    """lingua's detector for the 35 languages, built once per process in a thread."""

    _lock = threading.Lock()
    _detector: Any = None
    _failed = False

    @classmethod
    def ready(cls) -> bool:
        return cls._detector is not None

    @classmethod
    def load(cls) -> bool:
        with cls._lock:
            if cls._detector is None and not cls._failed:
                try:
                    from lingua import IsoCode639_1, LanguageDetectorBuilder

                    codes = [IsoCode639_1.from_str(code) for code in SUPPORTED_LANGUAGES]
                    cls._detector = (LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
                                     .with_preloaded_language_models().build())
                except Exception:  # an install without it: the named or preferred language stands
                    _LOGGER.exception("language identification unavailable")
                    cls._failed = True
        return cls._detector is not None

    @classmethod
    def confidences(cls, text: str) -> dict[str, float]:
        values = cls._detector.compute_language_confidence_values(text)
        return {v.language.iso_code_639_1.name.lower(): float(v.value) for v in values if v.value > 0}


async def prepare() -> bool:
    """Load the detector off the event loop (at start, so the first request need not wait)."""
    return _Lingua.ready() or await asyncio.to_thread(_Lingua.load)


def confidences(text: str) -> dict[str, float]:
    """Each language's share of the confidence that `text` is in it (empty: no idea yet)."""
    by_script = script_language(text)
    if by_script is not None:
        return {by_script: 1.0}
    if not _Lingua.ready() or not any(ch.isalpha() for ch in text):
        return {}
    return _Lingua.confidences(text)


def candidates(text: str, given: str | None = None, preferred: str | None = "en",
               limit: int = MAX_CANDIDATES) -> list[str]:
    """The languages `text` may be in, most likely first (never empty).

    `given` is the language the client named (None: none), `preferred` the home's (None: none).
    """
    named = normalize_language(given, default="") if given else ""
    preferred = normalize_language(preferred) if preferred else ""
    scores = confidences(text)
    if not scores:
        return [named or preferred or "en"]
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    best = scores[ranked[0]]
    ranked = [code for code in ranked if scores[code] >= _KEEP_RATIO * best]
    if named and not (best >= _PLAINLY and scores.get(named, 0.0) < _HARDLY):
        first = named  # the client's word, unless the text is plainly another language
    elif preferred and scores.get(preferred, 0.0) >= _TIE_RATIO * best:
        first = preferred
    else:
        first = ranked[0]
    return [first, *(code for code in ranked if code != first)][:limit]


def identify(text: str) -> list[str]:
    """The text's candidate languages with nothing named or preferred (benches, tools)."""
    return candidates(text, None, None)
