"""An in-process MQTT broker (amqtt) on loopback, for a hub that has no broker and no Home Assistant.

With it, `bolt-hub serve` works end to end out of the box: the demo home's devices and the hub's
own MQTT API share this broker, and local MQTT clients can ask the hub questions on it.
Loopback only, anonymous: it is a private bus, not a service for the network. It runs on an
event loop of its own, in its own thread: the hub's loop busy with a burst of REST asks must not
hold up the MQTT asks that come in meanwhile (they would reach the model's queue last).

A hub restarted at once finds its old port in TIME_WAIT: the port counts as free then (the
probe binds with SO_REUSEADDR, as the listener does). A port really held by another program is
waited for a few seconds, then is an error: the hub never goes on with a different home.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from typing import Any, Coroutine, Iterator, TypeVar

from hub.transport.broker_log import limit_broker_log
from hub.transport.mqtt_broker import BrokerSettings
from hub.transport.mqtt_subscriptions import has_wildcard

_LOGGER = logging.getLogger(__name__)

HOST = "127.0.0.1"
BIND_WAIT_S = 10.0  # how long a taken port is waited for (a previous hub still shutting down)
T = TypeVar("T")


class EmbeddedBrokerError(RuntimeError):
    """The embedded broker could not start (port taken, amqtt missing)."""


class EmbeddedBroker:
    """start/stop component; `settings` tells clients where to connect."""

    def __init__(self, port: int = 1883, bind_wait_s: float | None = None) -> None:
        self.port = port
        self.bind_wait_s = BIND_WAIT_S if bind_wait_s is None else bind_wait_s
        self._broker: Any = None  # an amqtt Broker while running (amqtt ships no types)
        self._loop: asyncio.AbstractEventLoop | None = None  # the broker's own, in `_thread`
        self._thread: threading.Thread | None = None

    @property
    def settings(self) -> BrokerSettings:
        return BrokerSettings(HOST, self.port)

    async def start(self) -> None:
        try:
            from amqtt.broker import Broker
        except ImportError as err:
            raise EmbeddedBrokerError("the embedded MQTT broker needs the 'amqtt' package") from err
        limit_broker_log()
        if self.port == 0:
            self.port = _free_port()
        elif not await self._wait_until_free():
            raise EmbeddedBrokerError(
                f"port {HOST}:{self.port} is taken (waited {self.bind_wait_s:.0f} s); set mqtt_host (and "
                "mqtt_port) to use the broker already running there, or choose another mqtt_port"
            )
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"{HOST}:{self.port}"}},
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
        }
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="mqtt-broker", daemon=True)
        self._thread.start()
        try:
            self._broker = await self._on_broker_loop(_started(_patched_broker_class(Broker), config))
        except Exception as err:  # amqtt wraps bind errors in its own types
            self._end_loop()
            raise EmbeddedBrokerError(f"the embedded MQTT broker did not start: {err}") from err
        _LOGGER.info("embedded MQTT broker listening on %s:%d", HOST, self.port)

    async def _on_broker_loop(self, work: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    def _end_loop(self) -> None:
        loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        if not thread.is_alive():
            loop.close()

    async def _wait_until_free(self) -> bool:
        if _port_is_free(self.port):
            return True
        _LOGGER.warning("port %s:%d is taken; waiting up to %.0f s for it (a previous hub still stopping?)",
                        HOST, self.port, self.bind_wait_s)
        deadline = time.monotonic() + self.bind_wait_s
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            if _port_is_free(self.port):
                return True
        return False

    async def stop(self) -> None:
        if self._broker is None:
            return
        broker, self._broker = self._broker, None
        try:
            await asyncio.wait_for(self._on_broker_loop(broker.shutdown()), 10)
        except Exception:  # shutting down: log, never raise
            _LOGGER.exception("embedded MQTT broker did not shut down cleanly")
        finally:
            self._end_loop()


async def _started(broker_class: Any, config: dict[str, Any]) -> Any:
    """An amqtt broker made and started on the running loop (the broker's own)."""
    broker = broker_class(config)
    await broker.start()
    return broker


class _SubscriptionTable(dict[str, Any]):
    """amqtt's table of topic filter → subscribers, iterated over a snapshot of its keys (so a
    coroutine may await inside the loop), that names the filters a topic can match without
    testing every one (exact filters are looked up, the few wildcard ones tested)."""

    def __init__(self, table: dict[str, Any]) -> None:
        super().__init__(table)
        self._wildcards = {f for f in table if has_wildcard(f)}

    def __iter__(self) -> Iterator[str]:
        return iter(list(super().keys()))

    def __setitem__(self, topic_filter: str, subscribers: Any) -> None:
        super().__setitem__(topic_filter, subscribers)
        if has_wildcard(topic_filter):
            self._wildcards.add(topic_filter)

    def __delitem__(self, topic_filter: str) -> None:
        super().__delitem__(topic_filter)
        self._wildcards.discard(topic_filter)

    def clear(self) -> None:
        super().clear()
        self._wildcards.clear()

    def __repr__(self) -> str:  # amqtt logs the table's repr (at debug) after every subscribe
        return f"<{len(self)} topic filters>"

    def candidates(self, topic: str) -> list[tuple[str, Any]]:
        """The filters that may match `topic`, with their subscribers (a snapshot)."""
        exact = [(topic, self[topic])] if topic in self else []
        return exact + [(f, self[f]) for f in sorted(self._wildcards) if f in self]


def _patched_broker_class(broker_class: Any) -> Any:
    """amqtt 0.12.1 with three broker bugs worked around.

    1. On every connect it iterates over *all* subscriptions with awaits inside the loop, so a
       subscription made meanwhile raises "dictionary changed size during iteration" and drops
       the connecting client. Iterating over a snapshot fixes that.
    2. In that same loop it sends the connecting client the retained messages of every topic
       *anyone* subscribed to. Only the client's own subscriptions should count.
    3. Every published message was tested against every subscription, and every subscribe
       against every retained message, each test formatting a debug line: with thousands of
       MQTT devices (a state subscription each) the broker fell minutes behind, replies waited
       and clients' PUBACKs timed out. Exact filters are now looked up (and the table's repr,
       formatted after every subscribe, is short).
    """
    from amqtt.contexts import Action
    from amqtt.mqtt.constants import QOS_1, QOS_2

    class PatchedBroker(broker_class):  # type: ignore[misc]  # amqtt ships no types
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._subscriptions: _SubscriptionTable = _SubscriptionTable(self._subscriptions)

        async def _publish_retained_messages_for_subscription(self, subscription: Any, session: Any) -> None:
            topic_filter, qos = subscription
            subscribers = self._subscriptions.get(topic_filter, [])
            if not any(s.client_id == session.client_id for s, _ in subscribers):
                return
            if has_wildcard(topic_filter):
                await super()._publish_retained_messages_for_subscription(subscription, session)
                return
            retained = self._retained_messages.get(topic_filter)
            handler = self._get_handler(session)
            if retained is not None and handler:
                await handler.mqtt_publish(retained.topic, retained.data, min(qos, retained.qos or qos), retain=True)

        async def _run_broadcast(self, running_tasks: Any) -> None:
            """amqtt's own, over the candidate filters only (and without a debug line per filter)."""
            broadcast = await self._broadcast_queue.get()
            topic = broadcast["topic"]
            for topic_filter, subscriptions in self._subscriptions.candidates(topic):
                if not self._matches(topic, topic_filter):
                    continue
                for target_session, sub_qos in subscriptions:
                    qos = broadcast.get("qos", sub_qos)
                    if not await self._topic_filtering(target_session, topic=topic, action=Action.RECEIVE):
                        continue
                    connected = target_session.transitions.state == "connected"
                    if (not connected and not target_session.clean_session and qos in (QOS_1, QOS_2)
                            and not target_session.is_anonymous):
                        await self._retain_broadcast_message(broadcast, qos, target_session)
                        continue
                    handler = self._get_handler(target_session) if connected else None
                    if handler:
                        running_tasks.append(asyncio.ensure_future(
                            handler.mqtt_publish(topic, broadcast["data"], qos, retain=False)))

    return PatchedBroker


def _port_is_free(port: int) -> bool:
    """Whether a listener can bind the port now: SO_REUSEADDR, like asyncio's listeners, so a port
    whose old connections are in TIME_WAIT (a hub restarted at once) counts as free."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port
