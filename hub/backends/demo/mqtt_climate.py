"""The demo home's climate devices: a thermostat with its humidity sensor (one device-based
discovery config with `cmps`) and an outdoor weather station; their state is JSON that value
templates read."""

from __future__ import annotations

from typing import Any

from hub.backends.demo.mqtt_devices import AVAILABILITY, BASE, ORIGIN, DemoDevice, DemoHost, device_info


class Thermostat(DemoDevice):
    """A thermostat and a humidity sensor as one device (device-based discovery with `cmps`)."""

    MODES = ["off", "heat", "cool", "auto"]
    FAN_MODES = ["auto", "low", "medium", "high"]

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home)
        self.key, self.name, self.area = key, name, area
        self.mode, self.target, self.current, self.humidity = "heat", 21.0, 20.5, 45
        self.fan_mode = "auto"

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        t = self.topic
        return [
            (
                f"device/{BASE}_{self.key}",
                {
                    "dev": device_info(self.key, self.name, self.area, "Thermostat"),
                    "o": ORIGIN,
                    "avty_t": AVAILABILITY,
                    "cmps": {
                        "climate": {
                            "p": "climate",
                            "name": None,
                            "uniq_id": f"{BASE}_{self.key}_climate",
                            "mode_cmd_t": f"{t}/mode/set",
                            "mode_stat_t": f"{t}/state",
                            "mode_stat_tpl": "{{ value_json.mode }}",
                            "modes": self.MODES,
                            "temp_cmd_t": f"{t}/target/set",
                            "temp_stat_t": f"{t}/state",
                            "temp_stat_tpl": "{{ value_json.target }}",
                            "curr_temp_t": f"{t}/state",
                            "curr_temp_tpl": "{{ value_json.current }}",
                            "min_temp": 10,
                            "max_temp": 28,
                            "temp_step": 0.5,
                            "fan_mode_cmd_t": f"{t}/fan_mode/set",
                            "fan_mode_stat_t": f"{t}/state",
                            "fan_mode_stat_tpl": "{{ value_json.fan_mode }}",
                            "fan_modes": self.FAN_MODES,
                        },
                        "humidity": {
                            "p": "sensor",
                            "name": "Humidity",
                            "uniq_id": f"{BASE}_{self.key}_humidity",
                            "dev_cla": "humidity",
                            "unit_of_meas": "%",
                            "stat_t": f"{t}/state",
                            "val_tpl": "{{ value_json.humidity }}",
                        },
                    },
                },
            )
        ]

    def command_topics(self) -> list[str]:
        return [f"{self.topic}/mode/set", f"{self.topic}/target/set", f"{self.topic}/fan_mode/set"]

    async def on_command(self, topic: str, payload: str) -> None:
        if topic.endswith("/mode/set"):
            if payload not in self.MODES:
                raise ValueError(f"unknown mode {payload!r}")
            self.mode = payload
        elif topic.endswith("/fan_mode/set"):
            if payload not in self.FAN_MODES:
                raise ValueError(f"unknown fan mode {payload!r}")
            self.fan_mode = payload
        else:
            target = float(payload)
            if not 10 <= target <= 28:
                raise ValueError(f"target {target} out of 10–28")
            self.target = target
        self.publish_state()

    def publish_state(self) -> None:
        self._publish("state", {"mode": self.mode, "target": self.target, "current": self.current,
                                "humidity": self.humidity, "fan_mode": self.fan_mode})


class WeatherSensor(DemoDevice):
    """Outdoor temperature (sensor) and rain (binary sensor); read-only."""

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home)
        self.key, self.name, self.area = key, name, area
        self.temperature, self.raining = 12.5, False

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        device = device_info(self.key, self.name, self.area, "Weather station")
        return [
            (
                f"sensor/{BASE}/{self.key}_temperature",
                {
                    "name": "Temperature",
                    "uniq_id": f"{BASE}_{self.key}_temperature",
                    "dev_cla": "temperature",
                    "unit_of_meas": "°C",
                    "stat_t": f"{self.topic}/state",
                    "val_tpl": "{{ value_json.temperature }}",
                    "avty_t": AVAILABILITY,
                    "dev": device,
                    "o": ORIGIN,
                },
            ),
            (
                f"binary_sensor/{BASE}/{self.key}_rain",
                {
                    "name": "Rain",
                    "uniq_id": f"{BASE}_{self.key}_rain",
                    "dev_cla": "moisture",
                    "stat_t": f"{self.topic}/state",
                    "val_tpl": "{{ 'ON' if value_json.rain else 'OFF' }}",
                    "avty_t": AVAILABILITY,
                    "dev": device,
                    "o": ORIGIN,
                },
            ),
        ]

    def command_topics(self) -> list[str]:
        return []

    def publish_state(self) -> None:
        self._publish("state", {"temperature": self.temperature, "rain": self.raining})
