"""Preparing a language loaded for recognition: its templates built and kept, or compact
(`hub.understanding.compact_templates`), its number words loaded or let go, and what it holds.
"""

from __future__ import annotations

from hassil.intents import Intents, RangeSlotList, SlotList
from hassil.recognize import recognize_all
from hassil.string_matcher import _RANGE_TRIE_CACHE

from hub.memory import object_bytes
from hub.understanding.compact_templates import sentences
from hub.understanding.recognition import LanguageIntents


def keep_built(loaded: LanguageIntents, keep: bool) -> None:
    """Build every template's tree and keep it (a language prepared in full: 3-15 MiB), or let
    the trees go (each built again when a text may match it)."""
    for intents in loaded.intents:
        for sentence in sentences(intents):
            if keep:
                sentence.pin()
            else:
                sentence.unpin()


def language_bytes(loaded: LanguageIntents, counted: set[int], *codes: str) -> int:
    """Bytes of a language's templates (compiled, and the trees kept) and its number words
    (under each of its `codes`), but for objects `counted` already (`hub.memory.object_bytes`)."""
    return object_bytes([loaded, *(_RANGE_TRIE_CACHE.get(code) for code in codes)], counted)


def forget_number_words(*codes: str) -> None:
    """Let the number words of the languages `codes` go (hassil keeps them per language for the
    process: 3-8 MiB each); the next command that reaches a range slot loads the ones it needs."""
    for code in codes:
        _RANGE_TRIE_CACHE.pop(code, None)


def number_words(loaded: LanguageIntents, code: str) -> None:
    """Load the number words hassil reads the language's range slots with ("vingt et un"): the
    first command whose template reaches one paid 20-40 ms for them (unicode_rbnf's rules, and a
    table per range). Each range once, matched against a word that is no number."""
    ranges = {(r.start, r.stop, r.step, r.fraction_type): r for intents in loaded.intents
              for r in intents.slot_lists.values() if isinstance(r, RangeSlotList) and r.words}
    lists: dict[str, SlotList] = {f"range_{n}": r for n, r in enumerate(ranges.values())}
    probe = Intents.from_dict({"language": code, "intents": {
        "NumberWords": {"data": [{"sentences": [f"{{{name}}}" for name in lists]}]}}})
    try:
        list(recognize_all("warm", probe, slot_lists=lists, language=code))
    except ValueError:  # a language unicode_rbnf lacks: its ranges take digits only
        pass
