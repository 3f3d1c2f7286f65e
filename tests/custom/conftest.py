"""Fixtures for the custom-tools tests: the shared broker fixtures, a client, reports, setups."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from hub.home.entities import EntityStore
from hub.home.later import Report, Reporter
from hub.custom.loader import CustomSetup, ToolDeps, load_custom_file
from hub.home.policy import ActionPolicy
from hub.transport.mqtt_client import BrokerSettings, MqttClient
from mqtt.mqtt_fixtures import mosquitto, sniffer_factory  # noqa: F401


@pytest.fixture
async def mqtt_client(mosquitto):
    """The hub's own MQTT client, connected to the test broker."""
    client = MqttClient(BrokerSettings("127.0.0.1", mosquitto.port), birth_topic=None)
    await client.start(wait=10)
    assert client.connected
    yield client
    await client.stop()


@pytest.fixture
def reports() -> list[Report]:
    """What a real Reporter delivered to its sinks."""
    return []


@pytest.fixture
def make_setup(tmp_path: Path, reports: list[Report]) -> Callable[..., CustomSetup]:
    """Write YAML to a file and load it with the given parts (MQTT client, HA, policy, secrets)."""

    def make(text: str, *, mqtt: Any = None, ha: Any = None, policy: ActionPolicy | None = None,
             secrets: dict[str, str] | None = None, language: str = "en",
             entities: EntityStore | None = None) -> CustomSetup:
        path = tmp_path / "custom.yaml"
        path.write_text(text, encoding="utf-8")
        deps = ToolDeps(secrets=secrets or {}, mqtt=mqtt, home_assistant=ha,
                        policy=policy or ActionPolicy(), reporter=Reporter(sinks=(reports.append,)),
                        entities=entities if entities is not None else EntityStore(), language=language)
        return load_custom_file(path, deps)

    return make


def tool_of(setup: CustomSetup, name: str):
    return next(t for t in setup.tools if t.spec.name == name)
