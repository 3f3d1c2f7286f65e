"""Words people add around a command that HA's templates do not take: "now", "right now",
"please", "okay", "thanks" ("schalte das Küchenlicht jetzt ein", "enciende la luz de la cocina
ahora"). Read as part of a name they turned a command into "I can't find kitchen light now";
the fast path reads a sentence without them when it did not understand it with them
(`hub/locales/words/<language>.yaml`, `word.courtesy`; English's in every language).
"""

from __future__ import annotations

import re

from hub.home.normalize import fold
from hub.home.vocabulary import courtesy_words

_WORD = re.compile(r"\w+")


def without_courtesy(text: str, unnamed: str, language: str) -> str:
    """`text` without the courtesy words of `language` that `unnamed` (its words less the home's
    names, folded) says: a word of a name ("Now TV") stays."""
    said = f" {unnamed} "
    spans = [(m.start(), m.end(), fold(m.group(), language)) for m in _WORD.finditer(text)]
    folded = [word for _, _, word in spans]
    cut: list[tuple[int, int]] = []
    for phrase in courtesy_words(language):
        if f" {phrase} " not in said:
            continue
        words = phrase.split()
        for i in range(len(folded) - len(words) + 1):
            if folded[i:i + len(words)] == words:
                cut.append((spans[i][0], spans[i + len(words) - 1][1]))
                folded[i:i + len(words)] = [""] * len(words)  # a shorter phrase does not cut it again
    if not cut:
        return text
    kept, start = [], 0
    for begin, end in sorted(cut):
        kept.append(text[start:begin])
        start = end
    kept.append(text[start:])
    return _tidy("".join(kept))


def _tidy(text: str) -> str:
    """Commas and spaces a removed word left ("Küchenlicht an, ." → "Küchenlicht an.")."""
    text = re.sub(r"\s*,(?:\s*,)*\s*(?=[.!?]|$)", "", text)
    text = re.sub(r"^\s*,\s*", "", text)
    text = re.sub(r",(?:\s*,)+", ",", text)
    text = re.sub(r"\s+([.!?,])", r"\1", text)
    return " ".join(text.split())
