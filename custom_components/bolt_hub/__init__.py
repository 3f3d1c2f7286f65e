"""Bolt Hub: the local voice hub as a Home Assistant conversation agent.

The entry holds the hub's URL and API token; its options the turn timeout, the persona and
whether timers said to a satellite are HA's own. A hub that does not answer at setup does not
stop the entry: the agent stays there and says so in words at each turn until the hub is back
(a voice pipeline whose agent is missing only fails). A token the hub refuses starts re-auth.
"""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryAuthFailed
from homeassistant.helpers.aiohttp_client import async_get_clientsession

from .const import CONF_API_TOKEN, CONF_TIMEOUT, CONF_URL, DEFAULT_TIMEOUT, DOMAIN, LOGGER
from .hub_client import BoltHubClient, HubAuthFailed, HubError

PLATFORMS = [Platform.CONVERSATION]


@dataclass
class BoltHubData:
    """What an entry's platforms share: the hub's client, and its version when setup reached it."""

    client: BoltHubClient
    version: str | None


type BoltHubConfigEntry = ConfigEntry[BoltHubData]


async def async_setup_entry(hass: HomeAssistant, entry: BoltHubConfigEntry) -> bool:
    """Connect to the hub and add its conversation agent."""
    client = BoltHubClient(async_get_clientsession(hass), entry.data[CONF_URL], entry.data[CONF_API_TOKEN],
                           entry.options.get(CONF_TIMEOUT, DEFAULT_TIMEOUT))
    version = None
    try:
        version = await client.check()
    except HubAuthFailed as err:
        raise ConfigEntryAuthFailed(translation_domain=DOMAIN, translation_key="invalid_auth") from err
    except HubError as err:
        LOGGER.warning("Bolt Hub at %s does not answer as it should (%s); its agent says so at each turn "
                       "until it does", client.url, err)
    entry.runtime_data = BoltHubData(client, version)
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    entry.async_on_unload(entry.add_update_listener(_options_changed))
    return True


async def async_unload_entry(hass: HomeAssistant, entry: BoltHubConfigEntry) -> bool:
    """Remove the conversation agent."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


async def _options_changed(hass: HomeAssistant, entry: BoltHubConfigEntry) -> None:
    await hass.config_entries.async_reload(entry.entry_id)
