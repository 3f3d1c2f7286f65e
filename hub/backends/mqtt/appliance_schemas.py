"""The appliances' component configs, as Home Assistant's MQTT integration reads them (2025.4's
`components/mqtt/<platform>.py`): valve, vacuum (the state schema), lawn_mower, scene,
humidifier, water_heater and button. Pure, no I/O; `schemas` validates with them.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from hub.backends.mqtt.schema_base import (
    INT,
    NUMBER,
    ON_OFF,
    DiscoveryError,
    component_schema,
    ensure_list,
    payload,
    publish_topic,
    string,
    subscribe_topic,
    template,
)

_MODES = vol.All(ensure_list, [string], vol.Length(max=32))
# a vacuum's `supported_features` (HA's names) and the ones it has when the config lists none
VACUUM_FEATURES = ("start", "stop", "pause", "return_home", "battery", "status", "locate",
                   "clean_spot", "fan_speed", "send_command")
VACUUM_DEFAULT_FEATURES = ["start", "stop", "return_home", "battery", "clean_spot"]
WATER_HEATER_MODES = ["eco", "electric", "gas", "heat_pump", "high_demand", "performance", "off"]

VALVE = component_schema({
    vol.Optional("command_topic"): publish_topic,
    vol.Optional("command_template"): template,
    vol.Optional("state_topic"): subscribe_topic,
    vol.Optional("value_template"): template,
    vol.Optional("payload_open"): vol.Any(None, payload),
    vol.Optional("payload_close"): vol.Any(None, payload),
    vol.Optional("payload_stop"): vol.Any(None, payload),
    vol.Optional("state_open"): payload,
    vol.Optional("state_opening", default="opening"): payload,
    vol.Optional("state_closed"): payload,
    vol.Optional("state_closing", default="closing"): payload,
    vol.Optional("reports_position", default=False): vol.Boolean(),
    vol.Optional("position_open", default=100): INT,
    vol.Optional("position_closed", default=0): INT,
})
VACUUM = component_schema({
    vol.Optional("command_topic"): publish_topic,
    vol.Optional("state_topic"): subscribe_topic,
    vol.Optional("send_command_topic"): publish_topic,
    vol.Optional("set_fan_speed_topic"): publish_topic,
    vol.Optional("fan_speed_list", default=list): _MODES,
    vol.Optional("supported_features", default=lambda: list(VACUUM_DEFAULT_FEATURES)):
        vol.All(ensure_list, [vol.In(VACUUM_FEATURES)]),
    vol.Optional("payload_start", default="start"): payload,
    vol.Optional("payload_stop", default="stop"): payload,
    vol.Optional("payload_pause", default="pause"): payload,
    vol.Optional("payload_return_to_base", default="return_to_base"): payload,
    vol.Optional("payload_clean_spot", default="clean_spot"): payload,
    vol.Optional("payload_locate", default="locate"): payload,
})
LAWN_MOWER = component_schema({
    vol.Optional("activity_state_topic"): subscribe_topic,
    vol.Optional("activity_value_template"): template,
    **{vol.Optional(f"{command}_command_topic"): publish_topic for command in ("start_mowing", "pause", "dock")},
    **{vol.Optional(f"{command}_command_template"): template for command in ("start_mowing", "pause", "dock")},
})
SCENE = component_schema({
    vol.Required("command_topic"): publish_topic,
    vol.Optional("payload_on", default="ON"): payload,
})
BUTTON = component_schema({
    vol.Required("command_topic"): publish_topic,
    vol.Optional("command_template"): template,
    vol.Optional("payload_press", default="PRESS"): payload,
})
HUMIDIFIER = component_schema({
    vol.Required("command_topic"): publish_topic,
    vol.Optional("command_template"): template,
    vol.Optional("state_topic"): subscribe_topic,
    vol.Optional("state_value_template"): template,
    **ON_OFF,
    vol.Required("target_humidity_command_topic"): publish_topic,
    vol.Optional("target_humidity_command_template"): template,
    vol.Optional("target_humidity_state_topic"): subscribe_topic,
    vol.Optional("target_humidity_state_template"): template,
    vol.Optional("current_humidity_topic"): subscribe_topic,
    vol.Optional("current_humidity_template"): template,
    vol.Optional("mode_command_topic"): publish_topic,
    vol.Optional("mode_command_template"): template,
    vol.Optional("mode_state_topic"): subscribe_topic,
    vol.Optional("mode_state_template"): template,
    vol.Optional("modes", default=list): _MODES,
    vol.Optional("action_topic"): subscribe_topic,
    vol.Optional("action_template"): template,
    vol.Optional("min_humidity", default=0): NUMBER,
    vol.Optional("max_humidity", default=100): NUMBER,
})
WATER_HEATER = component_schema({
    vol.Optional("mode_command_topic"): publish_topic,
    vol.Optional("mode_command_template"): template,
    vol.Optional("mode_state_topic"): subscribe_topic,
    vol.Optional("mode_state_template"): template,
    vol.Optional("modes", default=lambda: list(WATER_HEATER_MODES)): _MODES,
    vol.Optional("temperature_command_topic"): publish_topic,
    vol.Optional("temperature_command_template"): template,
    vol.Optional("temperature_state_topic"): subscribe_topic,
    vol.Optional("temperature_state_template"): template,
    vol.Optional("current_temperature_topic"): subscribe_topic,
    vol.Optional("current_temperature_template"): template,
    vol.Optional("power_command_topic"): publish_topic,
    vol.Optional("power_command_template"): template,
    **ON_OFF,
    vol.Optional("min_temp"): NUMBER,
    vol.Optional("max_temp"): NUMBER,
    vol.Optional("temperature_unit"): vol.Any(None, vol.In(["C", "F"])),
})
APPLIANCE_SCHEMAS: dict[str, vol.Schema] = {
    "valve": VALVE, "vacuum": VACUUM, "lawn_mower": LAWN_MOWER, "scene": SCENE, "button": BUTTON,
    "humidifier": HUMIDIFIER, "water_heater": WATER_HEATER,
}


def check_appliance(component: str, config: dict[str, Any]) -> None:
    """What one field cannot say alone (HA's checks), and the defaults that depend on another
    field: a valve that reports its position has no open/closed payloads; a water heater's
    range is HA's 110–140 °F (43.3–60 °C) when the config gives none."""
    if component == "valve":
        if config["reports_position"] and any(
                key in config for key in ("payload_open", "payload_close", "state_open", "state_closed")):
            raise DiscoveryError("a valve that reports its position has no payload_open, payload_close, "
                                 "state_open or state_closed")
        if not config["reports_position"]:
            for key, default in (("payload_open", "OPEN"), ("payload_close", "CLOSE"),
                                 ("state_open", "open"), ("state_closed", "closed")):
                config.setdefault(key, default)
    elif component == "water_heater":
        fahrenheit = config.get("temperature_unit") == "F"
        config.setdefault("min_temp", 110.0 if fahrenheit else 43.3)
        config.setdefault("max_temp", 140.0 if fahrenheit else 60.0)
        if config["min_temp"] > config["max_temp"]:
            raise DiscoveryError("min_temp is above max_temp")
    elif component == "humidifier" and config["min_humidity"] > config["max_humidity"]:
        raise DiscoveryError("min_humidity is above max_humidity")
