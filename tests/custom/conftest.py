"""Broker fixtures for the custom-tools tests: a real mosquitto per test and wire sniffers on it
(the same as tests/mqtt's, which pytest does not share across folders)."""

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
