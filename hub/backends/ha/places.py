"""Where Home Assistant's devices are, exposed or not: its device, entity and area registries as
one table of ids → area names (`EntityStore.set_places`), for the speaker's room.

A voice satellite is seldom exposed to Assist, yet the request names it (`device_id`, and the
`assist_satellite` entity as `satellite_id`): its area comes from the registries, the entity's own
area before its device's, as HA's default agent and intent handlers read them.
"""

from __future__ import annotations

from typing import Any


def places_of(devices: list[dict[str, Any]], entities: list[dict[str, Any]],
              areas: list[dict[str, Any]]) -> dict[str, str]:
    """Device ids, entity ids and area ids → the name of the area each is in."""
    area_name = {a["area_id"]: a["name"] for a in areas if isinstance(a.get("name"), str)}
    places = dict(area_name)
    device_area: dict[str, str] = {}
    for device in devices:
        area = area_name.get(device.get("area_id") or "")
        if area is not None and isinstance(device.get("id"), str):
            device_area[device["id"]] = places[device["id"]] = area
    for entry in entities:
        entity_id = entry.get("entity_id")
        area = area_name.get(entry.get("area_id") or "") or device_area.get(entry.get("device_id") or "")
        if area is not None and isinstance(entity_id, str):
            places[entity_id] = area
    return places
