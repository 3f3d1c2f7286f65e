"""Which entities a name, an area, a kind of device or a whole utterance is about.

An index of folded names, aliases, areas and name words (`name_index`) is built once per store
version and language; every request is then a handful of dictionary look-ups, however large the
home.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from hub.home.entities import Entity, EntityStore, Floor
from hub.home.normalize import base_language, fold
from hub.home.name_index import (
    NameIndex, Reading, build_index, content_words, ids_with_word, members, named_among, place_words, read_words,
    sense, whole_name,
)
from hub.home.vocabulary import area_translations, domain_words, floor_translations, has_stop_words, stop_words

# Ranking tiers of `candidates`, best first.
_TIER_NAME, _TIER_PARTIAL, _TIER_AREA_DOMAIN, _TIER_AREA, _TIER_DOMAIN = range(5)
_TIER_NAMES = ("name", "partial", "area_domain", "area", "domain")


@dataclass(frozen=True)
class Match:
    """What an utterance may be about: `candidates` (most likely first), `best` (their top tier)
    and whether the utterance is only about entities named outright (a whole name or alias
    said, and no other area or kind of device)."""

    candidates: list[Entity]
    best: list[Entity]
    named: bool
    tier: str = ""  # how `best` was found: name | partial | area_domain | area | domain
    place_said: bool = False  # the utterance says an area or a floor


@dataclass(frozen=True)
class Fit:
    """Which entities a command may act on without swapping one device for another.

    `entities`: the good fits (one: that one; several: ask which one). None fit well: `missing`
    holds the words, as said, that name no device of the home ("front door" when only a garage
    door shares a word); both empty: the command names no device at all.
    """

    entities: list[Entity]
    missing: str = ""
    ambiguous: bool = False  # several devices fit the name said: ask which one


class EntityResolver:
    def __init__(self, store: EntityStore) -> None:
        self._store = store
        self._indexes: dict[str, NameIndex] = {}

    # --- public API ------------------------------------------------------------------------

    def resolve(self, name: str | None = None, area: str | None = None, domain: str | None = None,
                language: str = "en", *, partial: bool = True) -> list[Entity]:
        """All entities matching every given constraint; exact name matches before partial ones.

        `name` is a friendly name, an alias or an entity id; `area` an area name or alias;
        `domain` an HA domain ("light") or a word for one ("lamps", "Licht"). A name that is
        no entity's name but says a kind of device ("kitchen lights", "Wohnzimmerlampe") means
        those devices (in that area). More than one result: the caller should ask back, unless
        it meant a group. `partial=False` accepts whole names and aliases only.
        """
        language = base_language(language)
        index = self._index(language)
        pool = set(index.all_ids)
        if domain:
            domains = self._domains_for(domain, index, language)
            if not domains:
                return []
            pool = members(domains, index.by_domain)
        if area:
            areas = self._areas_for(area, index, language)
            if not areas:
                return []
            pool &= members(areas, index.by_area)
        if not name:
            return self._entities(pool) if (area or domain) else []
        if name in self._store:  # an entity id
            return self._entities({name} & pool)
        if not partial:
            return self._entities(pool.intersection(index.names.get(fold(name, language), ())))
        return self._entities(self._match_name(name, pool, index, language))

    def named_among(self, text: str, among: list[Entity], language: str = "en") -> list[Entity]:
        """Those of `among` whose whole name `text` says amid words naming nothing (`named_among`)."""
        code = base_language(language)
        ids = named_among(fold(text, code).split(), {e.entity_id for e in among}, self._index(code), code)
        return [e for e in among if e.entity_id in ids]

    def group_phrase(self, name: str, language: str = "en") -> tuple[bool, bool]:
        """Whether `name` only says places and kinds of device ("the kitchen lights"), so it
        means every such device rather than one; and whether it says a place."""
        language = base_language(language)
        said = fold(name, language).split()
        index = self._index(language)
        group = bool(said) and not whole_name(said, index) \
            and not content_words(said, index, language, drop_places=True)
        return group, bool(read_words(said, index, language).places)

    def said_names(self, text: str, language: str = "en") -> list[str]:
        """The words of `text`, as written, that read as (part of) a device's name, however
        inflected or compounded ("skrivbordslampan")."""
        language = base_language(language)
        index = self._index(language)
        stops = stop_words(language)
        found = []
        for word in text.split():
            word = word.strip(".,!?;:¿¡\"'")
            folded = fold(word, language)
            if folded and folded not in stops and " " not in folded and (
                    sense(folded, index).ids or sense(folded, index).says_more):
                found.append(word)
        return found

    def candidates(
        self, text: str, language: str = "en", limit: int = 8, *, focused: bool = False
    ) -> list[Entity]:
        """The entities an utterance may be about, most likely first.

        Order: whole names or aliases said, then partial names, then devices of a mentioned kind
        in a mentioned area, then everything in a mentioned area, then devices of a mentioned kind.
        `focused`: only the best-matching tier (what a grammar should offer a small model:
        the entity named outright, or the devices of the kind said in the area said).
        """
        match = self.match(text, language, limit)
        return match.best if focused else match.candidates

    def match(self, text: str, language: str = "en", limit: int = 8) -> "Match":
        """`candidates` and its best tier from one reading of the utterance."""
        ranked, reading = self._ranked(text, base_language(language))
        if not ranked:
            return Match([], [], named=False)
        top_tier = min(rank[0] for rank in ranked.values())
        order = sorted(ranked, key=lambda i: (ranked[i], i))
        best = self._entities([i for i in order if ranked[i][0] == top_tier][: max(limit, 0)], keep_order=True)
        # named outright, and no area or kind of device said beyond the named entities' own
        # ("the kitchen light and the fans in the office" is about more than the name)
        named = top_tier == _TIER_NAME and reading.areas <= {e.area for e in best} \
            and reading.domains <= {e.domain for e in best}
        floor_areas = reading.floor_areas
        if floor_areas and not reading.areas:  # "the ceiling light upstairs": those on that floor
            best = [e for e in best if e.area in floor_areas] or best
        return Match(self._entities(order[: max(limit, 0)], keep_order=True), best, named=named,
                     tier=_TIER_NAMES[int(top_tier)], place_said=bool(reading.areas or floor_areas))

    def fit(self, text: str, language: str = "en", limit: int = 8, match: Match | None = None,
            verbs: frozenset[str] = frozenset()) -> Fit:
        """The entities a command fits well. Unless it says a whole name, an entity fits only when
        every word of what was said about it (each run of words between filler words that holds
        one of its names' words, its area or a kind of device) is one of its names' words, its
        area (or floor) or its kind: "the front door" does not fit "Garage Door", nor "the kitchen
        radio" the kitchen light. `match`: the text's match when the caller has it (else made here);
        `verbs`: folded words that say what to do ("zurück", "back"), fillers unless the home's
        names, rooms or kinds say them."""
        match = match or self.match(text, language, limit)
        language = base_language(language)
        if match.tier in ("", "name") or not has_stop_words(language):
            return Fit(match.best)  # without a filler table every verb would look like a name
        index = self._index(language)
        kinds = {**domain_words(language), **_paired_kinds(text, language)}
        area_words, on_floor = self._place_words(index)
        said = set(fold(text, language).split()) & verbs  # the text's words that say what to do
        verbs = frozenset(w for w in said if w not in kinds and w not in area_words and w not in on_floor
                          and not sense(w, index).ids)
        runs = _runs_between_fillers(text, language, verbs)

        def explains(entity: Entity, word: str) -> bool:
            folded = fold(word, language)
            found = sense(folded, index)  # as written, inflected ("lampę") or compounded
            # a room's word explains what is in that room or named by it ("kitchen" is no word of
            # the living room's light)
            if entity.area in area_words.get(folded, ()) or entity.entity_id in found.ids \
                    or kinds.get(folded) == entity.domain or entity.area in on_floor.get(folded, ()):
                return True
            if folded in area_words:
                return False
            if found.ids or found.says_more:
                return entity.entity_id in found.ids
            # "Küchenlicht": both its area and its kind, or it says more
            return bool(found.areas or found.domains) and entity.area in (found.areas or {entity.area}) \
                and entity.domain in (found.domains or {entity.domain})

        def mentions(entity: Entity, word: str) -> bool:
            folded = fold(word, language)
            if folded in area_words or folded in kinds or folded in on_floor:
                return True
            found = sense(folded, index)
            return entity.entity_id in found.ids or bool(found.areas or found.domains)

        good: list[Entity] = []
        unexplained: list[list[str]] = []
        for entity in match.best:
            touching = [run for run in runs if any(mentions(entity, w) for w in run)]
            if touching and all(explains(entity, w) for run in touching for w in run):
                good.append(entity)
            else:
                unexplained += touching or runs
        longest: list[str] = max(unexplained, key=len, default=[])
        missing = " ".join(longest).strip(".,!?;:¿¡\"'")
        return Fit(good, "" if good else missing, ambiguous=match.tier == "partial" and len(good) > 1)

    def named_by_kind(self, said: str, among: list[Entity], language: str = "en") -> list[Entity]:
        """Those of `among` whose names say a kind of device `said` says ("Bedroom TV" for "the tv",
        "Smart Curtain" for "den Vorhang")."""
        language = base_language(language)
        index = self._index(language)
        kinds = domain_words(language)
        words = [word for word in fold(said, language).split() if word in kinds]
        ids = {i for word in words for i in sense(word, index).ids}  # as written, translated
        return [e for e in among if e.entity_id in ids or not set(words).isdisjoint(fold(e.name, language).split())]

    @staticmethod
    def _place_words(index: NameIndex) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """A word of an area's name → those areas; a floor's word → the areas on it ("upstairs")."""
        area_words: dict[str, set[str]] = defaultdict(set)
        for key, area in index.areas.items():
            for word in key.split():
                area_words[word].add(area)
        on_floor: dict[str, set[str]] = defaultdict(set)
        for key, floor in index.floors.items():
            for word in key.split():
                on_floor[word].update(index.floor_areas[floor])
        return area_words, on_floor

    def floor_of(self, text: str, language: str = "en") -> str | None:
        """The floor `text` names ("im Obergeschoss", "upstairs"), filler words aside."""
        language = base_language(language)
        stops = stop_words(language)
        key = " ".join(w for w in fold(text, language).split() if w not in stops)
        return self._index(language).floors.get(key)

    def pick(self, answer: str, among: list[Entity], language: str = "en") -> Entity | None:
        """The one of `among` an answer to "which one?" names ("the fan", "Desk lamp", "the lock"),
        if exactly one: a whole name first, then its words or kind; a name two share is told apart
        by kind or area, as the question says them."""
        language = base_language(language)
        index = self._index(language)
        words = fold(answer, language).split()
        said = [w for w in words if w not in stop_words(language)]
        kinds = domain_words(language)
        chosen = [e for e in among if e.entity_id in index.names.get(" ".join(said), ())] or [
            e for e in among
            if any(e.entity_id in ids_with_word(w, index)[1] or kinds.get(w) == e.domain for w in said)]
        if len(chosen) != 1:  # "the switch", "Front Door in the Hallway": a kind or an area the question said
            spoken = f" {' '.join(words)} "
            chosen = [e for e in chosen or among
                      if e.domain in words or (e.area and f" {fold(e.area, language)} " in spoken)] or chosen
        return chosen[0] if len(chosen) == 1 else None

    def _ranked(self, text: str, language: str) -> tuple[dict[str, tuple[float, ...]], Reading]:
        index = self._index(language)
        reading = read_words(fold(text, language).split(), index, language)
        in_area = members(reading.areas, index.by_area)
        of_domain = members(reading.domains, index.by_domain)

        def disagreement(entity_id: str) -> int:
            return (bool(in_area) and entity_id not in in_area) + (
                bool(of_domain) and entity_id not in of_domain)

        ranked: dict[str, tuple[float, ...]] = {}
        for entity_id, length in reading.full_names.items():
            ranked[entity_id] = (_TIER_NAME, -length, disagreement(entity_id))
        for entity_id, weight in reading.partial_names.items():
            ranked.setdefault(entity_id, (_TIER_PARTIAL, disagreement(entity_id), -weight))
        for tier, ids in ((_TIER_AREA_DOMAIN, in_area & of_domain), (_TIER_AREA, in_area),
                          (_TIER_DOMAIN, of_domain)):
            for entity_id in ids:
                ranked.setdefault(entity_id, (tier,))
        return ranked, reading

    def areas(self, language: str | None = None) -> dict[str, tuple[str, ...]]:
        """Every area with its aliases; with a language, also its name in that language (and
        English) when it is a common room ("Kitchen" is also "Küche" in German)."""
        aliases = self._store.area_aliases()
        known = {e.area for e in self._store.all() if e.area}
        found = {}
        for area in sorted(known | set(aliases)):
            own = aliases.get(area, ())
            found[area] = (*own, *area_translations((area, *own), language)) if language else own
        return found

    def floors(self, language: str | None = None) -> dict[str, Floor]:
        """Every floor with its aliases; with a language, also its names in that language (and
        English) when it is a common floor ("upstairs" is also "oben" in German)."""
        return {floor: Floor((*found.aliases, *floor_translations((floor, *found.aliases), language)), found.areas)
                if language else found for floor, found in self._store.floors().items()}

    def area_of(self, area: str, language: str = "en") -> str | None:
        """The area an area name or alias means ("Küche" → "Kitchen"), if exactly one."""
        language = base_language(language)
        found = self._areas_for(area, self._index(language), language)
        return next(iter(found)) if len(found) == 1 else None

    # --- matching --------------------------------------------------------------------------

    def _match_name(self, name: str, pool: set[str], index: NameIndex, language: str) -> set[str]:
        said = fold(name, language).split()
        exact = pool.intersection(whole_name(said, index))
        if exact:
            return exact
        reading = read_words(said, index, language)
        of_said_kind = members(reading.domains, index.by_domain)
        content = content_words(said, index, language)
        if content:  # every meaningful word said is in the entity's names
            partial = set(pool)
            for word in content:
                partial &= ids_with_word(word, index)[1]
            if partial and (partial & of_said_kind or not reading.domains):
                # a kind said is the kind meant: "tv i vardagsrummet" is no "Living Room Blinds"
                return (partial & of_said_kind) or partial
        placed = self._named_in_area(said, pool & members(reading.places, index.by_area), index, language)
        if placed:
            return placed
        if reading.domains and not content_words(said, index, language, drop_places=True):
            group = pool & of_said_kind
            if reading.places:
                group &= members(reading.places, index.by_area)
            return group
        return set()

    @staticmethod
    def _named_in_area(said: list[str], in_area: set[str], index: NameIndex, language: str) -> set[str]:
        """"the living room smart curtain", "Smart Curtain im Wohnzimmer": a name said with its
        area's name before or after it — whole, else every other word in the name."""
        if not in_area:
            return set()
        stops = stop_words(language)
        area_words = place_words(index)
        rest = [w for w in said if w not in stops and w not in area_words]
        whole = in_area.intersection(whole_name(rest, index))
        content = content_words(said, index, language, drop_places=True)
        if whole or not content:
            return whole
        for word in content:
            in_area &= ids_with_word(word, index)[1]
        return in_area

    def _areas_for(self, area: str, index: NameIndex, language: str) -> set[str]:
        key = fold(area, language)
        if key in index.areas:
            return {index.areas[key]}
        if area in index.by_area:
            return {area}
        # "the living room", "im Wohnzimmer": an area name inside the text
        return read_words(key.split(), index, language).areas

    def _domains_for(self, domain: str, index: NameIndex, language: str) -> set[str]:
        if domain in index.by_domain:
            return {domain}
        return read_words(fold(domain, language).split(), index, language).domains

    def _entities(self, ids: Iterable[str], keep_order: bool = False) -> list[Entity]:
        ordered = list(ids) if keep_order else sorted(ids)
        return [e for e in (self._store.get(i) for i in ordered) if e is not None]

    # --- index -----------------------------------------------------------------------------

    def _index(self, language: str) -> NameIndex:
        index = self._indexes.get(language)
        if index is None or index.version != self._store.version:
            index = build_index(self._store, language, self.areas(language), self.floors(language))
            if any(i.version != self._store.version for i in self._indexes.values()):
                self._indexes.clear()
            self._indexes[language] = index
        return index


def _paired_kinds(text: str, language: str) -> dict[str, str]:
    """Each folded word of a two-word kind of device said ("robot mower") → that kind."""
    said = fold(text, language).split()
    kinds = domain_words(language)
    return {word: kinds[pair] for n in range(len(said) - 1)
            if (pair := f"{said[n]} {said[n + 1]}") in kinds for word in said[n:n + 2]}


def _runs_between_fillers(text: str, language: str, verbs: frozenset[str] = frozenset()) -> list[list[str]]:
    """The runs of words of `text` between its filler words (`stop_words`, and `verbs`)."""
    stops = stop_words(language) | verbs
    runs: list[list[str]] = [[]]
    for word in text.split():
        folded = fold(word, language)
        if not folded or folded in stops:
            runs.append([])
        else:
            runs[-1].append(word)
    return [run for run in runs if run]
