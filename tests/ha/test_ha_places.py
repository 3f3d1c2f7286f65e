"""Where Home Assistant's devices are (hub.backends.ha.places), from registry lists as HA sends them."""

from __future__ import annotations

from hub.backends.ha.exposure import exposed_ids
from hub.backends.ha.places import places_of


def test_devices_entities_and_area_ids_map_to_area_names() -> None:
    areas = [{"area_id": "kitchen", "name": "Kitchen"}, {"area_id": "living_room", "name": "Living Room"}]
    devices = [{"id": "dev-sat", "area_id": "kitchen"}, {"id": "dev-none", "area_id": None},
               {"id": "dev-gone", "area_id": "deleted_area"}]
    entities = [
        {"entity_id": "assist_satellite.kitchen", "device_id": "dev-sat", "area_id": None},  # its device's
        {"entity_id": "media_player.tv", "device_id": "dev-sat", "area_id": "living_room"},  # its own wins
        {"entity_id": "sensor.loose", "device_id": None, "area_id": None},
    ]
    assert places_of(devices, entities, areas) == {
        "kitchen": "Kitchen", "living_room": "Living Room", "dev-sat": "Kitchen",
        "assist_satellite.kitchen": "Kitchen", "media_player.tv": "Living Room",
    }


def test_exposed_ids_are_those_exposed_to_assist() -> None:
    listed = {"lock.porch": {"conversation": True}, "light.a": {"conversation": False, "cloud.alexa": True},
              "switch.b": {}, "odd": None}
    assert exposed_ids(listed) == frozenset({"lock.porch"})
