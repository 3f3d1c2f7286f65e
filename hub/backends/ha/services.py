"""A service call to Home Assistant for one entity, with HA's failures as the store's
BackendErrors (their `code` has a phrase of its own: "error.ha_auth", "error.ha_unavailable")."""

from __future__ import annotations

from typing import Any

from hub.backends.ha.client import HAAuthError, HAClient, HARequestError, HAUnavailable
from hub.home.entities import ActionRejected, BackendError, Entity


class HomeAssistantAuthError(BackendError):
    code = "ha_auth"


class HomeAssistantUnavailable(BackendError):
    code = "ha_unavailable"


async def run_service(client: HAClient, entity: Entity, service: str, data: dict[str, Any],
                      respond: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`POST /api/services/<domain>/<service>` for the entity (`?return_response` when it
    `respond`s): the states it changed, and its response ({} unless asked)."""
    if not service.replace("_", "").isalnum():
        raise BackendError(f"invalid service name {service!r}")
    body = {**data, "entity_id": entity.entity_id}
    try:
        if respond:
            return await client.call_service_response(entity.domain, service, body)
        return await client.call_service(entity.domain, service, body), {}
    except HAAuthError as err:
        raise HomeAssistantAuthError(f"Home Assistant refused the hub's access token ({err})") from None
    except HAUnavailable as err:
        raise HomeAssistantUnavailable(f"Home Assistant unavailable: {err}") from None
    except HARequestError as err:  # 400: an action the entity does not have, data it cannot take
        raise (ActionRejected if err.status == 400 else BackendError)(str(err)) from None
