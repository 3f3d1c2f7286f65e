"""A voice satellite for the end-to-end tests (tests/ha/test_e2e_integration.py): a device in the
Kitchen that registers a timer handler with HA, as ESPHome satellites do. Each timer event of the
device is written to the state `bolt_test_satellite.timer` (the event, its device, its seconds),
where a test reads it over HA's REST API. Set up by `bolt_test_satellite:` in configuration.yaml."""

from __future__ import annotations

from typing import Any

from homeassistant.components.intent import TimerEventType, TimerInfo, async_register_timer_handler
from homeassistant.config_entries import SOURCE_IMPORT, ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr

DOMAIN = "bolt_test_satellite"


async def async_setup(hass: HomeAssistant, config: dict[str, Any]) -> bool:
    if not hass.config_entries.async_entries(DOMAIN):
        hass.async_create_task(hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_IMPORT}, data={}))
    return True


async def async_setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    device = dr.async_get(hass).async_get_or_create(config_entry_id=entry.entry_id, identifiers={(DOMAIN, "kitchen")},
                                                   name="Kitchen satellite", suggested_area="Kitchen")

    def on_timer(event_type: TimerEventType, timer: TimerInfo) -> None:
        hass.states.async_set(f"{DOMAIN}.timer", event_type.value,
                              {"device_id": timer.device_id, "seconds": timer.seconds, "name": timer.name})

    entry.async_on_unload(async_register_timer_handler(hass, device.id, on_timer))
    return True


async def async_unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    return True
