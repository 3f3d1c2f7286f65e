"""Fixtures: a real mosquitto per test (started and stopped here) and wire sniffers on it."""

from mqtt.mqtt_fixtures import mosquitto, sniffer_factory  # noqa: F401
