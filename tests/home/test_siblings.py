"""A device's own entity before its siblings (issue #40 point 1): `hub.home.siblings.primary`."""

from __future__ import annotations

from hub.home.entities import Entity
from hub.home.siblings import of_kinds, primary


def part(entity_id: str, name: str, device: str | None = "curtain", category: str | None = None) -> Entity:
    return Entity(entity_id, name, device_id=device, entity_category=category)


CURTAIN = part("cover.smart_curtain", "Smart Curtain")
BATTERY = part("sensor.smart_curtain_battery", "Smart Curtain Battery", category="diagnostic")
LIGHT_LEVEL = part("sensor.smart_curtain_illuminance", "Smart Curtain Illuminance")  # a measurement: no category
CALIBRATE = part("button.smart_curtain_calibrate", "Smart Curtain Calibrate", category="config")


def test_the_device_before_its_diagnostics_settings_and_measurements() -> None:
    assert primary([BATTERY, CURTAIN, LIGHT_LEVEL, CALIBRATE]) == [CURTAIN]
    # the device's own entity not among them: its settings and diagnostics stay, those named alike stay
    assert primary([BATTERY, CALIBRATE]) == [BATTERY, CALIBRATE]
    assert primary([LIGHT_LEVEL, CALIBRATE]) == [LIGHT_LEVEL]


def test_other_devices_and_entities_without_a_device_are_kept() -> None:
    other = part("cover.kitchen_blind", "Kitchen Blind", device="blind")
    loose = part("light.smart_curtain_light", "Smart Curtain Light", device=None)
    assert primary([CURTAIN, other, loose, BATTERY]) == [CURTAIN, other, loose]
    # two devices named alike: both kept (a question names them)
    twin = part("cover.smart_curtain_2", "Smart Curtain", device="curtain2")
    assert primary([CURTAIN, twin]) == [CURTAIN, twin]


def test_of_kinds() -> None:
    assert of_kinds([CURTAIN, BATTERY, CALIBRATE], {"cover", "button"}) == [CURTAIN, CALIBRATE]
