"""Broker fixtures shared by the test folders that need MQTT: a real mosquitto per test and wire
sniffers on it. A folder's conftest imports them (pytest does not share fixtures across folders)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mqtt.mqtt_helpers import Mosquitto, Sniffer


@pytest.fixture
def mosquitto(tmp_path: Path):
    broker = Mosquitto(tmp_path)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def sniffer_factory(mosquitto):
    made: list[Sniffer] = []

    def make(topics: list[str], **kwargs: Any) -> Sniffer:
        sniffer = Sniffer(mosquitto.port, topics, **kwargs)
        made.append(sniffer)
        return sniffer

    yield make
    for sniffer in made:
        sniffer.close()
