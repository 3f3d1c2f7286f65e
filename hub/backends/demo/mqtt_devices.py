"""The simulated devices of the MQTT demo home (what every device is, lights, switches, a fan,
covers, a lock): discovery configs, commands and states. Climate devices: `mqtt_climate`."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

from hub import __version__
from hub.transport.mqtt_client import MqttClient

BASE = "bolt_demo"
AVAILABILITY = f"{BASE}/availability"
ORIGIN = {"name": "Bolt Hub demo home", "sw": __version__}


class DemoHost(Protocol):
    """What a device needs of its home: the connection it publishes on, how long covers travel."""

    client: MqttClient
    travel_seconds: float


def device_info(key: str, name: str, area: str, model: str) -> dict[str, Any]:
    """The `dev` block of a discovery config: which device an entity belongs to, and where."""
    return {"ids": [f"{BASE}_{key}"], "name": name, "sa": area, "mf": "Bolt Demo", "mdl": model}


class DemoDevice:
    """One simulated device: its discovery config(s), command topics and state."""

    key: str

    def __init__(self, home: DemoHost) -> None:
        self.home = home

    @property
    def topic(self) -> str:
        return f"{BASE}/{self.key}"

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        raise NotImplementedError

    def command_topics(self) -> list[str]:
        return [f"{self.topic}/set"]

    async def on_command(self, topic: str, payload: str) -> None:
        raise NotImplementedError

    def publish_state(self) -> None:
        raise NotImplementedError

    def _publish(self, suffix: str, payload: Any) -> None:
        self.home.client.publish(f"{self.topic}/{suffix}", payload, qos=1, retain=True)


class BasicLight(DemoDevice):
    """Default-schema light: ON/OFF on `~/set`, brightness 0–100 on `~/brightness/set`, optional rgb."""

    def __init__(self, home: DemoHost, key: str, name: str, area: str, rgb: bool = False) -> None:
        super().__init__(home)
        self.key, self.name, self.area, self.rgb_enabled = key, name, area, rgb
        self.on = False
        self.brightness = 100  # 0–100 (brightness_scale 100)
        self.rgb = [255, 255, 255]

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        config: dict[str, Any] = {
            "~": self.topic,
            "name": None,
            "uniq_id": f"{BASE}_{self.key}",
            "cmd_t": "~/set",
            "stat_t": "~/state",
            "bri_cmd_t": "~/brightness/set",
            "bri_stat_t": "~/brightness",
            "bri_scl": 100,
            "avty_t": AVAILABILITY,
            "dev": device_info(self.key, self.name, self.area, "Lamp"),
            "o": ORIGIN,
        }
        if self.rgb_enabled:
            config.update({"rgb_cmd_t": "~/rgb/set", "rgb_stat_t": "~/rgb", "on_cmd_type": "first"})
        return [(f"light/{BASE}/{self.key}", config)]

    def command_topics(self) -> list[str]:
        topics = [f"{self.topic}/set", f"{self.topic}/brightness/set"]
        return topics + ([f"{self.topic}/rgb/set"] if self.rgb_enabled else [])

    async def on_command(self, topic: str, payload: str) -> None:
        if topic.endswith("/brightness/set"):
            level = int(float(payload))
            if not 0 <= level <= 100:
                raise ValueError(f"brightness {level} out of 0–100")
            self.brightness, self.on = (self.brightness, False) if level == 0 else (level, True)
        elif topic.endswith("/rgb/set"):
            parts = [int(p) for p in payload.split(",")]
            if len(parts) != 3 or not all(0 <= p <= 255 for p in parts):
                raise ValueError(f"bad rgb {payload!r}")
            self.rgb, self.on = parts, True
        elif payload in ("ON", "OFF"):
            self.on = payload == "ON"
        else:
            raise ValueError(f"unknown payload {payload!r}")
        self.publish_state()

    def publish_state(self) -> None:
        self._publish("state", "ON" if self.on else "OFF")
        self._publish("brightness", str(self.brightness))
        if self.rgb_enabled:
            self._publish("rgb", ",".join(map(str, self.rgb)))


class JsonLight(DemoDevice):
    """JSON-schema light with brightness and rgb."""

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home)
        self.key, self.name, self.area = key, name, area
        self.on, self.brightness, self.rgb, self.mireds = False, 255, [255, 255, 255], 370

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        return [
            (
                f"light/{BASE}/{self.key}",
                {
                    "schema": "json",
                    "name": None,
                    "uniq_id": f"{BASE}_{self.key}",
                    "cmd_t": f"{self.topic}/set",
                    "stat_t": f"{self.topic}/state",
                    "sup_clrm": ["rgb", "color_temp"],
                    "brightness": True,
                    "avty_t": AVAILABILITY,
                    "dev": device_info(self.key, self.name, self.area, "Color bulb"),
                    "o": ORIGIN,
                },
            )
        ]

    async def on_command(self, topic: str, payload: str) -> None:
        command = json.loads(payload)
        if not isinstance(command, dict) or command.get("state") not in ("ON", "OFF"):
            raise ValueError(f"bad JSON light command {payload[:80]!r}")
        self.on = command["state"] == "ON"
        if "brightness" in command:
            self.brightness = max(0, min(255, int(command["brightness"])))
        color = command.get("color")
        if isinstance(color, dict):
            self.rgb = [max(0, min(255, int(color[k]))) for k in "rgb"]
        self.mireds = max(100, min(1000, int(command.get("color_temp", self.mireds))))
        self.publish_state()

    def publish_state(self) -> None:
        self._publish(
            "state",
            {"state": "ON" if self.on else "OFF", "brightness": self.brightness, "color_mode": "rgb", "color": dict(zip("rgb", self.rgb)),
             "color_temp": self.mireds},
        )


class TwoStateDevice(DemoDevice):
    """A device with one command topic and two states (a smart plug, a door lock)."""

    component: str
    model: str
    commands: tuple[str, str]  # (command for state A, command for state B)
    states: tuple[str, str]  # what the device reports for A and B

    def __init__(self, home: DemoHost, key: str, name: str, area: str, first: bool) -> None:
        super().__init__(home)
        self.key, self.name, self.area, self.first = key, name, area, first

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        return [
            (
                f"{self.component}/{BASE}/{self.key}",
                {
                    "~": self.topic,
                    "name": None,
                    "uniq_id": f"{BASE}_{self.key}",
                    "cmd_t": "~/set",
                    "stat_t": "~/state",
                    "avty_t": AVAILABILITY,
                    "dev": device_info(self.key, self.name, self.area, self.model),
                    "o": ORIGIN,
                },
            )
        ]

    async def on_command(self, topic: str, payload: str) -> None:
        if payload not in self.commands:
            raise ValueError(f"unknown payload {payload!r}")
        self.first = payload == self.commands[0]
        self.publish_state()

    def publish_state(self) -> None:
        self._publish("state", self.states[0] if self.first else self.states[1])


class Switch(TwoStateDevice):
    component, model, commands, states = "switch", "Smart plug", ("ON", "OFF"), ("ON", "OFF")

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home, key, name, area, first=False)

    @property
    def on(self) -> bool:
        return self.first


class Fan(DemoDevice):
    """A fan with three speeds (speed_range 1–3), so percentages get scaled."""

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home)
        self.key, self.name, self.area = key, name, area
        self.on, self.speed = False, 1

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        return [
            (
                f"fan/{BASE}/{self.key}",
                {
                    "~": self.topic,
                    "name": None,
                    "uniq_id": f"{BASE}_{self.key}",
                    "cmd_t": "~/set",
                    "stat_t": "~/state",
                    "pct_cmd_t": "~/speed/set",
                    "pct_stat_t": "~/speed",
                    "spd_rng_min": 1,
                    "spd_rng_max": 3,
                    "avty_t": AVAILABILITY,
                    "dev": device_info(self.key, self.name, self.area, "Ceiling fan"),
                    "o": ORIGIN,
                },
            )
        ]

    def command_topics(self) -> list[str]:
        return [f"{self.topic}/set", f"{self.topic}/speed/set"]

    async def on_command(self, topic: str, payload: str) -> None:
        if topic.endswith("/speed/set"):
            speed = int(payload)
            if not 0 <= speed <= 3:
                raise ValueError(f"speed {speed} out of 0–3")
            self.on, self.speed = (False, self.speed) if speed == 0 else (True, speed)
        elif payload in ("ON", "OFF"):
            self.on = payload == "ON"
        else:
            raise ValueError(f"unknown payload {payload!r}")
        self.publish_state()

    def publish_state(self) -> None:
        self._publish("state", "ON" if self.on else "OFF")
        self._publish("speed", str(self.speed if self.on else 0))


class Cover(DemoDevice):
    """A cover that moves at a finite speed, reporting opening/closing and its position."""

    def __init__(self, home: DemoHost, key: str, name: str, area: str, model: str, device_class: str, positionable: bool) -> None:
        super().__init__(home)
        self.key, self.name, self.area, self.model = key, name, area, model
        self.device_class, self.positionable = device_class, positionable
        self.position = 0  # 0 closed … 100 open
        self.moving: str | None = None  # "opening" | "closing"
        self._motion: asyncio.Task[None] | None = None

    def discovery(self) -> list[tuple[str, dict[str, Any]]]:
        config: dict[str, Any] = {
            "~": self.topic,
            "name": None,
            "uniq_id": f"{BASE}_{self.key}",
            "dev_cla": self.device_class,
            "cmd_t": "~/set",
            "stat_t": "~/state",
            "pos_t": "~/position",
            "avty_t": AVAILABILITY,
            "dev": device_info(self.key, self.name, self.area, self.model),
            "o": ORIGIN,
        }
        if self.positionable:
            config["set_pos_t"] = "~/position/set"
        return [(f"cover/{BASE}/{self.key}", config)]

    def command_topics(self) -> list[str]:
        return [f"{self.topic}/set"] + ([f"{self.topic}/position/set"] if self.positionable else [])

    async def on_command(self, topic: str, payload: str) -> None:
        if topic.endswith("/position/set"):
            target = int(float(payload))
            if not 0 <= target <= 100:
                raise ValueError(f"position {target} out of 0–100")
        elif payload in ("OPEN", "CLOSE"):
            target = 100 if payload == "OPEN" else 0
        elif payload == "STOP":
            self._stop_motion()
            self.publish_state()
            return
        else:
            raise ValueError(f"unknown payload {payload!r}")
        self._stop_motion()
        if target != self.position:
            self._motion = asyncio.ensure_future(self._move(target))

    def _stop_motion(self) -> None:
        if self._motion is not None and not self._motion.done():
            self._motion.cancel()
        self._motion = None
        self.moving = None

    async def _move(self, target: int) -> None:
        step = 5 if target > self.position else -5
        self.moving = "opening" if step > 0 else "closing"
        self.publish_state()
        delay = self.home.travel_seconds / 20
        while self.position != target:
            await asyncio.sleep(delay)
            self.position = max(min(self.position + step, 100), 0)
            if (step > 0 and self.position > target) or (step < 0 and self.position < target):
                self.position = target
            self._publish("position", str(self.position))
        self.moving = None
        self.publish_state()

    def stop(self) -> None:
        self._stop_motion()

    def publish_state(self) -> None:
        if self.moving:
            state = self.moving
        else:
            state = "closed" if self.position == 0 else "open"
        self._publish("state", state)
        self._publish("position", str(self.position))


class Lock(TwoStateDevice):
    component, model, commands, states = "lock", "Door lock", ("LOCK", "UNLOCK"), ("LOCKED", "UNLOCKED")

    def __init__(self, home: DemoHost, key: str, name: str, area: str) -> None:
        super().__init__(home, key, name, area, first=True)

    @property
    def locked(self) -> bool:
        return self.first
