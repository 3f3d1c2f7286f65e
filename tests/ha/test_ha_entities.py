"""How HA's states and registries become the hub's entities (data shaped as HA 2025.4 sends it)."""

from __future__ import annotations

import pytest

from hub.config import ConfigError, validate
from hub.options import hub_options
from hub.backends.ha.client import HAEndpoint
from hub.backends.ha.registry import EntityFilter, HomeAssistantBackend, Snapshot, build_entities
from hub.home.entities import EntityStore


def state(entity_id: str, value: str = "off", **attributes) -> dict:
    return {"entity_id": entity_id, "state": value, "attributes": attributes}


def registry_entry(entity_id: str, **fields) -> dict:
    return {"entity_id": entity_id, "area_id": None, "device_id": None, "disabled_by": None, "hidden_by": None,
            "entity_category": None, "name": None, "original_name": None, "aliases": [], **fields}


SNAPSHOT = Snapshot(
    states=[
        state("light.desk", friendly_name="Desk Lamp"),
        state("light.hall", "on", friendly_name="Hall", brightness=200),
        state("sensor.outside", "4.5", friendly_name="Outside", device_class="temperature"),
        state("switch.router_reboot", friendly_name="Router reboot"),
        state("light.legacy_yaml", friendly_name="Legacy"),
        state("input_boolean.secret", friendly_name="Secret"),
    ],
    entity_registry=[
        registry_entry("light.desk", device_id="dev1", aliases=["Work light", "Desk Lamp"]),
        registry_entry("light.hall", device_id="dev2", area_id="hallway"),
        registry_entry("sensor.outside", original_device_class="temperature"),
        registry_entry("switch.router_reboot", entity_category="config"),
        registry_entry("input_boolean.secret", hidden_by="user"),
    ],
    devices=[{"id": "dev1", "area_id": "office"}, {"id": "dev2", "area_id": "office"}],
    areas=[{"area_id": "office", "name": "Office", "aliases": ["Study"]}, {"area_id": "hallway", "name": "Hallway"}],
    exposed={
        "light.desk": {"conversation": True},
        "light.hall": {"conversation": True, "cloud.alexa": True},
        "sensor.outside": {"conversation": True},
        "light.legacy_yaml": {"cloud.google_assistant": True},
    },
)


def by_id(entity_filter: EntityFilter) -> dict:
    return {e.entity_id: e for e in build_entities(SNAPSHOT, entity_filter)}


def test_assist_exposure_areas_from_devices_and_aliases() -> None:
    entities = by_id(EntityFilter())
    assert set(entities) == {"light.desk", "light.hall", "sensor.outside"}
    desk = entities["light.desk"]
    assert (desk.name, desk.area, desk.device_id, desk.source) == ("Desk Lamp", "Office", "dev1", "ha")
    assert desk.aliases == ("Work light",), "the name itself is not repeated as an alias"
    assert entities["light.hall"].area == "Hallway", "the entity's own area wins over its device's"
    assert entities["light.hall"].attributes["brightness"] == 200 and entities["light.hall"].state == "on"
    assert entities["sensor.outside"].device_class == "temperature" and entities["sensor.outside"].area is None


def test_expose_all_skips_hidden_and_configuration_entities() -> None:
    entities = by_id(EntityFilter(expose="all"))
    assert set(entities) == {"light.desk", "light.hall", "sensor.outside", "light.legacy_yaml"}


def test_an_exposed_configuration_entity_keeps_its_category() -> None:
    """A device's setting or diagnostic the user exposed: its entity category tells it from the
    device itself (issue #40: "Smart Curtain", not "Smart Curtain Battery")."""
    entities = by_id(EntityFilter(include=("switch.router_reboot",)))
    assert entities["switch.router_reboot"].entity_category == "config"
    assert entities["light.desk"].entity_category is None


def test_include_and_exclude_globs() -> None:
    entity_filter = EntityFilter.from_options(hub_options(validate({"include_entities": "input_boolean.*, switch.router_reboot",
                                                       "exclude_entities": "light.h*"})).home_assistant)
    assert set(by_id(entity_filter)) == {"light.desk", "sensor.outside", "input_boolean.secret", "switch.router_reboot"}
    assert set(by_id(EntityFilter(include=("light.*",), exclude=("light.*",)))) == {"sensor.outside"}, "exclude wins"


def test_endpoint_from_options_and_addon_environment() -> None:
    standalone = HAEndpoint.from_options(hub_options(validate({"ha_url": "https://ha.example:8123/", "ha_token": "t"})).home_assistant, environ={})
    assert (standalone.rest_url, standalone.ws_url) == ("https://ha.example:8123/api", "wss://ha.example:8123/api/websocket")
    addon = HAEndpoint.from_options(hub_options(validate({})).home_assistant, environ={"SUPERVISOR_TOKEN": "sv"})
    assert (addon.rest_url, addon.ws_url, addon.token) == ("http://supervisor/core/api", "ws://supervisor/core/websocket", "sv")
    explicit = HAEndpoint.from_options(hub_options(validate({"ha_url": "http://10.0.0.2:8123", "ha_token": "t"})).home_assistant, environ={"SUPERVISOR_TOKEN": "sv"})
    assert explicit.rest_url == "http://10.0.0.2:8123/api", "an explicit ha_url wins in the add-on"
    assert HAEndpoint.from_options(hub_options(validate({})).home_assistant, environ={}) is None
    assert not HomeAssistantBackend.configured(hub_options(validate({})).home_assistant, environ={})
    assert HomeAssistantBackend.configured(hub_options(validate({})).home_assistant, environ={"SUPERVISOR_TOKEN": "sv"})


@pytest.mark.parametrize("options, message", [
    ({"ha_url": "http://ha:8123"}, "ha_token is not"),
    ({"ha_url": "ha:8123", "ha_token": "t"}, "must start with http"),
    ({}, "no Home Assistant configured"),
])
def test_unusable_options_are_config_errors(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        HomeAssistantBackend(hub_options(validate(options)).home_assistant, EntityStore(), environ={})
