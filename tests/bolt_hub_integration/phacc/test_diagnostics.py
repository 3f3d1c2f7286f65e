"""Diagnostics: the entry and the hub's status, never the API token."""

from __future__ import annotations

import json

from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.core import HomeAssistant

from custom_components.bolt_hub.diagnostics import async_get_config_entry_diagnostics

from .fake_hub import TOKEN, FakeHub


async def test_diagnostics_redact_the_token(hass: HomeAssistant, hub: FakeHub, entry: MockConfigEntry) -> None:
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert TOKEN not in json.dumps(diagnostics)
    assert diagnostics["entry"]["data"] == {"url": hub.url, "api_token": "**REDACTED**"}
    assert diagnostics["hub_version_at_setup"] == "0.6.0" and diagnostics["hub_status"]["entities"] == 3
    assert diagnostics["streaming"] is False


async def test_diagnostics_of_a_hub_that_is_down_say_why(hass: HomeAssistant, hub: FakeHub,
                                                         entry: MockConfigEntry) -> None:
    await hub.stop()
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert diagnostics["hub_status"]["error"] == "unreachable" and TOKEN not in json.dumps(diagnostics)
