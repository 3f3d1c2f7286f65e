"""An in-memory demo home: a few rooms of devices whose state changes like real ones would."""

from __future__ import annotations

from typing import Any

from hub.home.colors import COLORS, color_key
from hub.home.entities import BackendError, Entity, EntityStore

SOURCE = "demo"

# Area → aliases in the languages the hub speaks most (HA's area registry has these too).
DEMO_AREA_ALIASES: dict[str, tuple[str, ...]] = {
    "Kitchen": ("Küche", "cuisine", "cocina", "cucina", "keuken", "cozinha", "kuchnia"),
    "Living room": ("Wohnzimmer", "salon", "salón", "soggiorno", "woonkamer", "sala de estar"),
    "Bedroom": ("Schlafzimmer", "chambre", "dormitorio", "camera da letto", "slaapkamer", "quarto",
                "sypialnia"),
    "Office": ("Büro", "bureau", "oficina", "ufficio", "kantoor", "escritório", "biuro"),
}

_PLAYLIST = ("Blue in Green", "So What", "Freddie Freeloader", "All Blues")
_VOLUME_STEP = 0.1  # media_player.volume_up / _down, as HA's MediaPlayerEntity.volume_step

# What the demo scenes set: entity id → (state, attributes).
_SCENES: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {
    "scene.movie_night": {
        "light.living_room": ("on", {"brightness": 51}),
        "light.floor_lamp": ("off", {}),
    },
}


def demo_entities() -> list[Entity]:
    def entity(entity_id: str, name: str, state: str, area: str | None = None,
               aliases: tuple[str, ...] = (), device_class: str | None = None,
               **attributes: Any) -> Entity:
        return Entity(entity_id, name, state, dict(attributes), aliases, area, device_class,
                      source=SOURCE)

    return [
        entity("light.kitchen", "Kitchen light", "off", "Kitchen"),
        entity("light.living_room", "Living room light", "on", "Living room", brightness=180),
        entity("light.floor_lamp", "Living room floor lamp", "off", "Living room",
               ("floor lamp", "standing lamp", "Stehlampe")),
        entity("light.bedroom", "Bedroom light", "off", "Bedroom"),
        entity("light.desk_lamp", "Desk lamp", "on", "Office", ("Schreibtischlampe",),
               brightness=255, rgb_color=(255, 255, 255)),
        entity("switch.coffee_machine", "Coffee machine", "off", "Kitchen",
               ("Kaffeemaschine", "machine à café")),
        entity("climate.living_room", "Living room thermostat", "heat", "Living room",
               ("thermostat", "heating"), temperature=21.0, current_temperature=20.5,
               min_temp=7.0, max_temp=30.0, hvac_modes=["off", "heat"], hvac_action="heating",
               fan_modes=["auto", "low", "high"], fan_mode="auto"),
        entity("cover.bedroom_blinds", "Bedroom blinds", "closed", "Bedroom", device_class="blind",
               current_position=0),
        entity("media_player.living_room_speaker", "Living room speaker", "paused", "Living room",
               volume_level=0.3, media_title=_PLAYLIST[0], media_artist="Miles Davis"),
        entity("sensor.outside_temperature", "Outside temperature", "12.5",
               device_class="temperature", unit_of_measurement="°C"),
        entity("lock.front_door", "Front door", "locked"),
        entity("scene.movie_night", "Movie night", "unknown"),
        entity("script.good_night", "Good night", "off"),
    ]


def load_demo_home(store: EntityStore) -> DemoBackend:
    """Fill `store` with the demo home (entities, area aliases) and register its backend."""
    backend = DemoBackend(store)
    store.register_backend(SOURCE, backend)
    for area, aliases in DEMO_AREA_ALIASES.items():
        store.set_area_aliases(area, aliases)
    store.replace_all(demo_entities(), source=SOURCE)
    return backend


class DemoBackend:
    """Carries out HA-style service calls by changing the demo entities' states in the store.

    Set `online = False` to make every call fail as if Home Assistant were down.
    """

    def __init__(self, store: EntityStore) -> None:
        self._store = store
        self.online = True
        self.calls: list[tuple[str, str, dict[str, Any]]] = []  # (entity id, service, data)

    async def call_service(self, entity: Entity, service: str, data: dict[str, Any]) -> None:
        if not self.online:
            raise BackendError("the demo home is offline")
        current = self._store.get(entity.entity_id)
        if current is None:
            raise BackendError(f"{entity.entity_id} does not exist")
        handler = getattr(self, f"_{current.domain}", None)
        if handler is None:
            raise BackendError(f"the demo home cannot control {current.domain} entities")
        state, attributes = handler(current, service, dict(data), dict(current.attributes))
        self.calls.append((entity.entity_id, service, dict(data)))
        self._store.update_state(entity.entity_id, state, attributes)

    # --- one handler per domain: (entity, service, data, attributes) → (state, attributes) --

    def _light(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if service == "toggle":
            service = "turn_off" if entity.state == "on" else "turn_on"
        if service == "turn_off":
            attrs.pop("brightness", None)
            return "off", attrs
        if service != "turn_on":
            raise _unsupported(entity, service)
        if "brightness_pct" in data:
            pct = max(0.0, min(100.0, float(data["brightness_pct"])))
            if pct == 0:
                attrs.pop("brightness", None)
                return "off", attrs
            attrs["brightness"] = round(pct * 255 / 100)
        elif entity.state != "on":
            attrs["brightness"] = 255
        if "color_name" in data:
            key = color_key(str(data["color_name"]))
            if key not in COLORS:
                raise BackendError(f"unknown color {data['color_name']!r}")
            attrs["rgb_color"] = COLORS[key]
        if "rgb_color" in data:
            attrs["rgb_color"] = tuple(int(v) for v in data["rgb_color"])
        return "on", attrs

    def _on_off(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        states = {"turn_on": "on", "turn_off": "off",
                  "toggle": "off" if entity.state == "on" else "on"}
        if service not in states:
            raise _unsupported(entity, service)
        return states[service], attrs

    _switch = _fan = _input_boolean = _on_off

    def _climate(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if service == "set_temperature":
            value = float(data["temperature"])
            low, high = attrs.get("min_temp", 7.0), attrs.get("max_temp", 35.0)
            if not low <= value <= high:
                raise BackendError(f"temperature {value} is outside {low}–{high}")
            attrs["temperature"] = value
            return (entity.state if entity.state != "off" else "heat"), attrs
        if service == "set_fan_mode" and data.get("fan_mode") in attrs.get("fan_modes", ()):
            attrs["fan_mode"] = data["fan_mode"]
            return entity.state, attrs
        if service in ("turn_on", "turn_off", "set_hvac_mode"):
            mode = {"turn_on": "heat", "turn_off": "off"}.get(service, data.get("hvac_mode"))
            if not isinstance(mode, str) or mode not in attrs.get("hvac_modes", ["off", "heat"]):
                raise BackendError(f"unsupported hvac mode {mode!r}")
            attrs["hvac_action"] = "heating" if mode == "heat" else "off"
            return mode, attrs
        raise _unsupported(entity, service)

    def _cover(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        positions = {"open_cover": 100, "close_cover": 0}
        if service in positions:
            position = positions[service]
        elif service == "set_cover_position":
            position = max(0, min(100, int(data["position"])))
        elif service == "stop_cover":
            return entity.state, attrs
        else:
            raise _unsupported(entity, service)
        attrs["current_position"] = position
        return ("open" if position > 0 else "closed"), attrs

    def _media_player(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if service in ("media_play", "media_pause", "media_play_pause"):
            playing = service == "media_play" or (service == "media_play_pause" and entity.state != "playing")
            return ("playing" if playing else "paused"), attrs
        if service in ("media_next_track", "media_previous_track"):
            step = 1 if service == "media_next_track" else -1
            title = attrs.get("media_title")
            index = _PLAYLIST.index(title) if title in _PLAYLIST else 0
            attrs["media_title"] = _PLAYLIST[(index + step) % len(_PLAYLIST)]
            return entity.state, attrs
        if service == "volume_set":
            attrs["volume_level"] = max(0.0, min(1.0, float(data["volume_level"])))
            return entity.state, attrs
        if service in ("volume_up", "volume_down") and isinstance(attrs.get("volume_level"), (int, float)):
            change = _VOLUME_STEP if service == "volume_up" else -_VOLUME_STEP  # HA's default step
            attrs["volume_level"] = round(max(0.0, min(1.0, float(attrs["volume_level"]) + change)), 2)
            return entity.state, attrs
        if service in ("volume_up", "volume_down"):  # a player that reports no level steps unseen
            return entity.state, attrs
        if service == "volume_mute":
            attrs["is_volume_muted"] = bool(data.get("is_volume_muted"))
            return entity.state, attrs
        if service in ("turn_on", "turn_off"):
            return ("idle" if service == "turn_on" else "off"), attrs
        raise _unsupported(entity, service)

    def _lock(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        states = {"lock": "locked", "unlock": "unlocked"}
        if service not in states:
            raise _unsupported(entity, service)
        return states[service], attrs

    def _vacuum(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        states = {"start": "cleaning", "return_to_base": "docked"}
        if service not in states:
            raise _unsupported(entity, service)
        return states[service], attrs

    def _scene(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if service != "turn_on":
            raise _unsupported(entity, service)
        for entity_id, (state, scene_attrs) in _SCENES.get(entity.entity_id, {}).items():
            if entity_id in self._store:
                self._store.update_state(entity_id, state, scene_attrs)
        return entity.state, attrs

    def _script(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if service == "turn_off":
            return "off", attrs
        if service != "turn_on":
            raise _unsupported(entity, service)
        if entity.entity_id == "script.good_night":
            for light in [e for e in self._store.all() if e.domain == "light"]:
                self._store.update_state(light.entity_id, "off", {
                    k: v for k, v in light.attributes.items() if k != "brightness"})
        return "off", attrs  # finished


def _unsupported(entity: Entity, service: str) -> BackendError:
    return BackendError(f"{entity.domain}.{service} is not supported by {entity.entity_id}")
