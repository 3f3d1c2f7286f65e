"""The words of questions about the home that no template reads, and what people call lists:
`hub/locales/words/questions/<language>.yaml` (the main languages; English defines the keys),
folded, each key's phrases longest first. A text is looked at as `said`: its folded words with a
space before and after (" who do i need to call "), so a phrase is found whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from hub.home.normalize import fold
from hub.locales import SUPPORTED_LANGUAGES

# a reading tool's `words` argument: what the question looks for in events or items
WORDS_ARGUMENT = {"type": "array", "maxItems": 8, "items": {"type": "string", "minLength": 1, "maxLength": 40},
                  "description": "only what says one of these words (any form: call, calls, calling)"}
_MIN_CONTENT_LETTERS = 3  # shorter words say nothing an event or an item is found by
_NOT_CONTENT = ("topic.", "time.", "list.", "part.", "word.", "condition.")


@dataclass(frozen=True)
class QuestionWords:
    """One language's words: key → its folded phrases, longest first."""

    language: str
    table: dict[str, tuple[str, ...]]
    written: dict[str, tuple[str, ...]]  # the same phrases as written (names are made of these)

    def said(self, said: str, key: str) -> str | None:
        """The first (longest) phrase of `key` found whole in `said`."""
        return next((p for p in self.table.get(key, ()) if f" {p} " in said), None)

    def says(self, said: str, key: str) -> bool:
        return self.said(said, key) is not None

    def keys_said(self, said: str, prefix: str) -> list[str]:
        """The keys under `prefix` ("part.") with a phrase in `said`, in file order."""
        return [key for key in self.table if key.startswith(prefix) and self.says(said, key)]

    def content(self, said: str, leave_out: tuple[str, ...] = ()) -> list[str]:
        """The words of `said` that name what is looked for ("call" of "who do I need to
        call"): not a topic, time, list, part or question word, nor one of `leave_out`'s."""
        text = said
        phrases = sorted({p for key, found in self.table.items() if key.startswith(_NOT_CONTENT) for p in found}
                         | {fold(p, self.language) for p in leave_out}, key=len, reverse=True)
        for phrase in phrases:
            if phrase:
                text = text.replace(f" {phrase} ", " ")
        return [w for w in dict.fromkeys(text.split()) if len(w) >= _MIN_CONTENT_LETTERS]


@lru_cache(maxsize=None)
def question_words(language: str) -> QuestionWords | None:
    """The language's words, None when it has no such file."""
    resource = resources.files("hub.locales").joinpath("words", "questions", f"{language}.yaml")
    if not resource.is_file():
        return None
    data = yaml.safe_load(resource.read_text(encoding="utf-8")) or {}
    written = {str(key): tuple(w.strip() for w in str(text).split("|") if w.strip()) for key, text in data.items()}
    table = {key: tuple(sorted(dict.fromkeys(fold(w, language) for w in found), key=len, reverse=True))
             for key, found in written.items()}
    return QuestionWords(language, table, written)


def said_form(text: str, language: str) -> str:
    """The text as phrases are found in it (" who do i need to call ")."""
    return f" {fold(text, language)} "


@lru_cache(maxsize=None)
def every_language(key: str, written: bool = False) -> tuple[str, ...]:
    """`key`'s phrases in every language that has them, folded (or as `written`), longest first."""
    found = {p for language in SUPPORTED_LANGUAGES if (words := question_words(language)) is not None
             for p in (words.written if written else words.table).get(key, ())}
    return tuple(sorted(found, key=len, reverse=True))


def same_word(said: str, written: str) -> bool:
    """Whether a word said is a written one in another form: "classes" the "class", "visiting"
    "visits" (4+ letters in common from the start, then 3 or fewer each), or the first part of a
    compound ("abend": "Abendessen", 5+ letters)."""
    if said == written or (len(said) >= 5 and written.startswith(said)):
        return True
    common = 0
    for a, b in zip(said, written):
        if a != b:
            break
        common += 1
    return common >= 4 and len(said) - common <= 3 and len(written) - common <= 3


def mentions(text: str, words: tuple[str, ...]) -> bool:
    """Whether `text` (an event, an item) says one of the question's `words`, in any form."""
    written = fold(text).split()
    return any(same_word(fold(word), w) for word in words for w in written)
