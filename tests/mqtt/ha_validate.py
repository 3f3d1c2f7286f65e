"""Validate MQTT discovery payloads and blueprints with Home Assistant's own schemas.

Runs under the Home Assistant venv (Python 3.13, HA 2025.4), not the hub's: the hub's tests
call it as a subprocess. Input on stdin (JSON):
  {"discovery": [[topic, payload], ...], "blueprints": [{"path": ..., "inputs": {...}}, ...]}
Output on stdout (JSON): {"errors": [str, ...], "checked": [str, ...]}.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import traceback
from typing import Any

import voluptuous as vol

from homeassistant.components.mqtt import discovery as ha_discovery
from homeassistant.components.mqtt.schemas import DEVICE_DISCOVERY_SCHEMA, SHARED_OPTIONS

PLATFORM_MODULES = {
    "binary_sensor": "binary_sensor", "button": "button", "climate": "climate", "cover": "cover",
    "event": "event", "fan": "fan", "light": "light", "lock": "lock", "number": "number",
    "select": "select", "sensor": "sensor", "switch": "switch", "text": "text",
    "humidifier": "humidifier", "lawn_mower": "lawn_mower", "scene": "scene", "vacuum": "vacuum",
    "valve": "valve", "water_heater": "water_heater",
}


def platform_schema(component: str) -> Any:
    if component == "device_automation":
        return importlib.import_module("homeassistant.components.mqtt.device_trigger").TRIGGER_DISCOVERY_SCHEMA
    module = importlib.import_module(f"homeassistant.components.mqtt.{PLATFORM_MODULES[component]}")
    return module.DISCOVERY_SCHEMA


def validate_discovery(topic: str, payload: dict[str, Any], errors: list[str], checked: list[str]) -> None:
    parts = topic.split("/")
    component = parts[1]
    data = ha_discovery.MQTTDiscoveryPayload(json.loads(json.dumps(payload)))
    ha_discovery._replace_all_abbreviations(data)
    if component == "device":
        try:
            DEVICE_DISCOVERY_SCHEMA(data)
        except vol.Invalid as err:
            errors.append(f"{topic}: device config: {err}")
            return
        for component_id, config in data["components"].items():
            config = dict(config)
            platform = config.pop("platform")
            merged = ha_discovery.MQTTDiscoveryPayload(config)
            merged["device"] = data["device"]
            merged["origin"] = data["origin"]
            for option in SHARED_OPTIONS:
                if option in data and option not in merged:
                    merged[option] = data[option]
            check_component(f"{topic}#{component_id}", platform, merged, errors, checked)
    else:
        check_component(topic, component, data, errors, checked)


def check_component(where: str, component: str, config: dict[str, Any], errors: list[str], checked: list[str]) -> None:
    if "~" in config:
        ha_discovery._replace_topic_base(config)
    try:
        platform_schema(component)(dict(config))
    except (vol.Invalid, KeyError) as err:
        errors.append(f"{where} ({component}): {err}")
        return
    checked.append(f"{where} ({component})")


def validate_blueprint(path: str, inputs: dict[str, Any], errors: list[str], checked: list[str]) -> None:
    from homeassistant.components.automation.config import AUTOMATION_BLUEPRINT_SCHEMA, PLATFORM_SCHEMA
    from homeassistant.components.blueprint.models import Blueprint, BlueprintInputs
    from homeassistant.util.yaml import load_yaml

    try:
        blueprint = Blueprint(load_yaml(path), path=path, expected_domain="automation", schema=AUTOMATION_BLUEPRINT_SCHEMA)
    except Exception as err:
        errors.append(f"{path}: not a valid automation blueprint: {err}")
        return
    missing = set(blueprint.inputs) - set(inputs) - {k for k, v in blueprint.inputs.items() if v and "default" in v}
    if missing:
        errors.append(f"{path}: the test gives no value for inputs {sorted(missing)}")
        return
    try:
        instance = BlueprintInputs(blueprint, {"use_blueprint": {"path": path, "input": inputs}})
        instance.validate()
        config = instance.async_substitute()
        PLATFORM_SCHEMA(config)
    except Exception as err:
        errors.append(f"{path}: an automation made from it is invalid: {err}")
        return
    checked.append(path)


async def validate_all(request: dict[str, Any]) -> dict[str, Any]:
    """Inside a bare HomeAssistant object: HA's template validator wants one to exist."""
    import tempfile

    from homeassistant.core import HomeAssistant
    from homeassistant.helpers import frame

    errors: list[str] = []
    checked: list[str] = []
    hass = HomeAssistant(tempfile.mkdtemp())
    frame.async_setup(hass)
    try:
        for topic, payload in request.get("discovery", []):
            validate_discovery(topic, payload, errors, checked)
        for item in request.get("blueprints", []):
            validate_blueprint(item["path"], item["inputs"], errors, checked)
    except Exception:
        errors.append(traceback.format_exc())
    finally:
        await hass.async_stop(force=True)
    return {"errors": errors, "checked": checked}


def main() -> None:
    request = json.load(sys.stdin)
    json.dump(asyncio.run(validate_all(request)), sys.stdout)


if __name__ == "__main__":
    main()
