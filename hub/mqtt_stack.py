"""Everything MQTT in one start/stop component, for the composition root.

    mqtt = MqttStack(options.mqtt, store=store, settings=settings, agent=agent)
    await mqtt.start()   # after the store, settings and agent exist; before serving users
    ...
    await mqtt.stop()

Broker: the `mqtt_*` options, else the Supervisor's MQTT service (add-on), else — when no Home
Assistant is configured either — an embedded broker on 127.0.0.1:`mqtt_port` with the demo home
on it (unless `demo_home=False`), so a bare `bolt-hub serve` works end to end; when that broker
cannot start, start() raises ConfigError (the hub never swaps in another home). With Home
Assistant but no broker, MQTT is off. A broker that is down at start does not stop the hub:
the client keeps retrying.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

from hub.agent.api import AgentApi
from hub.config import ConfigError
from hub.settings import RuntimeSettings
from hub.home.entities import EntityStore
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.backends.mqtt.devices import MqttDevices
from hub.transport.embedded_broker import EmbeddedBroker, EmbeddedBrokerError
from hub.interfaces.mqtt.api import MqttApi
from hub.transport.mqtt_broker import BrokerOptions, BrokerSettings, broker_from_options
from hub.transport.mqtt_client import MqttClient
from hub.interfaces.mqtt.entities import HubEntities
from hub.transport.mqtt_topics import HubTopics, TopicOptions
from hub.interfaces.mqtt.tool_api import MqttToolApi

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class MqttStackOptions:
    broker: BrokerOptions
    topics: TopicOptions
    include_entities: str | None  # of the discovered devices
    exclude_entities: str | None
    queue_size: int
    language: str
    ha_url: str | None  # with Home Assistant but no broker, MQTT is off
    in_addon: bool


class MqttStack:
    def __init__(
        self,
        options: MqttStackOptions,
        *,
        store: EntityStore,
        settings: RuntimeSettings,
        agent: AgentApi,
        broker: BrokerSettings | None = None,
        demo_home: bool = True,
        demo_travel_seconds: float = 4.0,
    ) -> None:
        self.options = options
        self.store = store
        self.settings = settings
        self.agent = agent
        self.topics = HubTopics.from_options(options.topics)
        self._broker = broker
        self._demo_home = demo_home
        self._demo_travel_seconds = demo_travel_seconds
        self.embedded: EmbeddedBroker | None = None
        self.client: MqttClient | None = None
        self.devices: MqttDevices | None = None
        self.api: MqttApi | None = None
        self.tools: MqttToolApi | None = None
        self.entities: HubEntities | None = None
        self.demo: MqttDemoHome | None = None

    @property
    def enabled(self) -> bool:
        return self.client is not None

    async def start(self) -> None:
        broker = self._broker or await broker_from_options(self.options.broker)
        if broker is None:
            if self.options.ha_url or self.options.in_addon:
                _LOGGER.info("MQTT is off: no broker configured")
                return
            self.embedded = EmbeddedBroker(self.options.broker.mqtt_port)
            try:
                await self.embedded.start()
            except EmbeddedBrokerError as err:
                # never go on with another home than the one asked for: stop with what is wrong
                self.embedded = None
                raise ConfigError(f"mqtt_port: the embedded MQTT broker cannot start: {err}") from None
            broker = self.embedded.settings
            if self._demo_home:
                self.demo = MqttDemoHome.on_broker(broker, self.topics.discovery_prefix, self._demo_travel_seconds)
        self.client = MqttClient(
            broker,
            client_id=f"bolt-hub-{self.topics.node_id}-{secrets.token_hex(3)}",
            availability_topic=self.topics.availability,
            birth_topic=self.topics.ha_status,
        )
        self.devices = MqttDevices(self.client, self.store, discovery_prefix=self.topics.discovery_prefix,
                                   ignore_node_ids=[self.topics.node_id],
                                   include_entities=self.options.include_entities,
                                   exclude_entities=self.options.exclude_entities)
        # queue_size counts the asks waiting for the model: one may run besides them
        self.api = MqttApi(self.client, self.agent, self.topics, max_pending=self.options.queue_size + 1,
                           language=self.options.language)
        self.tools = MqttToolApi(self.client, self.agent, self.topics, default_language=self.options.language,
                                 max_pending=self.options.queue_size)
        self.entities = HubEntities(self.client, self.topics, self.settings, self.agent, self.api,
                                   self.options.topics.instance_name)
        for component in (self.devices, self.api, self.tools, self.entities):
            await component.start()
        await self.client.start()
        if self.demo is not None:
            await self.demo.start()

    async def stop(self) -> None:
        """Devices first, then the API (cancelled asks still get their reply out), the client
        (says offline), and the embedded broker last."""
        for component in (self.demo, self.api, self.tools, self.entities, self.devices, self.client, self.embedded):
            if component is None:
                continue
            try:
                await component.stop()
            except Exception:
                _LOGGER.exception("stopping %s failed", type(component).__name__)
        self.demo = self.api = self.tools = self.entities = self.devices = self.client = self.embedded = None
