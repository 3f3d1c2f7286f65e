"""Per-language words: which point at a kind of device or a kind of room, which never do.

Kept deliberately short: they narrow the entities an utterance may be about, they do not
understand it. Words are written naturally and folded (see `normalize.fold`) when loaded.
Device and room words live as data beside the phrases (`hub/locales/words/<language>.yaml`);
the room words let a home named in one language be addressed in another.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Iterable

import yaml

from hub.home.name_words import extra_words
from hub.home.normalize import fold
from hub.locales import SUPPORTED_LANGUAGES, UNSPACED_LANGUAGES

_NOT_LANGUAGE_MARKS = ("word.filler", "word.courtesy")  # words shared by close languages (or many)


@lru_cache(maxsize=None)
def _words(language: str) -> dict[str, tuple[str, ...]]:
    """One language's `hub/locales/words/<language>.yaml`: key → its words ({} if none)."""
    resource = resources.files("hub.locales").joinpath("words", f"{language}.yaml")
    if not resource.is_file():
        return {}
    data = yaml.safe_load(resource.read_text(encoding="utf-8")) or {}
    return {key: tuple(w.strip() for w in str(text).split("|") if w.strip()) for key, text in data.items()}


def all_words(language: str) -> tuple[str, ...]:
    """Every device, room and other word of the language's word file, its filler words aside
    (shared by close languages — Danish and Bokmål — they blur identification)."""
    return tuple(word for key, words in _words(language).items() if key not in _NOT_LANGUAGE_MARKS for word in words)


@lru_cache(maxsize=64)
def domain_words(language: str) -> dict[str, str]:
    """Folded word or two-word phrase → domain, for `language` plus English.

    English words are always included: device words like "TV" or "spot" are often borrowed.
    English "switch" is left out on purpose: "switch off the lamp" is a verb.
    """
    table: dict[str, str] = {}
    for lang in ("en", language):
        for key, words in _words(lang).items():
            if key.startswith("device."):
                for word in words:
                    table.setdefault(fold(word, language), key.removeprefix("device."))
    return table


@lru_cache(maxsize=1)
def generic_device_words() -> frozenset[str]:
    """Folded words for "device" in every language ("Gerät", "appareil"): a name may end with one
    that people leave out when they say it."""
    return frozenset(fold(w) for lang in SUPPORTED_LANGUAGES for w in _words(lang).get("word.device", ()))


@lru_cache(maxsize=2)
def _place_concepts(prefix: str) -> dict[str, frozenset[str]]:
    """Folded room (`area.`) or floor (`floor.`) word in any language → the keys it names."""
    found: dict[str, set[str]] = {}
    for language in SUPPORTED_LANGUAGES:
        for key, words in _words(language).items():
            if key.startswith(prefix):
                for word in words:
                    found.setdefault(fold(word), set()).add(key)
    return {word: frozenset(keys) for word, keys in found.items()}


def _place_translations(prefix: str, names: tuple[str, ...], language: str) -> tuple[str, ...]:
    keys = {key for name in names for key in _place_concepts(prefix).get(fold(name), ())}
    known = {fold(n) for n in names}
    words = {w for lang in (language, "en") for key in keys for w in _words(lang).get(key, ())}
    return tuple(sorted(w for w in words if fold(w) not in known))


@lru_cache(maxsize=4096)
def area_translations(names: tuple[str, ...], language: str) -> tuple[str, ...]:
    """An area's name in `language` and English when its name or an alias is a common room in
    any language ("Kitchen" → "Küche" for German, "Küche" → "kitchen"); () for one that is not
    ("Ana's den")."""
    return _place_translations("area.", names, language)


@lru_cache(maxsize=1024)
def floor_translations(names: tuple[str, ...], language: str) -> tuple[str, ...]:
    """A floor's names in `language` and English when its name or an alias says a common floor
    in any language ("upstairs" → "oben", "à l'étage"; "Ground Floor" → "Erdgeschoss")."""
    return _place_translations("floor.", names, language)


@lru_cache(maxsize=64)
def has_stop_words(language: str) -> bool:
    """Whether filler words split the language's text into the runs that name devices: it has
    its own filler table (`word.filler`) and writes spaces between words (not Chinese, Japanese,
    Thai or Korean, whose particles attach to words)."""
    return bool(_words(language).get("word.filler")) and language not in UNSPACED_LANGUAGES


@lru_cache(maxsize=64)
def stop_words(language: str) -> frozenset[str]:
    """Words that never point at an entity by themselves (`word.filler`): articles, prepositions,
    pronouns, polite words and the verbs for on/off/open/close/set; English's count in every
    language (borrowed "the", "on"). Used to keep partial name matching honest."""
    words = {*_words(language).get("word.filler", ()), *_words("en").get("word.filler", ()),
             *extra_words(language, "word.filler"), *extra_words("en", "word.filler")}
    return frozenset(fold(word, language) for word in words)



@lru_cache(maxsize=64)
def courtesy_words(language: str) -> tuple[str, ...]:
    """Folded words and phrases said around a command that name nothing ("now", "please"),
    the language's and English's, longest first (`word.courtesy`)."""
    words = {fold(word, language) for lang in dict.fromkeys((language, "en")) for word in _words(lang).get("word.courtesy", ())}
    return tuple(sorted(words, key=len, reverse=True))


_STEM = 4  # letters of a device or room word an inflected or compound form must keep


@lru_cache(maxsize=64)
def _home_words(language: str) -> frozenset[str]:
    """Folded device and room words of `language` and English."""
    return frozenset(fold(word, language) for lang in ("en", language) for key, words in _words(lang).items()
                     if key.startswith(("device.", "area.")) for word in words)


def speaks_of_home(text: str, language: str) -> bool:
    """Whether `text` names a kind of device or of room in `language` or English, inflected
    ("lampę", "odkurzacza") or as the end of a compound ("Deckenlampe") too."""
    folded = fold(text, language)
    known = _home_words(language)
    if language in UNSPACED_LANGUAGES:
        return any(word in folded for word in known)
    padded = f" {folded} "
    tokens = folded.split()
    for word in known:
        if " " in word or len(word) < _STEM:
            if f" {word} " in padded:
                return True
            continue
        stem = word[:max(_STEM, len(word) - 2)]
        if any(token.startswith(stem) or token.endswith(word) for token in tokens):
            return True
    return False


@lru_cache(maxsize=64)
def _own_home_words(language: str) -> frozenset[str]:
    """Folded device and room words of `language` alone, of `_STEM` letters or more."""
    return frozenset(w for key, words in _words(language).items() if key.startswith(("device.", "area."))
                     for w in (fold(word, language) for word in words) if len(w) >= _STEM)


def languages_of_names(names: Iterable[str], known: str) -> list[str]:
    """The languages besides `known` whose device or room words the home's names use ("Küche",
    "Stehlampe": German), those with the most such words first: the languages its people likely
    speak. Words `known` has too count for it."""
    said = {word for name in names for word in fold(name).split() if len(word) >= _STEM}
    said -= _own_home_words(known)
    counts = {language: len(said & _own_home_words(language)) for language in SUPPORTED_LANGUAGES
              if language != known}
    return sorted((language for language, count in counts.items() if count), key=lambda lang: -counts[lang])


@lru_cache(maxsize=64)
def _music_words(language: str) -> frozenset[str]:
    return frozenset(fold(w, language) for lang in ("en", language) for w in extra_words(lang, "word.music"))


def says_music(text: str, language: str) -> bool:
    """Whether `text` says "the music" (`word.music`: what plays, not a player's name)."""
    return not _music_words(language).isdisjoint(fold(text, language).split())
