"""Several commands in one sentence: where to split it, and the verb its parts share.

The language's word for "and" comes from its `list.and` phrase ("{items} and {last}" → "and"),
so every language the hub speaks splits without a table of its own; commas split too, and the
language's words for "then" (written with spaces between words). A part
that is no command alone ("… and the kitchen lights") borrows the words another part has around
its target ("turn on the …"; German's verb-final "… aus").
"""

from __future__ import annotations

import re
from functools import lru_cache

from hub.home.name_words import extra_words
from hub.locales import template

_MAX_PARTS = 4
_MAX_FORMS = 12  # borrowed-word forms tried per part (each is a recognition)


@lru_cache(maxsize=64)
def _splitter(language: str) -> re.Pattern[str]:
    joiner = template(language, "list.and").replace("{items}", "\0").replace("{last}", "\0")
    word = joiner.strip("\0").strip()
    spaced = joiner.strip("\0") != word  # "and" between spaces; "と" / "和" written on
    # "do X, then do Y", "… and then …": the language's words for "then" (hub/locales/words/names/)
    then = "|".join(re.escape(w) for w in sorted(extra_words(language, "word.then"), key=len, reverse=True))
    alternatives = [rf"\s*,?\s+(?:{re.escape(word)}\s+)?(?:{then})\s+"] if then and spaced and word else []
    alternatives.append(r"\s*,\s*(?:" + re.escape(word) + r"\s+)?" if word else r"\s*,\s*")
    if word:
        alternatives.append(r"\s+" + re.escape(word) + r"\s+" if spaced else re.escape(word))
    return re.compile("|".join(alternatives), re.IGNORECASE)


def split_parts(text: str, language: str) -> list[str]:
    """The parts between the language's "and"s and commas; [text] when there is nothing to split."""
    parts = [p.strip(" .!?") for p in _splitter(language).split(text.strip(" .!?"))]
    parts = [p for p in parts if p]
    return parts if 1 < len(parts) <= _MAX_PARTS else [text]


def with_shared_words(part: str, befores: list[str], afters: list[str]) -> list[str]:
    """A part completed with words another part has around its target, most likely first.

    `befores`: an earlier part's words before its target ("turn on the" of "turn on the ceiling
    lights"), or its first words ("Allume"); `afters`: a part's words after it ("aus" of "im Büro
    aus"). Each may carry an article or preposition the part has already, so forms with those
    dropped come too: "the kitchen lights" → "turn on the kitchen lights"; "Schalte das Licht in
    der Küche" → "… Küche aus"; "im Büro aus" → "Schalte das Licht im Büro aus".
    """
    words = part.split()
    heads = [" ".join(words[drop:]) for drop in range(min(2, len(words)))]
    starts: dict[str, None] = {}
    for before in befores:
        verb = before.split()
        for drop in range(min(3, len(verb))):
            starts[" ".join(verb[:len(verb) - drop])] = None
    ends = [a.strip() for a in afters if a.strip() and not part.casefold().endswith(a.strip().casefold())]
    forms: dict[str, None] = {}
    for end in [*ends, ""]:
        for start in [*starts, ""]:
            for head in heads:
                form = " ".join(w for w in (start, head, end) if w)
                if form != part and (start or end):
                    forms[form] = None
    return list(forms)[:_MAX_FORMS]
