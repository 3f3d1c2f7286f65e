"""What Home Assistant exposes to Assist, watched: HA fires no event when an entity outside its
entity registry (a YAML entity without a `unique_id`) is exposed or hidden, so the hub asks for the
exposure settings every `EXPOSURE_POLL_S` and reloads when they changed. Entities in the registry
also announce it with `entity_registry_updated` (their options change), which reloads at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from hub.backends.ha.client import HAError, HAWebSocket

_LOGGER = logging.getLogger(__name__)

ASSISTANT = "conversation"  # HA's name for Assist in its expose settings
EXPOSURE_POLL_S = 10.0


def exposed_ids(exposed: dict[str, dict[str, Any]]) -> frozenset[str]:
    """The entity ids `homeassistant/expose_entity/list` says are exposed to Assist."""
    return frozenset(entity_id for entity_id, assistants in exposed.items()
                     if isinstance(assistants, dict) and assistants.get(ASSISTANT))


async def watch_exposure(ws: HAWebSocket, loaded: Callable[[], frozenset[str]], changed: Callable[[], None],
                         every_s: float = EXPOSURE_POLL_S) -> None:
    """Until cancelled: every `every_s`, compare what HA exposes with what the last load saw
    (`loaded()`), and call `changed()` when they differ."""
    while True:
        await asyncio.sleep(every_s)
        try:
            listed = await ws.command("homeassistant/expose_entity/list")
        except HAError as err:  # not an admin token: the load said so already
            _LOGGER.debug("cannot read Home Assistant's exposure settings: %s", err)
            return
        if exposed_ids((listed or {}).get("exposed_entities", {})) != loaded():
            _LOGGER.info("Home Assistant exposes other entities to Assist now: reloading")
            changed()
