"""Several commands in one sentence: where to split it, and the verb its parts share.

The language's word for "and" comes from its `list.and` phrase ("{items} and {last}" → "and"),
so every language the hub speaks splits without a table of its own; commas split too. A part
that is no command alone ("… and the kitchen lights") borrows the words before the first part's
target ("turn on the ") as its verb.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hub.locales import template

_MAX_PARTS = 4


@lru_cache(maxsize=64)
def _splitter(language: str) -> re.Pattern[str]:
    joiner = template(language, "list.and").replace("{items}", "\0").replace("{last}", "\0")
    word = joiner.strip("\0").strip()
    alternatives = [r"\s*,\s*(?:" + re.escape(word) + r"\s+)?" if word else r"\s*,\s*"]
    if word:
        spaced = joiner.strip("\0") != word  # "and" between spaces; "と" / "和" written on
        alternatives.append(r"\s+" + re.escape(word) + r"\s+" if spaced else re.escape(word))
    return re.compile("|".join(alternatives), re.IGNORECASE)


def split_parts(text: str, language: str) -> list[str]:
    """The parts between the language's "and"s and commas; [text] when there is nothing to split."""
    parts = [p.strip(" .!?") for p in _splitter(language).split(text.strip(" .!?"))]
    parts = [p for p in parts if p]
    return parts if 1 < len(parts) <= _MAX_PARTS else [text]


def with_shared_verb(part: str, first: str, target_start: int) -> list[str]:
    """A verbless part completed with the first part's words before its target: for
    "turn on the ceiling lights" (target at 12) and "the kitchen lights", "turn on the kitchen
    lights" and "turn on the the kitchen lights" (whichever the templates accept)."""
    verb = first[:target_start].rstrip()
    if not verb:
        return []
    words = part.split()
    forms = [f"{verb} {part}"]
    if len(words) > 1:
        forms.insert(0, f"{verb} {' '.join(words[1:])}")
    # "lights off in the kitchen and the office": the verb's own last word is an article
    head = verb.rsplit(" ", 1)[0] if " " in verb else ""
    if head:
        forms.append(f"{head} {part}")
    return forms
