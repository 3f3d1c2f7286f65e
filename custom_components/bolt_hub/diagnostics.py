"""Diagnostics of a Bolt Hub entry: its settings (the API token redacted) and the hub's status."""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from . import BoltHubConfigEntry
from .const import CONF_API_TOKEN
from .conversation import STREAMING
from .hub_client import HubError

TO_REDACT = {CONF_API_TOKEN}


async def async_get_config_entry_diagnostics(hass: HomeAssistant, entry: BoltHubConfigEntry) -> dict[str, Any]:
    """The entry's data and options, the hub's version and status (or why it did not answer)."""
    try:
        status: dict[str, Any] = await entry.runtime_data.client.status()
    except HubError as err:
        status = {"error": err.key, "message": str(err)}
    return {
        "entry": {"title": entry.title, "data": async_redact_data(dict(entry.data), TO_REDACT),
                  "options": dict(entry.options)},
        "hub_version_at_setup": entry.runtime_data.version,
        "streaming": STREAMING,
        "hub_status": async_redact_data(status, TO_REDACT),
    }
