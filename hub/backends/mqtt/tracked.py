"""One discovered MQTT component as the hub tracks it, and the entity it shows as."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from hub.backends.mqtt.discovery import ComponentConfig, device_identifiers
from hub.home.entities import Entity

SOURCE = "mqtt"


@dataclass
class TrackedEntity:
    """One discovered component and what the hub knows about it."""

    spec: ComponentConfig
    entity_id: str
    name: str
    state: str = "unknown"
    attributes: dict[str, Any] = field(default_factory=dict)
    availability: dict[int, bool] = field(default_factory=dict)  # availability entry → available
    last_availability: bool | None = None
    unsubscribes: list[Callable[[], None]] = field(default_factory=list)
    shadowed_by: str | None = None  # the other-source entity that stands for this device

    @property
    def component(self) -> str:
        return self.spec.component

    @property
    def config(self) -> dict[str, Any]:
        return self.spec.config

    @property
    def device_ids(self) -> tuple[str, ...]:
        return device_identifiers(self.config)

    @property
    def available(self) -> bool:
        entries = availability_entries(self.config)
        if not entries:
            return True
        mode = self.config.get("availability_mode", "latest")
        if mode == "all":
            return len(self.availability) == len(entries) and all(self.availability.values())
        if mode == "any":
            return any(self.availability.values())
        return bool(self.last_availability)

    def to_entity(self) -> Entity:
        device = self.config.get("device") or {}
        ids = self.device_ids
        return Entity(
            entity_id=self.entity_id,
            name=self.name,
            state=self.state if self.available else "unavailable",
            attributes=dict(self.attributes),
            area=device.get("suggested_area"),
            device_class=self.config.get("device_class"),
            source=SOURCE,
            device_id=ids[0] if ids else None,
            entity_category=self.config.get("entity_category") or None,
        )


def availability_entries(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The availability topics of a config, the list form and the single-topic form alike."""
    if config.get("availability"):
        entries: list[dict[str, Any]] = config["availability"]
        return entries
    if config.get("availability_topic"):
        entry = {
            "topic": config["availability_topic"],
            "payload_available": config["payload_available"],
            "payload_not_available": config["payload_not_available"],
        }
        if config.get("availability_template"):
            entry["value_template"] = config["availability_template"]
        return [entry]
    return []
