"""MQTT discovery messages → validated component configs (pure functions, no I/O).

Follows Home Assistant's MQTT discovery: topics `<prefix>/<component>/[<node_id>/]<object_id>/config`
and device-based `<prefix>/device/<object_id>/config` (`dev`, `o`, `cmps`, shared options);
abbreviated keys (`cmd_t`, `stat_t`, …) are expanded and `~` at the start or end of a `*_topic`
value is replaced by the base topic. Only the components the hub can use are parsed:
light (default/basic and JSON schema), switch, fan, cover, lock, climate, sensor, binary_sensor,
and the appliances valve, vacuum, lawn_mower, scene, humidifier, water_heater, button.
Anything malformed raises DiscoveryError with a message fit for a warning log; what a component's
config must hold is checked by `schemas`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hub.backends.mqtt.schemas import DiscoveryError, validate_component
from hub.transport.mqtt_topics import slugify

SUPPORTED_COMPONENTS = ("binary_sensor", "button", "climate", "cover", "fan", "humidifier", "lawn_mower",
                        "light", "lock", "scene", "sensor", "switch", "vacuum", "valve", "water_heater")
MAX_CONFIG_BYTES = 256 * 1024
TOPIC_MATCHER = re.compile(
    r"^(?P<component>\w+)/(?:(?P<node_id>[a-zA-Z0-9_-]+)/)?(?P<object_id>[a-zA-Z0-9_-]+)/config$"
)
TOPIC_BASE = "~"

# Abbreviations of the keys the hub reads (HA accepts more; unknown keys are ignored anyway).
ABBREVIATIONS = {
    "act_t": "action_topic", "act_tpl": "action_template",
    "act_stat_t": "activity_state_topic", "act_val_tpl": "activity_value_template",
    "curr_hum_t": "current_humidity_topic", "curr_hum_tpl": "current_humidity_template",
    "dock_cmd_t": "dock_command_topic", "dock_cmd_tpl": "dock_command_template",
    "fanspd_lst": "fan_speed_list", "hum_cmd_t": "target_humidity_command_topic",
    "hum_cmd_tpl": "target_humidity_command_template", "hum_stat_t": "target_humidity_state_topic",
    "hum_state_tpl": "target_humidity_state_template", "max_hum": "max_humidity", "min_hum": "min_humidity",
    "pause_cmd_t": "pause_command_topic", "pause_mw_cmd_tpl": "pause_command_template",
    "pl_cln_sp": "payload_clean_spot", "pl_loc": "payload_locate", "pl_paus": "payload_pause",
    "pl_prs": "payload_press", "pl_ret": "payload_return_to_base", "pl_strt": "payload_start",
    "pos": "reports_position", "send_cmd_t": "send_command_topic", "set_fan_spd_t": "set_fan_speed_topic",
    "strt_mw_cmd_t": "start_mowing_command_topic", "strt_mw_cmd_tpl": "start_mowing_command_template",
    "sup_feat": "supported_features",
    "avty": "availability", "avty_mode": "availability_mode", "avty_t": "availability_topic",
    "avty_tpl": "availability_template",
    "bri_cmd_t": "brightness_command_topic", "bri_cmd_tpl": "brightness_command_template",
    "bri_scl": "brightness_scale", "bri_stat_t": "brightness_state_topic",
    "bri_val_tpl": "brightness_value_template",
    "clr_temp_k": "color_temp_kelvin", "clrm": "color_mode", "cmd_t": "command_topic", "cmd_tpl": "command_template",
    "cmps": "components",
    "curr_temp_t": "current_temperature_topic", "curr_temp_tpl": "current_temperature_template",
    "def_ent_id": "default_entity_id", "dev": "device", "dev_cla": "device_class",
    "en": "enabled_by_default", "ent_cat": "entity_category", "ic": "icon",
    "fan_mode_cmd_t": "fan_mode_command_topic", "fan_mode_cmd_tpl": "fan_mode_command_template",
    "fan_mode_stat_t": "fan_mode_state_topic", "fan_mode_stat_tpl": "fan_mode_state_template",
    "json_attr_t": "json_attributes_topic", "json_attr_tpl": "json_attributes_template",
    "max_temp": "max_temp", "min_temp": "min_temp",
    "mode_cmd_t": "mode_command_topic", "mode_cmd_tpl": "mode_command_template",
    "mode_stat_t": "mode_state_topic", "mode_stat_tpl": "mode_state_template",
    "o": "origin", "obj_id": "object_id", "on_cmd_type": "on_command_type", "opt": "optimistic",
    "p": "platform",
    "pct_cmd_t": "percentage_command_topic", "pct_cmd_tpl": "percentage_command_template",
    "pct_stat_t": "percentage_state_topic", "pct_val_tpl": "percentage_value_template",
    "pl_avail": "payload_available", "pl_cls": "payload_close", "pl_lock": "payload_lock",
    "pl_not_avail": "payload_not_available", "pl_off": "payload_off", "pl_on": "payload_on",
    "pl_open": "payload_open", "pl_stop": "payload_stop", "pl_unlk": "payload_unlock",
    "pos_clsd": "position_closed", "pos_open": "position_open",
    "pos_t": "position_topic", "pos_tpl": "position_template",
    "pow_cmd_t": "power_command_topic", "pow_cmd_tpl": "power_command_template",
    "ret": "retain",
    "rgb_cmd_t": "rgb_command_topic", "rgb_cmd_tpl": "rgb_command_template",
    "rgb_stat_t": "rgb_state_topic", "rgb_val_tpl": "rgb_value_template",
    "set_pos_t": "set_position_topic", "set_pos_tpl": "set_position_template",
    "spd_rng_max": "speed_range_max", "spd_rng_min": "speed_range_min",
    "stat_cla": "state_class", "stat_clsd": "state_closed", "stat_closing": "state_closing",
    "stat_jam": "state_jammed", "stat_locked": "state_locked", "stat_locking": "state_locking",
    "stat_off": "state_off", "stat_on": "state_on", "stat_open": "state_open",
    "stat_opening": "state_opening", "stat_stopped": "state_stopped", "stat_t": "state_topic",
    "stat_tpl": "state_template", "stat_unlocked": "state_unlocked",
    "stat_unlocking": "state_unlocking", "stat_val_tpl": "state_value_template",
    "sup_clrm": "supported_color_modes",
    "t": "topic",
    "temp_cmd_t": "temperature_command_topic", "temp_cmd_tpl": "temperature_command_template",
    "temp_stat_t": "temperature_state_topic", "temp_stat_tpl": "temperature_state_template",
    "temp_step": "temp_step", "temp_unit": "temperature_unit",
    "uniq_id": "unique_id", "unit_of_meas": "unit_of_measurement", "val_tpl": "value_template",
}
DEVICE_ABBREVIATIONS = {
    "cns": "connections", "cu": "configuration_url", "hw": "hw_version", "ids": "identifiers",
    "mdl": "model", "mdl_id": "model_id", "mf": "manufacturer", "sa": "suggested_area",
    "sn": "serial_number", "sw": "sw_version",
}
ORIGIN_ABBREVIATIONS = {"sw": "sw_version", "url": "support_url"}
# options a device-based config shares with its components unless a component sets them itself
SHARED_OPTIONS = (
    "availability", "availability_mode", "availability_template", "availability_topic",
    "command_topic", "payload_available", "payload_not_available", "state_topic",
)
DEFAULT_NAMES = {
    "binary_sensor": "MQTT Binary sensor", "climate": "MQTT HVAC", "cover": "MQTT Cover",
    "fan": "MQTT Fan", "light": "MQTT Light", "lock": "MQTT Lock", "sensor": "MQTT Sensor",
    "switch": "MQTT Switch", "button": "MQTT Button", "humidifier": "MQTT Humidifier",
    "lawn_mower": "MQTT Lawn Mower", "scene": "MQTT Scene", "vacuum": "MQTT State Vacuum",
    "valve": "MQTT Valve", "water_heater": "MQTT Water Heater",
}


@dataclass(frozen=True)
class ComponentConfig:
    """One validated component: `config` has full key names, defaults and compiled templates."""

    component: str
    discovery_id: str  # "<node_id> <object_id>" or "<object_id>", as Home Assistant forms it
    config: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        return (self.component, self.discovery_id)


# --- payload decoding -------------------------------------------------------------------------


def decode_json_object(payload: bytes) -> dict[str, Any]:
    if len(payload) > MAX_CONFIG_BYTES:
        raise DiscoveryError(f"config of {len(payload)} bytes exceeds {MAX_CONFIG_BYTES}")
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise DiscoveryError(f"config is not JSON: {err}") from None
    except RecursionError:  # deep nesting is bad input like any other, not a crash
        raise DiscoveryError("config is nested too deeply") from None
    if not isinstance(data, dict):
        raise DiscoveryError("config is not a JSON object")
    return data


def expand_abbreviations(config: dict[str, Any], component_only: bool = False) -> dict[str, Any]:
    """A copy with full key names (component, availability list, device, origin, components)."""
    expanded = {ABBREVIATIONS.get(k, k): v for k, v in config.items()}
    if isinstance(expanded.get("availability"), list):
        expanded["availability"] = [
            {ABBREVIATIONS.get(k, k): v for k, v in item.items()} if isinstance(item, dict) else item
            for item in expanded["availability"]
        ]
    if component_only:
        return expanded
    if isinstance(expanded.get("device"), dict):
        expanded["device"] = {DEVICE_ABBREVIATIONS.get(k, k): v for k, v in expanded["device"].items()}
    if isinstance(expanded.get("origin"), dict):
        expanded["origin"] = {ORIGIN_ABBREVIATIONS.get(k, k): v for k, v in expanded["origin"].items()}
    if isinstance(expanded.get("components"), dict):
        expanded["components"] = {
            cid: expand_abbreviations(c, component_only=True) if isinstance(c, dict) else c
            for cid, c in expanded["components"].items()
        }
    return expanded


def replace_topic_base(config: dict[str, Any]) -> dict[str, Any]:
    """Expand `~` at the start or end of every `*_topic` value (and availability topics)."""
    if TOPIC_BASE not in config:
        return config
    base = config[TOPIC_BASE]
    if not isinstance(base, str):
        raise DiscoveryError("'~' (base topic) must be a string")
    out = {k: v for k, v in config.items() if k != TOPIC_BASE}
    for key, value in out.items():
        if key.endswith("topic") and isinstance(value, str) and value:
            out[key] = _with_base(value, base)
    if isinstance(out.get("availability"), list):
        out["availability"] = [
            {**item, "topic": _with_base(item["topic"], base)}
            if isinstance(item, dict) and isinstance(item.get("topic"), str) and item["topic"]
            else item
            for item in out["availability"]
        ]
    return out


def _with_base(value: str, base: str) -> str:
    if value.startswith(TOPIC_BASE):
        return base + value[1:]
    if value.endswith(TOPIC_BASE):
        return value[:-1] + base
    return value


# --- whole messages ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DiscoveryMessage:
    """What one discovery topic says: components to set (validated) and to remove."""

    components: list[ComponentConfig]
    removed: list[tuple[str, str]]  # keys (component, discovery id) to drop
    rejected: list[tuple[tuple[str, str], str]]  # components that failed validation, with why


def parse_topic(prefix: str, topic: str) -> tuple[str, str | None, str] | None:
    """(component, node_id, object_id) for a discovery topic under `prefix`, else None."""
    if not topic.startswith(prefix + "/"):
        return None
    match = TOPIC_MATCHER.match(topic[len(prefix) + 1 :])
    if not match:
        return None
    return match["component"], match["node_id"], match["object_id"]


def parse_component_message(component: str, node_id: str | None, object_id: str, payload: bytes) -> DiscoveryMessage:
    discovery_id = f"{node_id} {object_id}" if node_id else object_id
    key = (component, discovery_id)
    if not payload:
        return DiscoveryMessage([], [key], [])
    config = replace_topic_base(expand_abbreviations(decode_json_object(payload)))
    try:
        validated = validate_component(component, config)
    except DiscoveryError as err:
        return DiscoveryMessage([], [], [(key, str(err))])
    return DiscoveryMessage([ComponentConfig(component, discovery_id, validated)], [], [])


def parse_device_message(
    node_id: str | None, object_id: str, payload: bytes, previous: set[tuple[str, str]]
) -> DiscoveryMessage:
    """A device-based config; `previous` are the keys this device produced before (to remove
    those it no longer lists). Raises DiscoveryError when the message as a whole is unusable."""
    if not payload:
        return DiscoveryMessage([], sorted(previous), [])
    raw = expand_abbreviations(decode_json_object(payload))
    device = raw.get("device")
    components = raw.get("components")
    if not isinstance(device, dict):
        raise DiscoveryError("device config without a 'dev'/'device' object")
    if not isinstance(components, dict) or not components:
        raise DiscoveryError("device config without a 'cmps'/'components' object")
    if len(components) > 256:
        raise DiscoveryError("device config with more than 256 components")
    shared = {k: raw[k] for k in SHARED_OPTIONS if k in raw}
    base = raw.get(TOPIC_BASE)
    found: list[ComponentConfig] = []
    rejected: list[tuple[tuple[str, str], str]] = []
    listed: set[tuple[str, str]] = set()
    for component_id, config in components.items():
        if not isinstance(config, dict) or not isinstance(config.get("platform"), str):
            rejected.append((("?", f"{object_id} {component_id}"), "component without a 'p'/'platform'"))
            continue
        component = config["platform"]
        discovery_id = f"{object_id} {node_id} {component_id}" if node_id else f"{object_id} {component_id}"
        key = (component, discovery_id)
        body = {k: v for k, v in config.items() if k != "platform"}
        if not body or component not in SUPPORTED_COMPONENTS:
            continue  # an empty component removes it; unsupported ones are not the hub's business
        listed.add(key)
        merged = {**shared, **body, "device": device}
        if base is not None and TOPIC_BASE not in merged:
            merged[TOPIC_BASE] = base
        try:
            validated = validate_component(component, replace_topic_base(merged))
        except DiscoveryError as err:
            rejected.append((key, str(err)))
            continue
        found.append(ComponentConfig(component, discovery_id, validated))
    removed = sorted(previous - listed)
    return DiscoveryMessage(found, removed, rejected)


# --- naming -----------------------------------------------------------------------------------


def friendly_name(component: str, config: dict[str, Any]) -> str:
    """Home Assistant's naming: device name + entity name; `name: null` means the device name."""
    device_name = (config.get("device") or {}).get("name")
    if "name" in config:
        entity_name = config["name"]
    else:
        entity_name = None if device_name else DEFAULT_NAMES[component]
    if device_name and entity_name:
        return f"{device_name} {entity_name}"
    return entity_name or device_name or DEFAULT_NAMES[component]


def object_slug(component: str, config: dict[str, Any]) -> str:
    """The object part of the entity id, as Home Assistant would derive it."""
    default_entity_id = config.get("default_entity_id")
    if default_entity_id and "." in default_entity_id:
        return slugify(default_entity_id.split(".", 1)[1])
    if config.get("object_id"):
        return slugify(config["object_id"])
    return slugify(friendly_name(component, config))


def device_identifiers(config: dict[str, Any]) -> tuple[str, ...]:
    device = config.get("device") or {}
    ids = [str(i) for i in device.get("identifiers", [])]
    ids += [f"{kind}:{value}" for kind, value in device.get("connections", [])]
    return tuple(ids)
