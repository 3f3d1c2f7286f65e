"""The agent's read-only view of the home: entities, candidates for a request, prompt text."""

from __future__ import annotations

from typing import Sequence

from hub.home.context import entity_overview, live_states
from hub.home.entities import Entity, EntityStore
from hub.home.resolve import EntityResolver


class StoreHomeView:
    def __init__(self, store: EntityStore, resolver: EntityResolver, candidate_limit: int = 8) -> None:
        self._store = store
        self._resolver = resolver
        self._limit = candidate_limit
        self._overview_cache: tuple[tuple[str, ...], str] | None = None

    def entities(self) -> Sequence[Entity]:
        return self._store.all()

    def candidates(self, text: str, language: str, focused: bool = False) -> Sequence[Entity]:
        return self._resolver.candidates(text, language, limit=self._limit, focused=focused)

    def overview(self, entities: Sequence[Entity]) -> str:
        key = tuple(e.entity_id for e in entities) + (str(self._store.version),)
        if self._overview_cache is None or self._overview_cache[0] != key:
            self._overview_cache = (key, entity_overview(entities, self._store.area_aliases()))
        return self._overview_cache[1]

    def live_states(self, entities: Sequence[Entity]) -> str:
        return live_states(entities)
