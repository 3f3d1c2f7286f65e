"""Preparing a language loaded for recognition: its templates built and kept, or compact
(`hub.understanding.compact_templates`), and what it holds.
"""

from __future__ import annotations

from typing import Any

from hassil.expression import Expression
from hassil.string_matcher import _RANGE_TRIE_CACHE

from hub.memory import object_bytes
from hub.understanding.compact_templates import sentences
from hub.understanding.recognition import LanguageIntents


def keep_built(loaded: LanguageIntents, keep: bool) -> None:
    """Build every template's tree and keep it (a language prepared in full: 3-15 MiB), or let
    the trees go (each built again when a text may match it)."""
    built: dict[Any, Expression] = {}  # the parts the language's trees share, each built once
    for intents in loaded.intents:
        for sentence in sentences(intents):
            if keep:
                sentence.pin(built)
            else:
                sentence.unpin()


def language_bytes(loaded: LanguageIntents, counted: set[int], *codes: str) -> int:
    """Bytes of a language's templates (compiled, and the trees kept) and its number words
    (`hub.understanding.number_words`, under each of its `codes`), but for objects `counted`
    already (`hub.memory.object_bytes`)."""
    return object_bytes([loaded, *(_RANGE_TRIE_CACHE.get(code) for code in codes)], counted)
