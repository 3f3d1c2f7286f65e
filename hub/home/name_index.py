"""The index `EntityResolver` looks things up in, and the reading of an utterance against it.

The index holds the folded names, aliases, areas and name words of one store version in one
language; reading folded words finds the whole names, areas, kinds of device and name words
they say.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from hub.home.entities import EntityStore
from hub.home.normalize import fold
from hub.home.spoken_names import name_keys
from hub.home.vocabulary import area_translations, domain_words, stop_words

MIN_PARTIAL_WORD = 3  # shorter words ("tv" aside, which is a domain word) are too ambiguous


@dataclass
class NameIndex:
    """Everything `EntityResolver` looks up, for one store version and one language."""

    version: int
    names: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    max_name_words: int = 1
    name_words: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    word_weight: dict[str, float] = field(default_factory=dict)
    areas: dict[str, str] = field(default_factory=dict)  # folded area name or alias → area
    max_area_words: int = 1
    by_area: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_domain: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    all_ids: list[str] = field(default_factory=list)


@dataclass
class Reading:
    """What an utterance mentions: names (entity id → matched words), areas and domains."""

    full_names: dict[str, int] = field(default_factory=dict)
    partial_names: dict[str, float] = field(default_factory=dict)
    areas: set[str] = field(default_factory=set)
    domains: set[str] = field(default_factory=set)


def members(keys: Iterable[str], groups: dict[str, list[str]]) -> set[str]:
    """The ids grouped under any of `keys` (the entities of these areas, or of these domains)."""
    return {member for key in keys for member in groups.get(key, ())}


def _word_variants(word: str) -> tuple[str, ...]:
    """The word and crude singulars ("lamps" → "lamp", "Lampen" → "lampe"/"lamp")."""
    variants = [word]
    if len(word) > 4:
        if word.endswith(("s", "n", "e")):
            variants.append(word[:-1])
        if word.endswith(("es", "en")):
            variants.append(word[:-2])
    return tuple(variants)


def build_index(store: EntityStore, language: str, areas: dict[str, tuple[str, ...]]) -> NameIndex:
    """The index of the store's entities in a language; `areas`: every area with its names in it."""
    index = NameIndex(version=store.version)
    stops = stop_words(language)
    entities = store.all()
    for entity in entities:
        index.all_ids.append(entity.entity_id)
        index.by_domain[entity.domain].append(entity.entity_id)
        if entity.area:
            index.by_area[entity.area].append(entity.entity_id)
            index.areas.setdefault(fold(entity.area, language), entity.area)
        for key in name_keys((entity.name, *entity.aliases), language):
            if entity.entity_id not in index.names[key]:
                index.names[key].append(entity.entity_id)
            index.max_name_words = max(index.max_name_words, len(key.split()))
            for word in key.split():
                if word not in stops and len(word) >= MIN_PARTIAL_WORD:
                    index.name_words[word].add(entity.entity_id)
                    # "Office Lamp" is the "lampe du bureau" too: a room word in any language
                    for other in area_translations((word,), language):
                        index.name_words[fold(other, language)].add(entity.entity_id)
    for area, aliases in areas.items():
        for name in (area, *aliases):
            key = fold(name, language)
            if key:
                index.areas.setdefault(key, area)
    index.max_area_words = max((len(k.split()) for k in index.areas), default=1)
    total = max(len(entities), 1)
    index.word_weight = {
        word: math.log(1 + total / len(ids)) for word, ids in index.name_words.items()
    }
    return index


def ids_with_word(word: str, index: NameIndex) -> tuple[float, set[str]]:
    """Entities with `word` (or its crude singular) in a name, and that word's weight."""
    for variant in _word_variants(word):
        if variant in index.name_words:
            return index.word_weight[variant], index.name_words[variant]
    return 0.0, set()


def read_words(said: list[str], index: NameIndex, language: str) -> Reading:
    """Find whole names, areas, kinds of device and name words in folded words."""
    reading = Reading()
    known_domains = domain_words(language)
    stops = stop_words(language)
    in_area_phrase: set[int] = set()  # positions an area name explains
    for start in range(len(said)):
        for length in range(min(index.max_name_words, len(said) - start), 0, -1):
            ids = index.names.get(" ".join(said[start:start + length]))
            if ids:
                for entity_id in ids:
                    reading.full_names[entity_id] = max(reading.full_names.get(entity_id, 0), length)
                break
        for length in range(min(index.max_area_words, len(said) - start), 0, -1):
            area = index.areas.get(" ".join(said[start:start + length]))
            if area is not None:
                reading.areas.add(area)
                in_area_phrase.update(range(start, start + length))
                break
        for length in (2, 1):
            domain = known_domains.get(" ".join(said[start:start + length]))
            if domain is not None:
                reading.domains.add(domain)
                break
    for position, word in enumerate(said):
        if position in in_area_phrase or word in stops or word in known_domains \
                or len(word) < MIN_PARTIAL_WORD:
            continue
        weight, with_word = ids_with_word(word, index)
        if not with_word:
            read_compound(word, index, known_domains, reading)
        for entity_id in with_word - reading.full_names.keys():
            reading.partial_names[entity_id] = reading.partial_names.get(entity_id, 0.0) + weight
    return reading


def read_compound(word: str, index: NameIndex, known_domains: dict[str, str],
                  reading: Reading) -> None:
    """German/Dutch compounds: "küchenlicht" → area Küche + light, "wohnzimmerlampe"."""
    for area_key, area in index.areas.items():
        # "kuche" → "kuchen…": allow a changed last letter (Fugen-n, -e dropped)
        if " " not in area_key and len(area_key) >= 4 and len(word) > len(area_key) \
                and word.startswith(area_key[:-1]):
            reading.areas.add(area)
    for domain_word, domain in known_domains.items():
        if " " not in domain_word and len(domain_word) >= 4 and len(word) > len(domain_word) \
                and word.endswith(domain_word):
            reading.domains.add(domain)


def content_words(said: list[str], index: NameIndex, language: str,
                  drop_places: bool = False) -> list[str]:
    """Words that are neither filler nor a kind of device (nor, optionally, a place)."""
    stops = stop_words(language)
    known_domains = domain_words(language)
    kept = [w for w in said if w not in stops and w not in known_domains]
    if not drop_places:
        return kept
    area_words = {w for key in index.areas for w in key.split()}
    compound = Reading()
    content = []
    for word in kept:
        if word in area_words:
            continue
        read_compound(word, index, known_domains, compound)
        if not (compound.areas or compound.domains):
            content.append(word)
        compound = Reading()
    return content
