"""Services that answer with data (HA's `return_response`: `todo.get_items`,
`calendar.get_events`, `weather.get_forecasts`), asked of the entity's backend.

A backend that can answer has `service_response(entity, service, data)`, returning HA's
response object (`{entity_id: {...}}`); one that cannot is told apart by its absence.
"""

from __future__ import annotations

from typing import Any, Protocol

from hub.home.entities import BackendError, Entity, EntityStore


class AnsweringBackend(Protocol):
    async def service_response(self, entity: Entity, service: str, data: dict[str, Any]) -> dict[str, Any]: ...


async def service_response(store: EntityStore, entity: Entity, service: str,
                           data: dict[str, Any]) -> dict[str, Any]:
    """The entity's part of the service's response ({} when the response has none);
    BackendError when its backend cannot answer services."""
    backend = store.backend_for(entity)
    ask = getattr(backend, "service_response", None)
    if ask is None:
        raise BackendError(f"{entity.source} cannot answer {entity.domain}.{service}")
    response = await ask(entity, service, data)
    part = response.get(entity.entity_id) if isinstance(response, dict) else None
    return part if isinstance(part, dict) else {}
