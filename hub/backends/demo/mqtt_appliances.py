"""The demo home's appliances: an irrigation valve and a robot vacuum, announced with Home
Assistant's MQTT valve and (state) vacuum schemas."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hub.backends.demo.mqtt_devices import AVAILABILITY, BASE, ORIGIN, DemoDevice, DemoHost
from hub.backends.demo.mqtt_devices import device_info


class Valve(DemoDevice):
    """A valve that opens and closes (OPEN/CLOSE on `~/set`, "open"/"closed" on `~/state`)."""

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home)
        self.key, self.name, self.area = key, name, area
        self.open = False

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        return [(f"valve/{BASE}/{self.key}", {
            "~": self.topic, "name": None, "uniq_id": f"{BASE}_{self.key}", "dev_cla": "water",
            "cmd_t": "~/set", "stat_t": "~/state", "avty_t": AVAILABILITY,
            "dev": device_info(self.key, self.name, self.area, "Irrigation valve"), "o": ORIGIN,
        })]

    async def on_command(self, topic: str, payload: str) -> None:
        if payload not in ("OPEN", "CLOSE"):
            raise ValueError(f"unknown payload {payload!r}")
        self.open = payload == "OPEN"
        self.publish_state()

    def publish_state(self) -> None:
        self._publish("state", "open" if self.open else "closed")


class Vacuum(DemoDevice):
    """A robot vacuum: starts cleaning at once, takes the home's travel time to get back to its
    dock; `send_command` `{"command": "clean_area", "area": …}` cleans one area."""

    FEATURES = ["start", "stop", "pause", "return_home", "battery", "status", "send_command"]

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home)
        self.key, self.name, self.area = key, name, area
        self.state: str = "docked"
        self.cleaning_area: str | None = None
        self._return: asyncio.Task[None] | None = None

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        return [(f"vacuum/{BASE}/{self.key}", {
            "~": self.topic, "name": None, "uniq_id": f"{BASE}_{self.key}",
            "cmd_t": "~/command", "stat_t": "~/state", "send_cmd_t": "~/send", "sup_feat": self.FEATURES,
            "avty_t": AVAILABILITY, "dev": device_info(self.key, self.name, self.area, "Robot vacuum"),
            "o": ORIGIN,
        })]

    def command_topics(self) -> list[str]:
        return [f"{self.topic}/command", f"{self.topic}/send"]

    async def on_command(self, topic: str, payload: str) -> None:
        self.stop()
        if topic.endswith("/send"):
            command = json.loads(payload)
            if not isinstance(command, dict) or command.get("command") != "clean_area":
                raise ValueError(f"unknown command {payload[:80]!r}")
            self.state, self.cleaning_area = "cleaning", str(command["area"])
        elif payload in ("start", "pause", "stop"):
            self.state = {"start": "cleaning", "pause": "paused", "stop": "idle"}[payload]
        elif payload == "return_to_base":
            self.state, self.cleaning_area = "returning", None
            self._return = asyncio.ensure_future(self._dock())
        else:
            raise ValueError(f"unknown payload {payload!r}")
        self.publish_state()

    async def _dock(self) -> None:
        await asyncio.sleep(self.home.travel_seconds)
        self.state = "docked"
        self.publish_state()

    def stop(self) -> None:
        if self._return is not None and not self._return.done():
            self._return.cancel()
        self._return = None

    def publish_state(self) -> None:
        self._publish("state", {"state": self.state, "battery_level": 87})
