"""Which way a request would turn a device, told from the words of the language's templates.

Home Assistant's sentence templates say each intent for each kind of device: "turn off", "close",
"unlock" are HassTurnOff's words for lights, covers and locks; "ein"/"aus", "ouvre"/"ferme",
"つけて"/"消して" in other languages. A word that one intent's templates say for a domain and its
opposite's never do (for that domain) is that intent's own: a request saying only HassTurnOff's
own words for a lock asks to unlock it, whatever verb it shares with locking ("schließe … auf").
Read once per language from the templates' text (`template_words.said_blocks`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import lru_cache
from importlib import resources

import yaml

from hub.home.normalize import base_language, fold
from hub.home.vocabulary import domain_words
from hub.locales import UNSPACED_LANGUAGES
from hub.understanding.recognition import ACTION_INTENTS, intents_language
from hub.understanding.template_words import said_sentences

# Intents that undo each other: a request saying one's own words never runs the other.
OPPOSITES = {
    "HassTurnOn": "HassTurnOff", "HassTurnOff": "HassTurnOn",
    "HassVacuumStart": "HassVacuumReturnToBase", "HassVacuumReturnToBase": "HassVacuumStart",
    "HassMediaPause": "HassMediaUnpause", "HassMediaUnpause": "HassMediaPause",
    "HassMediaNext": "HassMediaPrevious", "HassMediaPrevious": "HassMediaNext",
}
_ANY = ""  # a block for every domain (no domain among its slots or required context)
# A word is an intent's own for a domain when at least this share of its sentences for that
# domain say it, and its opposite's say it at most a third as often (a rule both use, such as
# "<in>" with its "on", says no word: `said_sentences`).
_OWN_SHARE = 0.1
_OPPOSITE_RATIO = 3
# Languages whose separable verb particle ("an", "aus", "aan", "uit") ends the clause
_PARTICLE_LAST = frozenset({"de", "nl"})
# A kind of device's word that at least this share of an intent's sentences say is its verb
_VERB_SHARE = 0.5
# A word nearly every intent's templates say ("the", "my", "die", "la") says no direction.
_COMMON_SHARE = 0.85

_Shares = dict[tuple[str, str], dict[str, float]]  # (intent, domain) → word → share of its sentences


@lru_cache(maxsize=None)
def _intent_words(code: str) -> _Shares:
    """Each directed intent's words per domain its blocks name (`_ANY` for unnamed), with the
    share of its sentences saying each."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    sentences: Counter[tuple[str, str]] = Counter()
    for intent, block, words in said_sentences(code, OPPOSITES):
        folded = {fold(w, code) for w in words} - {""}
        for domain in _domains(block) or (_ANY,):
            counts[intent, domain].update(folded)
            sentences[intent, domain] += 1
    return {key: {w: n / sentences[key] for w, n in found.items()} for key, found in counts.items()}


def _domains(block: dict[str, object]) -> tuple[str, ...]:
    domains: list[str] = []
    for part in (block.get("slots"), block.get("requires_context")):
        value = part.get("domain") if isinstance(part, dict) else None
        domains += [value] if isinstance(value, str) else [d for d in value or () if isinstance(d, str)]
    return tuple(domains)


@lru_cache(maxsize=None)
def own_words(language: str, intent: str, domain: str) -> dict[str, float]:
    """The words `intent`'s templates say for a `domain` device and its opposite's seldom or
    never do (folded; none where the language has no templates for it), each with the share of
    its sentences that say it."""
    code = intents_language(language)
    if code is None:
        return {}
    table = _intent_words(code)
    # a domain's own templates alone tell "schließe {name} ab" (lock) from "… auf" (unlock),
    # which the templates for any device blur ("mach {name} auf", open): either reading counts
    own = _own(table.get((intent, domain), {}), table.get((OPPOSITES[intent], domain), {}), language)
    common = _common_words(code)  # "the", "die", "auf": a direction only in a domain's own templates
    merged = _own(_merged(table, intent, domain), _merged(table, OPPOSITES[intent], domain), language)
    return {**{w: share for w, share in merged.items() if w not in common}, **own}


def _merged(table: _Shares, intent: str, domain: str) -> dict[str, float]:
    """An intent's word shares for a domain's device: its domain's templates' and any device's."""
    said = dict(table.get((intent, _ANY), {}))
    for word, share in table.get((intent, domain), {}).items():
        said[word] = max(share, said.get(word, 0.0))
    return said


def _own(mine: dict[str, float], theirs: dict[str, float], language: str) -> dict[str, float]:
    """The words of `mine` that `theirs` seldom or never say, and that say a direction."""
    # a kind of device says no direction ("the kitchen light off"), unless it is the verb of
    # most of the intent's sentences too, and the opposite's never say it ("lock", "unlock")
    kinds = {w for w in domain_words(language) if mine.get(w, 0.0) < _VERB_SHARE or theirs.get(w, 0.0) > 0}
    return {w: share for w, share in mine.items() if share >= _OWN_SHARE
            and theirs.get(w, 0.0) * _OPPOSITE_RATIO <= share and w not in kinds}


@lru_cache(maxsize=None)
def _common_words(code: str) -> frozenset[str]:
    """The words nearly every handled intent's templates say (`_COMMON_SHARE`)."""
    said: dict[str, set[str]] = defaultdict(set)
    for intent, _, words in said_sentences(code):
        for word in words:
            said[fold(word, code)].add(intent)
    intents = len(set().union(*said.values())) if said else 0
    return frozenset(w for w, by in said.items() if len(by) >= _COMMON_SHARE * intents)


def said_intents(text: str, language: str, domain: str) -> frozenset[str]:
    """The directed intents whose own words (`own_words`) `text` says for a `domain` device.
    Where a separable verb's particle ends the sentence (German, Dutch: "schalte die Lampe an
    der Tür aus", "doe de lamp bij de deur uit"), of two opposites both said the later one's.

    Matching the templates themselves with any name (hassil's wildcards) was tried first and
    measured worse on Home Assistant's test sentences: a wildcard name swallows the words that
    say the direction ("tanca {name}" took "tanca amb clau …", lock with a key, for closing)."""
    language = base_language(language)
    folded = fold(text, language)
    tokens = folded.split()
    unspaced = language in UNSPACED_LANGUAGES
    last: dict[str, int] = {}  # intent → where its last own word is said
    for intent in OPPOSITES:
        for word in own_words(language, intent, domain):
            at = folded.rfind(word) if unspaced else max((n for n, t in enumerate(tokens) if t == word), default=-1)
            if at >= 0:
                last[intent] = max(at, last.get(intent, -1))
    end = len(tokens) - 1
    if language in _PARTICLE_LAST and end in last.values():  # the particle ends the sentence
        return frozenset(i for i, at in last.items() if at > last.get(OPPOSITES[i], -1))
    return frozenset(last)


def says_all(text: str, language: str) -> bool:
    """Whether `text` asks for all of something ("all the doors", "beide Lampen", "toutes")."""
    language = base_language(language)
    folded = fold(text, language)
    padded = folded if language in UNSPACED_LANGUAGES else f" {folded} "
    return any((word if language in UNSPACED_LANGUAGES else f" {word} ") in padded for word in _all_words(language))


@lru_cache(maxsize=None)
def _all_words(language: str) -> frozenset[str]:
    table = yaml.safe_load(resources.files("hub.locales").joinpath("all_words.yaml").read_text(encoding="utf-8"))
    return frozenset(fold(w, language) for lang in {language, "en"} for w in str(table.get(lang, "")).split("|"))


@lru_cache(maxsize=None)
def known_words(language: str) -> frozenset[str]:
    """The folded words the language's command templates say around their slots and lists (for
    telling a request's words that name something from the ones that say what to do)."""
    code = intents_language(language)
    if code is None:
        return frozenset()
    said = (words for intent, _, words in said_sentences(code, lists=False) if intent in ACTION_INTENTS)
    return frozenset(fold(w, language) for w in frozenset().union(*said)) - {""}


class ActionWords:
    """The agent's `ActionReading`, from the templates of the hub's languages."""

    def said_intents(self, text: str, language: str, domain: str) -> frozenset[str]:
        return said_intents(text, language, domain)

    def says_all(self, text: str, language: str) -> bool:
        return says_all(text, language)

    def known_words(self, language: str) -> frozenset[str]:
        return known_words(language)
