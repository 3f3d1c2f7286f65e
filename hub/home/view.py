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

    def match(self, text: str, language: str) -> Match:
        """The request's candidates and their best tier, matched once per turn; when it names
        entities outright (a whole name or alias said), the candidates are only those: the lower
        tiers are partial word matches, noise that would cost a big home's request ~10 tokens
        each for entities the grammar does not offer anyway."""
        match = self._resolver.match(text, language, limit=self._limit)
        return replace(match, candidates=match.best) if match.named else match

    def fit(self, text: str, language: str, match: Match) -> Fit:
        """The entities a command fits well enough to act on (EntityResolver.fit)."""
        return self._resolver.fit(text, language, limit=self._limit, match=match)

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
