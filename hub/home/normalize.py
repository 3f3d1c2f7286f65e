"""Text folding for matching spoken words against entity names, aliases and areas.

Speech-to-text output and the names people give their devices rarely agree on case, accents or
punctuation: "Küche", "kuche" and "kueche", "Salón" and "salon", "İzmir", "Izmir" and "ızmir" must
all meet. `fold` maps such variants to one key; it is for comparison only, never for display.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Letters that casefold() + stripping combining marks leave apart but people use interchangeably.
_LETTER_MAP = str.maketrans(
    {
        "ı": "i",  # Turkish dotless i ("I".lower() in Turkish)
        "ø": "o",
        "đ": "d",
        "ð": "d",
        "ł": "l",
        "æ": "ae",
        "œ": "oe",
        "þ": "th",
    }
)
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)
# German writes ä/ö/ü as ae/oe/ue when umlauts are unavailable; after stripping marks,
# collapsing the digraphs makes "Küche", "Kuche" and "Kueche" one key. It is applied to both
# sides of every comparison, so an incidental digraph ("Feuer" → "feur") still matches itself.
_GERMAN_DIGRAPHS = re.compile(r"(?<=[a-z])([aou])e")
# Swedish and Finnish write an abbreviation's ending after a colon ("tv:n", "tv:tä"): the word is "tv"
_COLON_ENDING = re.compile(r"(?<=[^\W\d_]):[^\W\d_]{1,3}\b")
_COLON_ENDING_LANGUAGES = ("sv", "fi")


@lru_cache(maxsize=4096)
def fold(text: str, language: str = "en") -> str:
    """Lowercase, accent-free, punctuation-free text with single spaces.

    >>> fold("Schalte das Licht in der Küche ein!", "de")
    'schalte das licht in der kuche ein'
    """
    if language.startswith(("tr", "az")):
        # Turkish capitals: "I" is the capital of "ı", "İ" of "i".
        text = text.replace("I", "ı").replace("İ", "i")
    if language.startswith(_COLON_ENDING_LANGUAGES):
        text = _COLON_ENDING.sub("", text)
    folded = text.casefold()  # also ß → ss
    decomposed = unicodedata.normalize("NFKD", folded)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    stripped = stripped.translate(_LETTER_MAP)
    words = _NOT_WORD.sub(" ", stripped).split()
    if language.startswith("de"):
        words = [_GERMAN_DIGRAPHS.sub(r"\1", word) for word in words]
    return " ".join(words)


def words(text: str, language: str = "en") -> list[str]:
    """The folded words of `text`."""
    return fold(text, language).split()


def base_language(code: str | None, default: str = "en") -> str:
    """"de-DE" / "de_DE" / "DE" → "de"; empty → `default`."""
    if not code:
        return default
    return re.split(r"[-_]", code.strip(), maxsplit=1)[0].lower() or default
