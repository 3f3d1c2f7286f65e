"""HassClimateSetFanMode over real MQTT (issue #27): the MQTT demo thermostat announces its fan
modes (`fan_mode_command_topic`, `fan_modes`, a fan mode in its JSON state) as Home Assistant's
MQTT climate reads them; "set the fan mode to high" in en and de, through the fast path, makes
the hub publish the mode, and the thermostat, a separate MQTT client, reports it back."""

from __future__ import annotations

import pytest

from hub.core.tools import ToolContext
from hub.home.entities import BackendError
from hub.home.resolve import EntityResolver
from hub.understanding.fast_path import FastPath
from mqtt.mqtt_helpers import eventually
from mqtt.test_tools_on_mqtt import home as mqtt_home  # noqa: F401  (the MQTT demo home, tools on it)

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("text, language, mode", [
    ("set the fan mode to high", "en", "high"),
    ("set the living room fan mode to low", "en", "low"),
    ("Setze den Lüftermodus auf mittel", "de", "medium"),
])
async def test_the_thermostats_fan_mode_over_mqtt(mqtt_home, sniffer_factory, text, language, mode) -> None:
    store, registry, demo = mqtt_home
    await eventually(lambda: store.get("climate.thermostat").attributes.get("fan_mode") == "auto")
    assert store.get("climate.thermostat").attributes["fan_modes"] == ["auto", "low", "medium", "high"]
    sniffer = sniffer_factory(["bolt_demo/thermostat/#"])
    fast_path = FastPath(store, registry, EntityResolver(store))
    outcome = await fast_path.try_handle(text, language, ToolContext("t", language=language))
    assert outcome is not None and outcome.intent == "HassClimateSetFanMode", text
    assert [(c.name, c.arguments) for c in outcome.calls] == [
        ("set_fan_mode", {"entity_id": "climate.thermostat", "fan_mode": mode})]
    assert await sniffer.wait_for("bolt_demo/thermostat/fan_mode/set") == mode.encode()
    await eventually(lambda: store.get("climate.thermostat").attributes.get("fan_mode") == mode)
    assert demo.device("thermostat").fan_mode == mode and outcome.results[0].ok


async def test_a_fan_mode_the_thermostat_lacks_is_never_sent(mqtt_home, sniffer_factory) -> None:
    store, _, _ = mqtt_home
    await eventually(lambda: "fan_modes" in store.get("climate.thermostat").attributes)
    sniffer = sniffer_factory(["bolt_demo/thermostat/#"])
    entity = store.get("climate.thermostat")
    with pytest.raises(BackendError, match="no fan mode"):
        await store.backend_for(entity).call_service(entity, "set_fan_mode", {"fan_mode": "turbo"})
    assert not [m for m in sniffer.messages if m[0].endswith("/fan_mode/set")]
