"""The number words hassil reads range slots with ("vingt et un", "kaksikymmentäyksi"), for every
language, in little memory.

hassil builds a trie per language and range the first time a template reaches a range slot (0.1-3 s
of CPU: unicode_rbnf spells out every number), and keeps it for the process, once as spelt and
once case-folded: a node object and a dict per letter, 1-8 MiB a language and 54 MiB for Finnish's
inflected forms, 120 MiB for the 35. So every language's are built ahead (the first command that
says a number, or whose template could, does not pay for them: a first Finnish command took 5×
the next) and kept as `NumberWords`: the folded words sorted, each with the word and values the trie
gives, read the same way (`find`, as hassil's matcher calls it) from 3% of the memory.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Iterator

from hassil.intents import RangeSlotList
from hassil.string_matcher import _RANGE_TRIE_CACHE, _build_range_trie
from hassil.trie import Trie, _fold_case

from hub.understanding.recognition import LanguageIntents

RangeKey = tuple[int, int, int, Any]  # hassil's: start, stop, step, fraction type


class NumberWords:
    """A hassil number-word trie as its folded words, sorted: `find` yields what `Trie.find`
    does for the matcher's call (`ignore_case=True`: every word found at every position, each
    once, shortest first from each position)."""

    def __init__(self, trie: Trie) -> None:
        found: dict[str, tuple[str, tuple[Any, ...]]] = {}
        pending = list(trie._get_folded_roots().items())  # (folded word so far, its node)
        while pending:
            word, node = pending.pop()
            if node.text is not None:
                found[word] = (node.text if node.text != word else word, tuple(node.values or (None,)))
            pending.extend((word + letter, child) for letter, child in (node.children or {}).items())
        self._words = sorted(found)
        self._found = found

    def find(self, text: str, unique: bool = True, word_boundaries: bool = False,
             ignore_case: bool = False) -> Iterator[tuple[int, str, Any]]:
        if not (unique and ignore_case) or word_boundaries:
            raise NotImplementedError("hassil's matcher finds number words unique and case-folded")
        text, words, seen = _fold_case(text), self._words, set()
        for start in range(len(text)):
            for end in range(start + 1, len(text) + 1):
                part = text[start:end]
                at = bisect_left(words, part)
                if at == len(words) or not words[at].startswith(part):
                    break  # no word goes on like this
                if words[at] == part and part not in seen:
                    seen.add(part)
                    said, values = self._found[part]
                    yield from ((end, said, value) for value in values)


def prepare_number_words(loaded: LanguageIntents, code: str) -> None:
    """Build the number words of every range slot of the language (as hassil's matcher would on
    first use), kept compact."""
    for intents in loaded.intents:
        for slots in intents.slot_lists.values():
            if isinstance(slots, RangeSlotList) and slots.words:
                language = slots.words_language or code
                key = (slots.start, slots.stop, slots.step, slots.fraction_type)
                tries: dict[RangeKey, Any] = _RANGE_TRIE_CACHE[language]  # hassil's matcher only calls find
                if key not in tries:
                    try:
                        tries[key] = NumberWords(_build_range_trie(language, slots))
                    except ValueError:  # a language unicode_rbnf lacks: its ranges take digits only
                        return
    compact_number_words()


def compact_number_words() -> None:
    """Every number-word trie hassil built on its own (the follow-ups' ranges, a language's
    first number before it was prepared) made compact."""
    for tries in list(_RANGE_TRIE_CACHE.values()):
        found: dict[RangeKey, Any] = tries  # hassil's matcher only calls find
        for key, trie in list(found.items()):
            if isinstance(trie, Trie):
                found[key] = NumberWords(trie)
