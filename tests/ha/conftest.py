"""A real Home Assistant core (2025.4.4) for the HA tests, started once per session."""

from __future__ import annotations

from typing import Iterator

import pytest

from ha.ha_harness import ENTITY_PLACEMENT, HomeAssistantInstance
from mqtt.mqtt_helpers import Mosquitto


@pytest.fixture(scope="session")
def home_assistant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeAssistantInstance]:
    """HA on 127.0.0.1 with an owner, a long-lived token, areas and the test home."""
    instance = HomeAssistantInstance(tmp_path_factory.mktemp("home-assistant"))
    instance.start()
    yield instance
    instance.stop()


@pytest.fixture
async def ha(home_assistant: HomeAssistantInstance) -> HomeAssistantInstance:
    """The session's HA, running, with every test device switched off."""
    if home_assistant.process is None or home_assistant.process.poll() is not None:
        home_assistant.start()
    powers = [f"input_boolean.{e.split('.', 1)[1]}_power" for e in ENTITY_PLACEMENT if e.startswith(("light.", "switch."))]
    await home_assistant.call_service("input_boolean", "turn_off", entity_id=powers)
    return home_assistant


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """A mosquitto of the module's own, for the tests that bring MQTT devices to their HA."""
    mosquitto = Mosquitto(tmp_path_factory.mktemp("mosquitto"))
    mosquitto.start()
    yield mosquitto
    mosquitto.stop()
