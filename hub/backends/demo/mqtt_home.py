"""A simulated home of MQTT devices: they announce themselves by discovery and obey commands.

Runs on its own MQTT connection (like real devices would) — inside the hub on the embedded
broker when nothing is configured, and in tests against mosquitto. It mixes the discovery
styles real devices use: per-component configs with abbreviations and a `~` base topic,
JSON-schema lights, and one device-based config (`homeassistant/device/<id>/config`).
"""

from __future__ import annotations

from typing import Awaitable, Callable

import logging

from hub.backends.demo.mqtt_appliances import Vacuum, Valve
from hub.backends.demo.mqtt_climate import Thermostat, WeatherSensor
from hub.backends.demo.mqtt_devices import AVAILABILITY, BasicLight, Cover, DemoDevice, Fan, JsonLight, Lock, Switch
from hub.transport.mqtt_broker import BrokerSettings
from hub.transport.mqtt_client import MqttClient
from hub.transport.mqtt_subscriptions import MqttMessage

_LOGGER = logging.getLogger(__name__)


class MqttDemoHome:
    """The demo devices on one MQTT connection (start/stop component)."""

    def __init__(self, client: MqttClient, discovery_prefix: str = "homeassistant", travel_seconds: float = 4.0) -> None:
        self.client = client
        self.prefix = discovery_prefix.strip("/")
        self.travel_seconds = travel_seconds
        self.devices: dict[str, DemoDevice] = {
            d.key: d
            for d in (
                BasicLight(self, "desk_lamp", "Desk Lamp", "Office"),
                BasicLight(self, "living_room_lamp", "Living Room Lamp", "Living Room", rgb=True),
                JsonLight(self, "kitchen_light", "Kitchen Light", "Kitchen"),
                Switch(self, "coffee_maker", "Coffee Maker", "Kitchen"),
                Fan(self, "bedroom_fan", "Bedroom Fan", "Bedroom"),
                Cover(self, "garage_door", "Garage Door", "Garage", "Garage door opener", "garage", positionable=False),
                Cover(self, "bedroom_blinds", "Bedroom Blinds", "Bedroom", "Roller blind", "blind", positionable=True),
                Lock(self, "front_door", "Front Door", "Hallway"),
                Thermostat(self, "thermostat", "Thermostat", "Living Room"),
                WeatherSensor(self, "weather", "Weather Station", "Garden"),
                Valve(self, "irrigation_valve", "Irrigation Valve", "Garden"),
                Vacuum(self, "robot_vacuum", "Robot Vacuum", "Hallway"),
            )
        }
        self._unsubscribes: list[Callable[[], None]] = []
        self._owns_client = False

    @classmethod
    def on_broker(cls, broker: BrokerSettings, discovery_prefix: str = "homeassistant", travel_seconds: float = 4.0) -> "MqttDemoHome":
        """A demo home with its own connection (devices are separate clients in real life)."""
        client = MqttClient(
            broker,
            client_id="bolt-demo-home",
            availability_topic=AVAILABILITY,
            birth_topic=f"{discovery_prefix.strip('/')}/status",
        )
        home = cls(client, discovery_prefix, travel_seconds)
        home._owns_client = True
        return home

    def device(self, key: str) -> DemoDevice:
        return self.devices[key]

    async def start(self) -> None:
        for device in self.devices.values():
            for topic in device.command_topics():
                self._unsubscribes.append(await self.client.subscribe(topic, self._command_handler(device)))
        self.client.add_announcer(self.announce)
        if self._owns_client:
            await self.client.start()

    async def stop(self) -> None:
        for device in self.devices.values():
            if isinstance(device, (Cover, Vacuum)):
                device.stop()
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        self._unsubscribes.clear()
        if self._owns_client:
            await self.client.stop()

    async def announce(self) -> None:
        """Discovery configs and current states, retained (runs on connect and on HA's birth)."""
        for device in self.devices.values():
            for topic, config in device.discovery():
                self.client.publish(f"{self.prefix}/{topic}/config", config, qos=1, retain=True)
        for device in self.devices.values():
            device.publish_state()

    def _command_handler(self, device: DemoDevice) -> Callable[[MqttMessage], Awaitable[None]]:
        async def handle(message: MqttMessage) -> None:
            try:
                await device.on_command(message.topic, message.payload.decode("utf-8"))
            except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
                _LOGGER.warning("demo %s ignored a bad command on %s: %s", device.key, message.topic, err)

        return handle
