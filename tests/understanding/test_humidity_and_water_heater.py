"""A humidifier's humidity and a water heater's temperature on the fast path: HA has the intent
(HassHumidifierSetpoint) or the handler but no template, so the hub's own templates
(hub/locales/sentences/) carry them; "set the temperature" with no name still means the
thermostat, never the water heater. End to end through a real Home Assistant:
tests/ha/test_e2e_devices.py."""

from __future__ import annotations

import pytest

from hub.home.entities import Entity, EntityStore

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine
from understanding.harness import RecordingBackend

HUMIDIFIER, HEATER, THERMOSTAT = "humidifier.humidifier", "water_heater.boiler", "climate.thermostat"
SAID = {
    "en": ("set the humidifier to 40%", "set the boiler to 50 degrees", "set the temperature to 21 degrees"),
    "de": ("Stelle den Humidifier auf 40 Prozent", "Stelle den Boiler auf 50 Grad", "Stelle die Heizung auf 21 Grad"),
    "fr": ("Règle l'humidité du Humidifier à 40 %", "Règle la température du Boiler à 50 degrés",
           "Règle la température à 21 degrés"),
}


def home() -> tuple[EntityStore, RecordingBackend]:
    store = EntityStore()
    backend = RecordingBackend(store)
    store.register_backend("demo", backend)
    store.upsert(Entity(HUMIDIFIER, "Humidifier", "on", source="demo",
                        attributes={"humidity": 68, "min_humidity": 0, "max_humidity": 100}))
    store.upsert(Entity(HEATER, "Boiler", "eco", source="demo",
                        attributes={"temperature": 45, "min_temp": 30, "max_temp": 70}))
    store.upsert(Entity(THERMOSTAT, "Thermostat", "heat", source="demo",
                        attributes={"temperature": 19, "min_temp": 7, "max_temp": 30}))
    return store, backend


@pytest.mark.parametrize("language", list(SAID))
async def test_humidity_and_water_heater_temperature_on_the_fast_path(tmp_path, language: str) -> None:
    store, backend = home()
    hub = TestHub(tmp_path, ScriptedEngine([]), demo_home=False, store=store, fast_path=True)
    humidity, heater, temperature = SAID[language]
    for said, entity_id, key, value in ((humidity, HUMIDIFIER, "humidity", 40), (heater, HEATER, "temperature", 50),
                                        (temperature, THERMOSTAT, "temperature", 21)):
        result = await hub.ask(said, conversation_id=said, language=language)
        assert result.path == "fast_path", (said, result.reply)
        assert store.get(entity_id).attributes[key] == value, (said, result.reply)
    assert [call[0] for call in backend.calls] == [HUMIDIFIER, HEATER, THERMOSTAT]
