"""The integration's tests: Home Assistant 2025.4.4 in-process (pytest-homeassistant-custom-
component), the integration from this repository's custom_components/, a stand-in hub API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.bolt_hub.const import CONF_API_TOKEN, CONF_URL, DOMAIN

from .fake_hub import TOKEN, FakeHub


@pytest.fixture(autouse=True)
async def home_assistant_core(hass: HomeAssistant, enable_custom_integrations: None) -> None:
    """HA's core integration and its conversation agent (what an entry's setup needs), and
    custom_components/bolt_hub loadable."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})


@pytest.fixture
async def hub(socket_enabled: None) -> AsyncIterator[FakeHub]:
    """The stand-in hub on 127.0.0.1 (the only host pytest-socket lets tests reach)."""
    fake = await FakeHub().start()
    yield fake
    await fake.stop()


@pytest.fixture
async def entry(hass: HomeAssistant, hub: FakeHub) -> MockConfigEntry:
    """A Bolt Hub entry set up against the stand-in hub."""
    config_entry = MockConfigEntry(domain=DOMAIN, title="Bolt Hub",
                                   data={CONF_URL: hub.url, CONF_API_TOKEN: TOKEN})
    config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    return config_entry


def agent_id(hass: HomeAssistant, entry: MockConfigEntry) -> str:
    from homeassistant.helpers import entity_registry as er

    [entity] = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    return entity.entity_id


def speech(result: Any) -> str:
    return str(result.response.speech["plain"]["speech"])
