"""A real mosquitto per test (loopback, free port, temp config), reusing the MQTT tests' helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from mqtt.mqtt_helpers import Mosquitto


@pytest.fixture
def mosquitto(tmp_path: Path):
    workdir = tmp_path / "broker"
    workdir.mkdir()
    broker = Mosquitto(workdir)
    broker.start()
    yield broker
    broker.stop()
