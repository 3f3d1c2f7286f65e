"""The index `EntityResolver` looks things up in, and the reading of an utterance against it.

The index holds the folded names, aliases, areas and name words of one store version in one
language; reading folded words finds the whole names, areas, kinds of device and name words
they say.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import islice, product
from typing import Iterable

from hub.home.entities import EntityStore, Floor
from hub.home.name_words import compound_pieces, name_translations, whole_name_translations
from hub.home.normalize import fold
from hub.home.spoken_names import name_keys
from hub.home.vocabulary import area_translations, domain_words, stop_words
from hub.home.word_forms import COMPOUNDING, WordForms

MIN_PARTIAL_WORD = 3  # shorter words ("tv" aside, which is a domain word) are too ambiguous
_MAX_SPELLINGS = 16  # inflected spellings of one run of words tried as a whole name
_MAX_SENSES = 20000  # said words whose sense an index keeps (then it starts again)


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
    floors: dict[str, str] = field(default_factory=dict)  # folded floor name, alias or translation → floor
    floor_areas: dict[str, frozenset[str]] = field(default_factory=dict)  # floor → its areas
    max_floor_words: int = 1
    by_area: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_domain: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    all_ids: list[str] = field(default_factory=list)
    forms: WordForms = field(default_factory=lambda: WordForms((), "en"))
    senses: dict[str, "Sense"] = field(default_factory=dict)  # folded said word → what it says


@dataclass(frozen=True)
class Sense:
    """What one said word points at: entities by their names' words (with the words' weight),
    areas and kinds of device — as written, inflected or as the parts of a compound."""

    ids: frozenset[str] = frozenset()
    weight: float = 0.0
    areas: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()
    says_more: bool = False  # a compound naming what no entity of its kind is ("Garagenheizung", "Stehlampe")


@dataclass
class Reading:
    """What an utterance mentions: names (entity id → matched words), areas and domains."""

    full_names: dict[str, int] = field(default_factory=dict)
    partial_names: dict[str, float] = field(default_factory=dict)
    areas: set[str] = field(default_factory=set)
    domains: set[str] = field(default_factory=set)
    floor_areas: set[str] = field(default_factory=set)  # the areas of the floors said ("upstairs")

    @property
    def places(self) -> set[str]:
        """The areas said, on the floor said when both are (else either's)."""
        if self.areas and self.floor_areas:
            return self.areas & self.floor_areas
        return self.areas or self.floor_areas


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


def build_index(store: EntityStore, language: str, areas: dict[str, tuple[str, ...]],
                floors: dict[str, Floor] | None = None) -> NameIndex:
    """The index of the store's entities in a language; `areas`: every area with its names in
    it, `floors` every floor with its names in it and its areas."""
    index = NameIndex(version=store.version)
    stops = stop_words(language)
    entities = store.all()
    own_words: set[str] = set()  # the words of the names as written
    for entity in entities:
        index.all_ids.append(entity.entity_id)
        index.by_domain[entity.domain].append(entity.entity_id)
        if entity.area:
            index.by_area[entity.area].append(entity.entity_id)
            index.areas.setdefault(fold(entity.area, language), entity.area)
        keys = name_keys((entity.name, *entity.aliases), language)
        # "TV" is the "Fernseher" too, "Coffee Machine" the "máquina de café": whole names, said
        # in the request's language
        for key in [*keys, *(other for key in keys for other in whole_name_translations(key, language))]:
            if entity.entity_id not in index.names[key]:
                index.names[key].append(entity.entity_id)
            index.max_name_words = max(index.max_name_words, len(key.split()))
            for word in key.split():
                if word not in stops and len(word) >= MIN_PARTIAL_WORD:
                    own_words.add(word)
                    index.name_words[word].add(entity.entity_id)
                    # "Office Lamp" is the "lampe du bureau" too: a room word in any language
                    for other in area_translations((word,), language):
                        index.name_words[fold(other, language)].add(entity.entity_id)
            # "Ceiling Lights" is the "Deckenlampe" too: a name's words in the request's language
            for other in name_translations(key, language):
                if other not in stops and len(other) >= MIN_PARTIAL_WORD:
                    index.name_words[other].add(entity.entity_id)
    for area, aliases in areas.items():
        for name in (area, *aliases):
            key = fold(name, language)
            if key:
                index.areas.setdefault(key, area)
    index.max_area_words = max((len(k.split()) for k in index.areas), default=1)
    for floor, found in (floors or {}).items():
        index.floor_areas[floor] = frozenset(found.areas)
        for name in (floor, *found.aliases):
            key = fold(name, language)
            if key and key not in index.areas:
                index.floors.setdefault(key, floor)
    index.max_floor_words = max((len(k.split()) for k in index.floors), default=1)
    total = max(len(entities), 1)
    index.word_weight = {
        word: math.log(1 + total / len(ids)) for word, ids in index.name_words.items()
    }
    # a piece of a translation's compound ("alto" of "alto-falante") is matched as written only
    pieces = compound_pieces(language) - own_words
    index.forms = WordForms((*(w for w in index.name_words if w not in pieces), *index.areas,
                             *domain_words(language)), language)
    return index


def ids_with_word(word: str, index: NameIndex) -> tuple[float, set[str]]:
    """Entities with `word` in a name (as written, inflected or compounded), and its weight."""
    found = sense(word, index)
    return found.weight, set(found.ids)


def sense(word: str, index: NameIndex) -> Sense:
    """What a folded said word points at (`Sense`), cached in the index."""
    found = index.senses.get(word)
    if found is None:
        found = _whole(word, index)
        if not (found.ids or found.areas or found.domains):
            found = _compound(word, index)
        if not (found.ids or found.areas or found.domains or found.says_more) \
                and word not in stop_words(index.forms.language):
            found = _near(word, index)
        if len(index.senses) >= _MAX_SENSES:
            index.senses.clear()
        index.senses[word] = found
    return found


def _near(word: str, index: NameIndex) -> Sense:
    """A misheard word's sense: every known word it is near ("ligth": light), so that two near
    fits are two candidates to ask about, never one picked."""
    near = index.forms.near(word)
    named = [w for w in near if w in index.name_words]
    return Sense(frozenset(i for w in named for i in index.name_words[w]),
                 min((index.word_weight[w] for w in named), default=0.0), *_kinds(near, index))


def _whole(word: str, index: NameIndex) -> Sense:
    """The sense of a word as written (or its crude singular), else of the known words it is an
    inflected form of. A kind of device ("Lampe") is a name's word only as written ("Fernseher"
    of a TV), not by its likeness to one ("Desk Lamp")."""
    kind = word in domain_words(index.forms.language)
    for variant in (word,) if kind else _word_variants(word):
        if variant in index.name_words:
            return Sense(frozenset(index.name_words[variant]), index.word_weight[variant],
                         *_kinds((word, variant), index))
    forms = index.forms.forms_of(word) - {word}
    named = [] if kind else [w for w in forms if w in index.name_words]
    ids = frozenset(i for w in named for i in index.name_words[w])
    weight = max((index.word_weight[w] for w in named), default=0.0)
    return Sense(ids, weight, *_kinds((word, *forms), index))


def _kinds(words: Iterable[str], index: NameIndex) -> tuple[frozenset[str], frozenset[str]]:
    """The areas and kinds of device that single words name."""
    known_domains = domain_words(index.forms.language)
    areas = frozenset(index.areas[w] for w in words if w in index.areas)
    domains = frozenset(known_domains[w] for w in words if w in known_domains)
    return areas, domains


def _compound(word: str, index: NameIndex) -> Sense:
    """A compound's sense: the entities every name part names ("decke" of "Deckenlampe"), of the
    kind it says; a part that is also a room only narrows when that leaves some, as its rooms do."""
    parts = [_whole(part, index) for part in index.forms.parts(word)]
    if not parts:  # "Stehlampe": a lamp, and a word more that names none of the home's
        kind = _kind_at_end(word, index.forms.language)
        return Sense(domains=kind, says_more=bool(kind))
    ids: frozenset[str] | None = None
    for part in parts:
        if not part.ids:
            continue
        narrowed = part.ids if ids is None else ids & part.ids
        if narrowed or not (part.areas or part.domains):
            ids = narrowed
    areas = frozenset(a for p in parts for a in p.areas)
    domains = frozenset(d for p in parts for d in p.domains)
    found = ids or frozenset()
    if domains:  # "Garagenheizung" is no "Garage Door": a kind said is the kind meant
        found &= members(domains, index.by_domain)
    says_more = bool(ids) and not found
    found = (found & members(areas, index.by_area)) or found
    return Sense(found, sum(p.weight for p in parts if p.ids), areas, domains, says_more)


_MIN_HEAD = 3  # letters before a kind's word that make a compound of it ("Steh|lampe")


def _kind_at_end(word: str, language: str) -> frozenset[str]:
    """The kind of device a compound of no known words ends with ("Stehlampe" is a lamp, a
    light): the longest kind word it ends with, in a language that joins words."""
    if language not in COMPOUNDING:
        return frozenset()
    ends = [(kind, domain) for kind, domain in domain_words(language).items()
            if len(kind) >= 4 and word.endswith(kind) and len(word) - len(kind) >= _MIN_HEAD]
    return frozenset({max(ends, key=lambda end: len(end[0]))[1]}) if ends else frozenset()


def whole_name(words: list[str], index: NameIndex) -> list[str]:
    """The entities whose whole name or alias the folded words say, as written or with inflected
    words in a known form ("televizi" → "televize", "lampe sufitowa" → "lampa sufitowa")."""
    ids = index.names.get(" ".join(words))
    if ids or not words:
        return ids or []
    forms = [sorted(index.forms.forms_of(w) | {w}) for w in words]
    found: dict[str, None] = {}  # every spelling's: "sophio" may be "Sophia" or "Sophie" — ask
    for spelling in islice(product(*forms), _MAX_SPELLINGS):
        found.update(dict.fromkeys(index.names.get(" ".join(spelling), ())))
    return list(found)


def read_words(said: list[str], index: NameIndex, language: str) -> Reading:
    """Find whole names, areas, kinds of device and name words in folded words."""
    reading = Reading()
    known_domains = domain_words(language)
    stops = stop_words(language)
    in_area_phrase: set[int] = set()  # positions an area name explains
    for start in range(len(said)):
        for length in range(min(index.max_name_words, len(said) - start), 0, -1):
            ids = whole_name(said[start:start + length], index)
            if ids:
                for entity_id in ids:
                    reading.full_names[entity_id] = max(reading.full_names.get(entity_id, 0), length)
                break
        for length in range(min(index.max_area_words, len(said) - start) * (start not in in_area_phrase), 0, -1):
            # not within a longer area's name already read ("yard" of "front yard")
            area = index.areas.get(" ".join(said[start:start + length]))
            if area is not None:
                reading.areas.add(area)
                in_area_phrase.update(range(start, start + length))
                break
        for length in range(min(index.max_floor_words, len(said) - start) * (start not in in_area_phrase), 0, -1):
            floor = index.floors.get(" ".join(said[start:start + length]))
            if floor is not None:  # "upstairs", "im Erdgeschoss"
                reading.floor_areas |= index.floor_areas[floor]
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
        found = sense(word, index)
        reading.areas |= found.areas
        reading.domains |= found.domains
        for entity_id in found.ids - reading.full_names.keys():
            reading.partial_names[entity_id] = reading.partial_names.get(entity_id, 0.0) + found.weight
    return reading


def place_words(index: NameIndex) -> set[str]:
    """The words of the areas' and floors' names and aliases."""
    return {w for key in (*index.areas, *index.floors) for w in key.split()}


def content_words(said: list[str], index: NameIndex, language: str,
                  drop_places: bool = False) -> list[str]:
    """Words that are neither filler nor a kind of device (nor, optionally, a place), however
    inflected; a compound with a name's word in it is content ("Deckenlampe")."""
    stops = stop_words(language)
    known_domains = domain_words(language)
    area_words = place_words(index) if drop_places else set()
    content = []
    pairs = {n for n in range(len(said) - 1) if f"{said[n]} {said[n + 1]}" in known_domains}
    in_kind = pairs | {n + 1 for n in pairs}  # "robot mower", "heat pump": one kind in two words
    for position, word in enumerate(said):
        if word in stops or word in known_domains or word in area_words or position in in_kind:
            continue
        found = sense(word, index) if len(word) >= MIN_PARTIAL_WORD else Sense()
        if not found.ids and not found.says_more and (found.domains or (drop_places and found.areas)):
            continue  # "lampę", "Küchenlicht": a kind (in a place), inflected or compounded
        content.append(word)
    return content


def named_among(said: list[str], pool: set[str], index: NameIndex, language: str) -> set[str]:
    """Those of `pool` whose whole name the folded words say among words that name nothing else
    ("donc la hallway light", "the hallway light then": Hallway Light, not every light in the
    Hallway), as HA's `async_match_targets` takes a name before an area and a kind: the longest
    name said, when a kind or place said besides is its own."""
    for length in range(min(index.max_name_words, len(said)), 0, -1):
        for start in range(len(said) - length + 1):
            ids = pool.intersection(whole_name(said[start:start + length], index))
            rest = said[:start] + said[start + length:]
            if not ids or any(sense(w, index).ids for w in content_words(rest, index, language, drop_places=True)):
                continue
            around = read_words(rest, index, language)
            if around.domains:
                ids &= members(around.domains, index.by_domain)
            if around.places:
                ids &= members(around.places, index.by_area)
            if ids:
                return ids
    return set()
