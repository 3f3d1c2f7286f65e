"""The words of device names across languages: "Ceiling Lights" is the "Deckenlampe" too.

Rooms and kinds of device have their words in `hub/locales/words/<language>.yaml`; the other
words names are made of (ceiling, desk, mirror, coffee machine, door …) have theirs in
`hub/locales/words/names/<language>.yaml`, one `name.<concept>` key each, English defining the
concepts; beside them the filler words around names ("both") and the words for "then". No library translates words, so this is a table: a name that says a concept in any
language is also found by that concept's words in the language of the request.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from importlib import resources

import yaml

from hub.home.normalize import fold
from hub.locales import SUPPORTED_LANGUAGES


def extra_words(language: str, key: str) -> tuple[str, ...]:
    """The language's `word.filler` (beside `../<language>.yaml`'s: "both", Czech "u") or
    `word.then` ("then", "dann": where a sentence of several commands may be split) or
    `word.music` ("the music": what plays)."""
    return _concepts(language).get(key, ())


@lru_cache(maxsize=None)
def _concepts(language: str) -> dict[str, tuple[str, ...]]:
    """One language's name words: concept → its words and short phrases ({} if none)."""
    resource = resources.files("hub.locales").joinpath("words", "names", f"{language}.yaml")
    if not resource.is_file():
        return {}
    data = yaml.safe_load(resource.read_text(encoding="utf-8")) or {}
    return {key: tuple(w.strip() for w in str(text).split("|") if w.strip()) for key, text in data.items()}


_MIN_FOREIGN = 6  # letters of a phrase that says its concept in a name in any language ("Box Fan" is no speaker)


@lru_cache(maxsize=1)
def _phrases() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """First folded word → (the folded phrase's words, its concept), for English's phrases and
    the other languages' longer ones."""
    found: dict[str, list[tuple[tuple[str, ...], str]]] = defaultdict(list)
    for language in SUPPORTED_LANGUAGES:
        for concept, phrases in _concepts(language).items():
            for phrase in phrases if concept.startswith("name.") else ():
                words = tuple(fold(phrase).split())
                if language != "en" and len("".join(words)) < _MIN_FOREIGN:
                    continue
                if words and (words, concept) not in found[words[0]]:
                    found[words[0]].append((words, concept))
    return found


@lru_cache(maxsize=16384)
def whole_name_translations(name: str, language: str) -> tuple[str, ...]:
    """A folded name that is one concept as a whole ("tv", "coffee machine"), said in `language`
    or English ("fernseher", "kaffeemaschine"; "cafetera", "maquina de cafe"): more names of it."""
    words = tuple(name.split())
    concepts = {concept for found, concept in _phrases().get(words[0], ()) if found == words} if words else set()
    found = {fold(phrase, language) for lang in (language, "en") for concept in sorted(concepts)
             for phrase in _concepts(lang).get(concept, ())}
    return tuple(sorted(found - {name}))


@lru_cache(maxsize=16384)
def name_translations(name: str, language: str) -> tuple[str, ...]:
    """The folded words, in `language` and English, of the concepts a folded name says
    ("ceiling lights", "de" → "decke", "decken", …); () when it says none."""
    said = name.split()
    concepts = {concept for start, word in enumerate(said) for words, concept in _phrases().get(word, ())
                if tuple(said[start:start + len(words)]) == words}
    found = {w for lang in (language, "en") for concept in sorted(concepts)
             for phrase in _concepts(lang).get(concept, ()) for w in fold(phrase, language).split()}
    return tuple(sorted(found - set(said)))


@lru_cache(maxsize=64)
def compound_pieces(language: str) -> frozenset[str]:
    """The folded pieces of the language's hyphenated name words ("alto", "falante" of
    "alto-falante"): a piece is no word of a name by itself, so no other word is read as a form
    of it ("alta" is no speaker)."""
    return frozenset(w for lang in (language, "en") for key, phrases in _concepts(lang).items()
                     if key.startswith("name.") for phrase in phrases if "-" in phrase
                     for w in fold(phrase, language).split())

