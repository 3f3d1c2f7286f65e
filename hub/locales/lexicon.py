"""The words of a language, as written: wordfreq's "large" word lists (every word said at least
about once in ten million: Zipf 2; read straight from its data file, bin by bin, without
importing wordfreq, whose tokenizers would cost the hub ~12 MiB more) and the hub's own phrases,
one language at a time, loaded when a reply in it is first judged. A language's words are kept as
a sorted array of their hashes (~1.4 MB for German's 170,000), its most common words ("the",
"what": Zipf 5.5 and over) as words."""

from __future__ import annotations

import gzip
import importlib.util
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import msgpack
import numpy as np
import numpy.typing as npt

from hub.locales import phrase_keys, template

_BINS_PER_ZIPF = 100  # the lists bin words by centibels: bin i is a Zipf frequency of 9 - i/100
_TOP_ZIPF = 9.0
_FLOOR_ZIPF = 2.0  # rarer words are left out (the lists' rarest hold misspellings)
_COMMON_ZIPF = 5.5  # a word said this often ("what", "your", "today") tells nothing of a topic
_COMPOUND_PART = 4  # the letters a part of a compound word ("Kaffee|bohnen") has at least
_LINKS = ("", "s", "n", "en", "e")  # what may join a compound's parts ("Lieblings|farbe")
_COMPOUNDING = frozenset({"de", "nl", "da", "sv", "nb", "no"})
_PHRASE_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")


class _Lexicon(NamedTuple):
    hashes: npt.NDArray[np.int64]  # sorted
    common: frozenset[str]

    def __contains__(self, word: object) -> bool:
        key = hash(word)
        at = int(np.searchsorted(self.hashes, key))
        return at < len(self.hashes) and int(self.hashes[at]) == key


@lru_cache(maxsize=None)
def _data_folder() -> Path | None:
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@lru_cache(maxsize=4)
def _words(language: str) -> _Lexicon | None:
    """`language`'s lexicon (None: no list for the language)."""
    folder = _data_folder()
    path = folder / f"large_{language}.msgpack.gz" if folder is not None else None
    if path is None or not path.is_file():
        return None
    hashes: list[npt.NDArray[np.int64]] = []
    common: set[str] = set()
    last_bin = int((_TOP_ZIPF - _FLOOR_ZIPF) * _BINS_PER_ZIPF)
    common_bins = int((_TOP_ZIPF - _COMMON_ZIPF) * _BINS_PER_ZIPF)
    with gzip.open(path) as packed:
        unpacker = msgpack.Unpacker(packed, raw=False)
        bins = unpacker.read_array_header()
        if bins < 1 or unpacker.unpack().get("format") != "cB":
            raise ValueError(f"{path} is not a wordfreq word list")
        for index in range(1, min(bins, last_bin + 1)):
            words = unpacker.unpack()
            hashes.append(np.fromiter(map(hash, words), dtype=np.int64, count=len(words)))
            if index <= common_bins:
                common.update(words)
    own = {w.casefold() for key in phrase_keys() for w in _PHRASE_WORD.findall(template(language, key))}
    hashes.append(np.fromiter(map(hash, own), dtype=np.int64, count=len(own)))
    return _Lexicon(np.unique(np.concatenate(hashes)), frozenset(common))


def has_lexicon(language: str) -> bool:
    """Whether `language` (a code such as "de") has a word list."""
    return _words(language) is not None


def is_common(word: str, language: str) -> bool:
    """Whether a folded word is one of `language`'s most common ("what", "your", "today")."""
    words = _words(language)
    return words is not None and word in words.common


def is_word(word: str, language: str) -> bool:
    """Whether a folded word is one of `language`'s: listed, or made of listed parts ("l'adresse",
    "e-mail"; in a language that compounds, "kaffee|bohnen"). True where there is no list."""
    words = _words(language)
    if words is None or word in words:
        return True
    parts = [p for p in word.replace("'", " ").replace("-", " ").split() if p]
    if len(parts) > 1:
        return all(p in words for p in parts)
    return language in _COMPOUNDING and _compound(word, words)


def _compound(word: str, words: _Lexicon) -> bool:
    """Made of two words of content ("klein|eine" is no compound: "kleineine")."""
    for cut in range(_COMPOUND_PART, len(word) - _COMPOUND_PART + 1):
        head, tail = word[:cut], word[cut:]
        if (tail in words and tail not in words.common) or _compound_tail(tail, words):
            if any(head.endswith(link) and _part(head[:len(head) - len(link)], words) for link in _LINKS if
                   len(head) - len(link) >= _COMPOUND_PART):
                return True
    return False


def _part(head: str, words: _Lexicon) -> bool:
    return head in words and head not in words.common


def _compound_tail(tail: str, words: _Lexicon) -> bool:
    """A compound's last part may itself be two ("Wohn|zimmer|lampe")."""
    return len(tail) >= 2 * _COMPOUND_PART and _compound(tail, words)
