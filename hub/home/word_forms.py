"""Words as people inflect and join them: "lampę" is "lampa", "Deckenlampe" is "Decke" + "Lampe".

A said word is matched to the words the home knows (its names' words and their translations, room
and device-kind words), the first way that finds one winning:
- as written (folded);
- inflected: the same Snowball stem (snowballstemmer: the languages of `_SNOWBALL`), or the known
  word followed by a short ending, or less a final vowel and followed by one ("lampan" is "lampa"
  with Swedish's definite "-n", "lampe" is Polish "lampę" folded) — the rule also serves the
  languages Snowball lacks (bg, he, sk, sl, uk …);
- in the compounding languages (`COMPOUNDING`), known words joined, each part found as above
  ("decken" + "lampe", "tak" + "lampan", "katto" + "lamppu"); in Arabic and Hebrew, a known
  word with an article or preposition written before it ("ال" + "راديو", "ה" + "רדיו").
`near` finds the known words a misheard or misspelt word may be ("ligth", "curtian"), for the
resolver's last try.

Measured (bench/bench_names.py --forms): on 104 inflected room and device words of ten inflecting
languages, Snowball with the rule finds 94 (the rule alone 78, Snowball alone 72; none matched a
wrong word), simplemma's lemmas with the rule 95 — but simplemma took 40 s and 400 MB to load
Polish (as long for Finnish) here, where Snowball is pure Python and loads in milliseconds. On the
401 requests of the names set all four carry out 398–399 (the word tables hold the commonest
forms), with no swap.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Iterable

import snowballstemmer  # type: ignore[import-untyped]

# The hub's languages → their Snowball algorithm (a close one for hr, ms and uk: Russian's stems
# found 6 of 9 Ukrainian words in bench/data/word_forms.yaml, the rule alone 4).
_SNOWBALL = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek",
    "en": "english", "es": "spanish", "fi": "finnish", "fr": "french", "hi": "hindi", "hr": "serbian",
    "hu": "hungarian", "id": "indonesian", "it": "italian", "ms": "indonesian", "nb": "norwegian",
    "nl": "dutch", "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian",
    "sr": "serbian", "sv": "swedish", "tr": "turkish", "uk": "russian",
}
COMPOUNDING = frozenset({"de", "nl", "sv", "da", "nb", "fi"})
_PREFIXING = frozenset({"ar", "he"})  # articles and prepositions written onto the word ("الراديو", "הרדיו")
_MIN_KNOWN = 4  # letters a known word needs before an ending may follow it ("tak" is whole only)
_MAX_ENDING = 3  # letters of an ending the rule accepts ("-met" of "sovrummet")
_MIN_PART = 3  # letters of a compound's part ("tak", "bad")
_MAX_PARTS = 3
_MIN_NEAR, _LONG = 5, 9  # letters of a word that may be misheard by one letter; by two
_KEPT = 20000  # words whose forms and parts are kept (then the caches start again)
_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=64)
def _stemmer(language: str) -> snowballstemmer.stemmer | None:
    algorithm = _SNOWBALL.get(language)
    return snowballstemmer.stemmer(algorithm) if algorithm else None


@lru_cache(maxsize=65536)
def stem(word: str, language: str) -> str:
    """`word`'s Snowball stem in `language` (the word itself where Snowball has no stemmer)."""
    stemmer = _stemmer(language)
    return str(stemmer.stemWord(word)) if stemmer is not None else word


class WordForms:
    """The known words of one home in one language, found again in their inflected and
    compounded forms."""

    def __init__(self, known: Iterable[str], language: str, *, rule: bool = True,
                 stems: bool = True) -> None:
        self.language = language
        self._known = frozenset(w for w in known if w and " " not in w)
        self._rule, self._stems = rule, stems
        self._by_stem: dict[str, set[str]] = defaultdict(set)
        self._by_head: dict[str, set[str]] = defaultdict(set)  # what an ending may follow → known words
        for word in self._known:
            if stems and len(word) >= _MIN_KNOWN:
                self._by_stem[stem(word, language)].add(word)
            if len(word) >= _MIN_KNOWN:
                self._by_head[word].add(word)
                if word[-1] in _VOWELS:
                    self._by_head[word[:-1]].add(word)
        self._seen: dict[str, frozenset[str]] = {}
        self._split: dict[str, tuple[str, ...]] = {}
        self._by_initial: dict[str, list[str]] = defaultdict(list)  # for misheard words
        for word in sorted(self._known):
            if len(word) >= _MIN_NEAR:
                self._by_initial[word[0]].append(word)

    def forms_of(self, word: str) -> frozenset[str]:
        """The known words `word` is, as written or inflected (none: empty); a known word is
        itself and the known words of its stem."""
        found = self._seen.get(word)
        if found is None:
            if len(self._seen) >= _KEPT:
                self._seen.clear()
            found = self._seen[word] = self._find(word)
        return found

    def _find(self, word: str) -> frozenset[str]:
        found = {word} if word in self._known else set()
        if len(word) < _MIN_KNOWN:
            return frozenset(found)
        if self._stems:  # a known word's other forms too ("televizi" is also "televize")
            found |= self._by_stem.get(stem(word, self.language), set())
        if self._rule and not found:
            for cut in range(1, _MAX_ENDING + 1):
                found |= self._by_head.get(word[:-cut], set()) if len(word) - cut >= _MIN_KNOWN - 1 else set()
                if self.language in _PREFIXING and word[cut:] in self._known and len(word) - cut >= _MIN_KNOWN:
                    found.add(word[cut:])
        return frozenset(found)

    def near(self, word: str) -> frozenset[str]:
        """The known words `word` may be misheard or misspelt for ("ligth", "curtian", "coffe"):
        the same first letter, at most one letter changed, added, dropped or two swapped — two
        from `_LONG` letters on; none for words under `_MIN_NEAR` letters."""
        if len(word) < _MIN_NEAR:
            return frozenset()
        most = 2 if len(word) >= _LONG else 1
        return frozenset(known for known in self._by_initial.get(word[0], ())
                         if abs(len(known) - len(word)) <= most and _distance(word, known, most) <= most)

    def parts(self, word: str) -> tuple[str, ...]:
        """The known words a compound joins, in order ("deckenlampe" → "decke", "lampe"); () when
        the language does not join words or `word` is no compound of known ones."""
        if self.language not in COMPOUNDING:
            return ()
        found = self._split.get(word)
        if found is None:
            if len(self._split) >= _KEPT:
                self._split.clear()
            found = self._split[word] = self._join(word, _MAX_PARTS)
        return found

    def _join(self, word: str, most: int) -> tuple[str, ...]:
        """The split whose first part is longest (fewest guesses at linking letters)."""
        if most < 2:
            return ()
        for cut in range(len(word) - _MIN_PART, _MIN_PART - 1, -1):
            head, tail = word[:cut], word[cut:]
            heads = self._head_forms(head)
            if not heads:
                continue
            tails = self.forms_of(tail)
            if tails:
                return (_pick(head, heads), _pick(tail, tails))
            rest = self._join(tail, most - 1)
            if rest:
                return (_pick(head, heads), *rest)
        return ()

    def _head_forms(self, head: str) -> frozenset[str]:
        """The known words a compound's first part is: whole, or with a linking letter or two
        ("decke-n", "küche-n", "kök-s", "arbeit-s")."""
        if head in self._known:
            return frozenset({head})
        found = self.forms_of(head)
        if not found:
            found = frozenset(w for cut in (1, 2) if len(head) - cut >= _MIN_PART
                              for w in ((head[:-cut],) if head[:-cut] in self._known else ()))
        return found


def _pick(said: str, forms: frozenset[str]) -> str:
    """The known word a part is: itself when known, else the shortest of its forms."""
    return said if said in forms else min(sorted(forms), key=len)


def _distance(a: str, b: str, most: int) -> int:
    """Optimal string alignment distance (a swap of two neighbours is one edit), or `most + 1`
    once it is sure to be over `most`."""
    before, row = None, list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, other in enumerate(b, 1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (char != other))
            if before is not None and i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > most:
            return most + 1
        before, row = row, current
    return row[-1]
