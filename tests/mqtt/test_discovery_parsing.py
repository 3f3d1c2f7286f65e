"""Pure parsing of MQTT discovery messages and templates (no broker)."""

from __future__ import annotations

import json

import pytest

from hub.backends.mqtt.discovery import (
    DiscoveryError,
    expand_abbreviations,
    friendly_name,
    object_slug,
    parse_component_message,
    parse_device_message,
    parse_topic,
    replace_topic_base,
)
from hub.backends.mqtt.templates import MqttTemplate, MqttTemplateError
from hub.backends.mqtt.tracked import TrackedEntity


def test_topics():
    assert parse_topic("homeassistant", "homeassistant/light/node/obj/config") == ("light", "node", "obj")
    assert parse_topic("homeassistant", "homeassistant/light/obj/config") == ("light", None, "obj")
    assert parse_topic("homeassistant", "homeassistant/device/dev1/config") == ("device", None, "dev1")
    assert parse_topic("homeassistant", "homeassistant/light/bad id/config") is None
    assert parse_topic("homeassistant", "other/light/obj/config") is None


def test_abbreviations_and_base_topic():
    raw = {"~": "home/x", "cmd_t": "~/set", "stat_t": "state/~", "avty": [{"t": "~/avail"}], "dev": {"ids": "a", "sa": "Hall"}}
    config = replace_topic_base(expand_abbreviations(raw))
    assert config["command_topic"] == "home/x/set"
    assert config["state_topic"] == "state/home/x"
    assert config["availability"] == [{"topic": "home/x/avail"}]
    assert config["device"] == {"identifiers": "a", "suggested_area": "Hall"}
    assert "~" not in config


def test_component_message_defaults_and_rejections():
    result = parse_component_message("switch", "n", "o", json.dumps({"name": "S", "cmd_t": "a/set"}).encode())
    (spec,) = result.components
    assert spec.key == ("switch", "n o")
    assert (spec.config["payload_on"], spec.config["payload_off"], spec.config["qos"]) == ("ON", "OFF", 0)
    assert parse_component_message("switch", None, "o", b"").removed == [("switch", "o")]
    bad = parse_component_message("switch", None, "o", json.dumps({"name": "S"}).encode())
    assert not bad.components and "command_topic" in bad.rejected[0][1]
    with pytest.raises(DiscoveryError, match="not JSON"):
        parse_component_message("switch", None, "o", b"\xff\xfe")
    # booleans are not payloads (HA would stringify them to "True", which no device sends)
    bad = parse_component_message("switch", None, "o", json.dumps({"cmd_t": "a", "pl_on": True}).encode())
    assert bad.rejected


def test_device_message_shares_options_and_builds_ha_discovery_ids():
    payload = json.dumps(
        {"dev": {"ids": "d1", "name": "Dev"}, "o": {"name": "x"}, "cmd_t": "d/set", "~": "d",
         "cmps": {"a": {"p": "switch", "stat_t": "~/a"}, "b": {"p": "light", "name": "B"}, "c": {"p": "update"}}}
    ).encode()
    result = parse_device_message(None, "d1", payload, previous={("sensor", "d1 old")})
    keys = {c.key for c in result.components}
    assert keys == {("switch", "d1 a"), ("light", "d1 b")}
    switch = next(c for c in result.components if c.component == "switch")
    assert switch.config["command_topic"] == "d/set" and switch.config["state_topic"] == "d/a"
    assert result.removed == [("sensor", "d1 old")]
    with pytest.raises(DiscoveryError):
        parse_device_message(None, "d1", json.dumps({"dev": {"ids": "x"}}).encode(), set())


def test_a_devices_battery_keeps_its_entity_category():
    """Issue #40: the device's battery says it is a diagnostic, the device itself nothing."""
    payload = json.dumps(
        {"dev": {"ids": "v1", "name": "Irrigation Valve"}, "o": {"name": "x"},
         "cmps": {"valve": {"p": "valve", "name": None, "cmd_t": "v/set"},
                  "battery": {"p": "sensor", "name": "Battery", "stat_t": "v/bat", "ent_cat": "diagnostic"}}}
    ).encode()
    specs = {c.component: c for c in parse_device_message(None, "v1", payload, set()).components}
    entities = {k: TrackedEntity(spec=s, entity_id=f"{k}.x", name=friendly_name(k, s.config)).to_entity()
                for k, s in specs.items()}
    assert (entities["sensor"].name, entities["sensor"].entity_category) == ("Irrigation Valve Battery", "diagnostic")
    assert (entities["valve"].name, entities["valve"].entity_category) == ("Irrigation Valve", None)
    assert entities["sensor"].device_id == entities["valve"].device_id == "v1"


def test_names_follow_home_assistant():
    assert friendly_name("light", {"device": {"name": "Desk Lamp"}, "name": None}) == "Desk Lamp"
    assert friendly_name("light", {"device": {"name": "Desk Lamp"}, "name": "Top"}) == "Desk Lamp Top"
    assert friendly_name("light", {"name": "Küche"}) == "Küche"
    assert friendly_name("light", {}) == "MQTT Light"
    assert object_slug("light", {"name": "Küche Decke"}) == "kuche_decke"
    assert object_slug("light", {"name": "x", "object_id": "My Obj"}) == "my_obj"
    assert object_slug("light", {"name": "x", "default_entity_id": "light.chosen"}) == "chosen"


def test_templates_render_common_forms_and_refuse_the_rest():
    assert MqttTemplate("{{ value_json.state }}").render('{"state": "ON"}') == "ON"
    assert MqttTemplate("{{ value_json['a b'] | int }}").render('{"a b": "7"}') == "7"
    assert MqttTemplate("{{ value_json.t | float | round(1) }}").render('{"t": 21.456}') == "21.5"
    assert MqttTemplate("{{ 'ON' if value_json.on else 'OFF' }}").render('{"on": false}') == "OFF"
    assert MqttTemplate("{{ value | upper }}").render("on") == "ON"
    assert MqttTemplate("{{ value_json.x | default('none') }}").render("{}") == "none"
    with pytest.raises(MqttTemplateError):
        MqttTemplate("{{ value_json.missing }}").render("{}")
    with pytest.raises(MqttTemplateError):
        MqttTemplate("{{ states('sensor.x') }}").render("1")
    with pytest.raises(MqttTemplateError):
        MqttTemplate("{{ value.__class__.__mro__ }}").render("x")
    with pytest.raises(MqttTemplateError):
        MqttTemplate("{{ value_json. }")
    with pytest.raises(MqttTemplateError):
        MqttTemplate("x" * 3000)
