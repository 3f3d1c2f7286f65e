"""The agent's read-only view of the home: entities, candidates for a request, prompt text.

Up to `overview_max_entities` entities, the stable prompt carries the whole home's overview and
a request only adds the states of its best matches (the tier the grammar offers: the device
named, or the devices of the kind said in the area said). A bigger home gets no overview (it would cost
every cold turn thousands of tokens and crowd the context): a request then carries its
candidates with their states; the best matches (what the grammar offers a small model) with
their names, aliases and areas, the others with id and name, so the model sees everything the
grammar lets it pick and can still call any candidate. A request that names entities outright
carries only those: its other candidates merely share a word with the name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Collection, Sequence

from hub.home.context import OVERVIEW_MAX_ENTITIES, candidate_context, entity_overview, live_states
from hub.home.entities import Entity, EntityStore
from hub.home.places import Place, nearest
from hub.home.namesakes import namesakes
from hub.home.resolve import EntityResolver, Fit, Match


class StoreHomeView:
    def __init__(
        self, store: EntityStore, resolver: EntityResolver, candidate_limit: int = 8,
        overview_max_entities: int = OVERVIEW_MAX_ENTITIES,
    ) -> None:
        self._store = store
        self._resolver = resolver
        self._limit = candidate_limit
        self._overview_max = overview_max_entities
        self._overview_cache: tuple[tuple[str, ...], str] | None = None

    def entities(self) -> Sequence[Entity]:
        return self._store.all()

    def name_of(self, entity_id: str) -> str | None:
        entity = self._store.get(entity_id)
        return entity.name if entity is not None else None

    def match(self, text: str, language: str, place: Place | None = None) -> Match:
        """The request's candidates and their best tier, matched once per turn, the speaker's
        `place` preferred (`_in_place`); when it names entities outright (a whole name or alias
        said), the candidates are only those: the lower tiers are partial word matches, noise
        that would cost a big home's request ~10 tokens each for entities the grammar does not
        offer anyway."""
        match = self._resolver.match(text, language, limit=self._limit)
        if place is not None:
            match = self._in_place(match, place)
        return replace(match, candidates=match.best) if match.named else match

    def _in_place(self, match: Match, place: Place) -> Match:
        """Of several best matches of a request that says no place, those in the speaker's area,
        else on its floor: one name they all answer to (as Home Assistant prefers), the words of
        a partial name, or a kind of device ("the lights" are the room's)."""
        if match.place_said or len(match.best) < 2 or match.tier not in ("name", "partial", "domain"):
            return match
        if match.tier == "name" and not _namesakes(match.best):
            return match  # several names said ("the desk lamp and the kitchen light")
        floor = self._store.floors().get(place.floor) if place.floor else None
        best = nearest(match.best, place.area, floor.areas if floor else ())
        if not best:
            return match
        return replace(match, best=best, candidates=[*best, *(e for e in match.candidates if e not in best)])

    def fit(self, text: str, language: str, match: Match) -> Fit:
        """The entities a command fits well enough to act on (EntityResolver.fit); devices that
        answer to the name said ("the ceiling light" of three rooms) are the user's to choose."""
        fit = self._resolver.fit(text, language, limit=self._limit, match=match)
        if match.tier == "name" and not fit.ambiguous and _namesakes(fit.entities):
            return replace(fit, ambiguous=True)
        return fit

    def pick(self, answer: str, among: list[Entity], language: str) -> Entity | None:
        return self._resolver.pick(answer, among, language)

    @property
    def overview_fits(self) -> bool:
        """Whether the home is small enough for its overview to go into the stable prompt."""
        return len(self._store) <= self._overview_max

    def overview(self, entities: Sequence[Entity]) -> str:
        """The stable overview of `entities`; empty when they are too many for one."""
        if len(entities) > self._overview_max:
            return ""
        key = tuple(e.entity_id for e in entities) + (str(self._store.version),)
        if self._overview_cache is None or self._overview_cache[0] != key:
            self._overview_cache = (key, entity_overview(entities, self._store.area_aliases()))
        return self._overview_cache[1]

    def live_states(self, entities: Sequence[Entity], best: Collection[str] | None = None) -> str:
        """States of a request's best matches (the ids `best`; None: all of `entities`); with no
        overview, every candidate (the best ones with names, aliases and areas)."""
        if self.overview_fits:
            return live_states([e for e in entities if best is None or e.entity_id in best])
        return candidate_context(entities, self._store.area_aliases(), best)


def _namesakes(entities: Sequence[Entity]) -> bool:
    """Whether several devices all answer to one of the first one's names (`namesakes`)."""
    return len(entities) > 1 and len(namesakes(entities[0], entities)) == len(entities) - 1
