"""The hub's one MQTT connection: paho-mqtt 2.x driven by the asyncio event loop.

Why paho directly and not aiomqtt: the hub needs reconnect with backoff, re-subscription,
a bounded outbox for messages published while the broker is away, a last will, and
re-announcement on Home Assistant's birth message. aiomqtt leaves all of that to the caller
(its connection is a context manager that ends on the first disconnect), so it would save
nothing and add a dependency. The socket is driven from the asyncio event loop (`mqtt_socket`);
only the blocking TCP/TLS connect runs in a worker thread, while no other code touches paho.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import ssl
from collections import deque
from typing import Any, Awaitable, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from hub.transport.mqtt_broker import BrokerSettings
from hub.transport.mqtt_socket import PahoSocket
from hub.transport.mqtt_subscriptions import MessageHandler, MqttMessage, Subscription, Subscriptions

_LOGGER = logging.getLogger(__name__)

CONNACK_TIMEOUT = 15.0  # seconds a connected socket may take to bring the broker's CONNACK
HA_BIRTH_PAYLOAD = b"online"


Announcer = Callable[[], Awaitable[None]]
Payload = str | bytes | dict[str, Any] | list[Any] | int | float | None


def encode_payload(payload: Payload) -> bytes:
    """dict/list → compact JSON; str → UTF-8; None → empty (deletes a retained message)."""
    if payload is None:
        return b""
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, str):
        return payload.encode("utf-8")
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class MqttClient:
    """One connection with reconnect, re-subscription, an outbox, a last will and announcers.

    - `subscribe(filter, handler)`: async handlers, called in arrival order per subscription;
      an exception in a handler is logged and the client carries on.
    - `publish(...)`: never blocks; while disconnected the message waits in a bounded outbox
      (oldest dropped first, with a warning) and goes out right after the next connect.
      QoS 1/2 messages already handed to paho when the link drops are re-sent by paho.
    - availability: last will `offline` (retained) on `availability_topic`, `online` on connect.
    - announcers run after every connect and whenever `birth_topic` carries `online`
      (Home Assistant restarted): they re-publish discovery.
    """

    def __init__(
        self,
        broker: BrokerSettings,
        *,
        client_id: str | None = None,
        availability_topic: str | None = None,
        birth_topic: str | None = "homeassistant/status",
        keepalive: int = 60,
        outbox_limit: int = 1000,
        handler_queue_limit: int = 1000,
        backoff_min: float = 0.5,
        backoff_max: float = 30.0,
    ) -> None:
        self.broker = broker
        self.client_id = client_id or f"bolt-hub-{secrets.token_hex(4)}"
        self.availability_topic = availability_topic
        self.birth_topic = birth_topic
        self._keepalive = keepalive
        self._outbox: deque[tuple[str, bytes, int, bool]] = deque()
        self._outbox_limit = outbox_limit
        self._handler_queue_limit = handler_queue_limit
        self._backoff = (backoff_min, backoff_max)
        self._subscriptions = Subscriptions()
        self._announcers: list[Announcer] = []
        self._connected = asyncio.Event()
        self._link_closed = asyncio.Event()  # set when the socket closes (ends a CONNACK wait)
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._socket = PahoSocket(self._socket_closed)
        self._reconnect_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._connecting: asyncio.Future[Any] | None = None  # the connect running in a worker thread
        self._closed: asyncio.Future[Any] | None = None  # set while stop() waits for the socket to close
        self._acks: dict[int, asyncio.Future[Any]] = {}  # mid → future, for publishes stop() waits on
        self.connect_count = 0  # successful connects so far (tests and diagnostics)
        self._paho = self._make_paho()

    # --- public API -------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    async def start(self, wait: float = 5.0) -> None:
        """Start connecting; wait up to `wait` s for the first connection (never raises for a
        broker that is down: the client keeps retrying in the background)."""
        self._loop = asyncio.get_running_loop()
        self._socket.bind(self._loop)
        self._stopping = False
        self._paho = self._make_paho()  # fresh: nothing left over from before a stop() is re-sent
        self._paho.connect_async(self.broker.host, self.broker.port, self._keepalive)
        self._reconnect_task = asyncio.ensure_future(self._connect_loop())
        if wait > 0 and not await self.wait_connected(wait):
            _LOGGER.warning("MQTT broker %s not reachable yet; retrying in the background", self.broker.describe())

    async def wait_connected(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self._connected.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        """Say `offline`, disconnect cleanly, stop all workers."""
        self._stopping = True
        if self._reconnect_task:
            self._reconnect_task.cancel()
            await asyncio.gather(self._reconnect_task, return_exceptions=True)
            self._reconnect_task = None
        if self._connecting is not None:
            # a connect still running in its thread would open a socket behind our back
            await asyncio.wait({self._connecting}, timeout=15)
            await asyncio.sleep(0)  # let its socket callbacks reach the loop
        if self._socket.fd is not None:
            if self.connected and self.availability_topic:
                # wait for the broker's PUBACK: it has then also read everything sent before, so
                # closing right after DISCONNECT cannot make it drop unread packets
                info = self._paho.publish(self.availability_topic, b"offline", qos=1, retain=True)
                acked = asyncio.get_running_loop().create_future()
                self._acks[info.mid] = acked
                try:
                    await asyncio.wait_for(acked, 3)
                except asyncio.TimeoutError:
                    _LOGGER.warning("the MQTT broker did not acknowledge 'offline' in time")
                finally:
                    self._acks.pop(info.mid, None)
            self._closed = asyncio.get_running_loop().create_future()
            self._paho.disconnect()
            try:
                await asyncio.wait_for(self._closed, 3)
            except asyncio.TimeoutError:
                _LOGGER.warning("MQTT disconnect did not complete in time")
        self._socket.drop()
        self._connected.clear()
        for sub in self._subscriptions:
            sub.worker.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*(s.worker for s in self._subscriptions), *self._tasks, return_exceptions=True)
        self._subscriptions.clear()

    async def subscribe(self, topic_filter: str, handler: MessageHandler, qos: int = 1, *,
                        retained: bool = True, latest_only: bool = False,
                        queue_limit: int | None = None) -> Callable[[], None]:
        """Call `handler` for every message on `topic_filter` (also after reconnects).

        `retained=False` for command topics: a retained message there (which the broker replays at
        every subscribe, so at every hub start) is dropped with a warning instead of run.
        `latest_only`: of the messages waiting for the handler, only each topic's newest counts.
        Returns a function that removes this subscription.
        """
        sub = Subscription(topic_filter, qos, handler, queue_limit or self._handler_queue_limit,
                           retained=retained, latest_only=latest_only)
        self._subscriptions.add(sub)
        if self.connected:
            # sent even when another handler already has this filter: subscribing again makes
            # the broker re-send the retained message, which the new handler needs
            self._paho.subscribe(topic_filter, qos)

        def unsubscribe() -> None:
            if self._subscriptions.remove(sub):
                sub.worker.cancel()
                if self.connected and not self._subscriptions.uses(topic_filter):
                    self._paho.unsubscribe(topic_filter)

        return unsubscribe

    def publish(
        self, topic: str, payload: Payload, *, qos: int = 0, retain: bool = False, queue: bool = True
    ) -> bool:
        """Send now, or keep in the outbox until the next connect.

        Returns False only when the message was not accepted (disconnected and `queue=False`).
        """
        data = encode_payload(payload)
        if self.connected:
            info = self._paho.publish(topic, data, qos=qos, retain=retain)
            if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
                return True
            if qos > 0 and info.rc == MQTTErrorCode.MQTT_ERR_NO_CONN:
                return True  # paho keeps QoS>0 messages and re-sends them after reconnect
            if info.rc != MQTTErrorCode.MQTT_ERR_NO_CONN:
                _LOGGER.warning("MQTT publish to %s failed: %s", topic, paho.error_string(info.rc))
                return False
        if not queue:
            return False
        if len(self._outbox) >= self._outbox_limit:
            dropped = self._outbox.popleft()
            _LOGGER.warning("MQTT outbox full: dropped the oldest message (to %s)", dropped[0])
        self._outbox.append((topic, data, qos, retain))
        return True

    def add_announcer(self, announcer: Announcer) -> None:
        """Run `announcer` after every (re)connect and on Home Assistant's birth message."""
        self._announcers.append(announcer)
        if self.connected:
            self._spawn(self._run_announcer(announcer))

    # --- connection -------------------------------------------------------------------------

    def _make_paho(self) -> paho.Client:
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=paho.MQTTv311,
            clean_session=True,
            reconnect_on_failure=False,
        )
        if self.broker.username:
            client.username_pw_set(self.broker.username, self.broker.password)
        if self.broker.tls:
            client.tls_set_context(ssl.create_default_context())
        if self.availability_topic:
            client.will_set(self.availability_topic, b"offline", qos=1, retain=True)
        client.suppress_exceptions = True
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        self._socket.attach(client)
        return client

    async def _connect_loop(self) -> None:
        """Try to connect until connected, with exponential backoff and jitter. Never dies of an
        unexpected error: it logs it and tries again."""
        delay = self._backoff[0]
        while not self._stopping and not self.connected:
            self._link_closed.clear()
            self._connecting = asyncio.get_running_loop().run_in_executor(None, self._paho.reconnect)
            try:
                await asyncio.shield(self._connecting)
            except (OSError, ssl.SSLError, ValueError) as err:
                _LOGGER.debug("MQTT connect to %s failed: %s", self.broker.describe(), err)
            except asyncio.CancelledError:
                raise
            except Exception:
                _LOGGER.exception("MQTT connect to %s failed unexpectedly", self.broker.describe())
            else:
                # the TCP link is up; CONNACK arrives through the reader, unless the link drops
                if await self._wait_connack(CONNACK_TIMEOUT):
                    return
                _LOGGER.debug("no CONNACK from %s; trying again", self.broker.describe())
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, self._backoff[1])

    async def _wait_connack(self, timeout: float) -> bool:
        connected = asyncio.ensure_future(self._connected.wait())
        closed = asyncio.ensure_future(self._link_closed.wait())
        try:
            await asyncio.wait({connected, closed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            connected.cancel()
            closed.cancel()
        return self.connected

    def _schedule_reconnect(self) -> None:
        if self._stopping or self._loop is None:
            return
        if self._reconnect_task is None or self._reconnect_task.done():
            self._reconnect_task = asyncio.ensure_future(self._connect_loop())

    # --- paho callbacks (always run on the loop thread) -------------------------------------

    def _on_connect(self, client: paho.Client, _userdata: Any, _flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            _LOGGER.warning("MQTT broker %s refused the connection: %s", self.broker.describe(), reason)
            return
        self.connect_count += 1
        self._connected.set()
        _LOGGER.info("connected to MQTT broker %s", self.broker.describe())
        try:
            filters = {s.topic_filter: s.qos for s in self._subscriptions}
            if self.birth_topic and self._announcers:
                filters.setdefault(self.birth_topic, 0)
            if filters:
                self._paho.subscribe(list(filters.items()))
            if self.availability_topic:
                self._paho.publish(self.availability_topic, b"online", qos=1, retain=True)
            while self._outbox and self.connected:
                topic, data, qos, retain = self._outbox.popleft()
                self._paho.publish(topic, data, qos=qos, retain=retain)
        except Exception:  # paho would swallow it silently (suppress_exceptions)
            _LOGGER.exception("MQTT setup after connecting failed")
        for announcer in list(self._announcers):
            self._spawn(self._run_announcer(announcer))

    def _on_disconnect(self, client: paho.Client, _userdata: Any, _flags: Any, reason: Any, properties: Any) -> None:
        was_connected = self.connected
        self._connected.clear()
        if was_connected and not self._stopping:
            _LOGGER.warning("lost the MQTT broker %s (%s); reconnecting", self.broker.describe(), reason)
        self._schedule_reconnect()

    def _on_publish(self, client: paho.Client, _userdata: Any, mid: int, reason: Any, properties: Any) -> None:
        acked = self._acks.get(mid)
        if acked is not None and not acked.done():
            acked.set_result(None)

    def _on_message(self, client: paho.Client, _userdata: Any, msg: paho.MQTTMessage) -> None:
        message = MqttMessage(msg.topic, bytes(msg.payload), bool(msg.retain), msg.qos)
        if self.birth_topic and message.topic == self.birth_topic and message.payload == HA_BIRTH_PAYLOAD:
            for announcer in list(self._announcers):
                self._spawn(self._run_announcer(announcer))
        for sub in self._subscriptions.matching(message.topic):
            sub.deliver(message)

    def _socket_closed(self) -> None:
        self._connected.clear()
        self._link_closed.set()
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)
        self._schedule_reconnect()

    # --- tasks ------------------------------------------------------------------------------

    async def _run_announcer(self, announcer: Announcer) -> None:
        try:
            await announcer()
        except Exception:
            _LOGGER.exception("MQTT announcer failed")

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
