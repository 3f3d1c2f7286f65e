"""Word tables the hub reads text with, per language: `replies/<language>.yaml`, what a spoken
reply may not say or end with (hub.agent.judge), and `topics/<language>.yaml`, what a request
asks about (hub.agent.stand_in_routes). Each maps a key to "|"-separated words and short phrases,
folded as `word_list` folds them; the 8 main languages have their own, the others English's.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable
from importlib import resources

import yaml

from hub.locales import REFERENCE_LANGUAGE, UNSPACED_LANGUAGES, normalize_language

_TOKEN = re.compile(r"\w+(?:['-]\w+)*")


@lru_cache(maxsize=None)
def _table(folder: str, language: str) -> dict[str, tuple[str, ...]]:
    resource = resources.files(__package__).joinpath(folder, f"{language}.yaml")
    if not resource.is_file():
        return {}
    data = yaml.safe_load(resource.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"hub/locales/{folder}/{language}.yaml must map keys to \"|\"-separated words")
    return {str(key): tuple(dict.fromkeys(fold(w) for w in str(text).split("|") if w.strip()))
            for key, text in data.items()}


@lru_cache(maxsize=None)
def table_words(folder: str, language: str | None, key: str, with_english: bool = True) -> tuple[str, ...]:
    """`key`'s words in `language` and, `with_english`, in English (small models answer in
    English whatever they were asked in); a language without the key has English's. KeyError
    for a key English lacks."""
    english = _table(folder, REFERENCE_LANGUAGE)
    if key not in english:
        raise KeyError(f"hub/locales/{folder}/en.yaml has no {key!r}")
    own = _table(folder, normalize_language(language)).get(key)
    if own is None:
        return english[key]
    return tuple(dict.fromkeys((*own, *english[key]))) if with_english else own


def fold(text: str) -> str:
    """Case and width folded, apostrophes made one, single-spaced."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    return " ".join(folded.split())


def tokens(text: str) -> list[str]:
    """A text's folded words ("l'heure", "to-do" one word each)."""
    return _TOKEN.findall(fold(text))


def spaced(text: str) -> str:
    """A text's folded words, one space apart and around (to find words and phrases in)."""
    return f" {' '.join(tokens(text))} "


def first_said(text: str, words: Iterable[str], language: str | None = None) -> str | None:
    """The first of `words` that `text` says, as whole words (inside the text in a language
    written without spaces)."""
    if normalize_language(language) in UNSPACED_LANGUAGES:
        folded = "".join(fold(text).split())
        return next((w for w in words if "".join(w.split()) in folded), None)
    padded = spaced(text)
    return next((w for w in words if spaced(w) in padded), None)
