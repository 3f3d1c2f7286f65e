"""The MQTT client's subscriptions: one handler per topic filter, fed in arrival order by its own
worker, and found by topic without scanning every filter (a home of thousands of MQTT devices
holds a state subscription for each).

A handler that falls behind loses its oldest message, with one warning per burst, so one slow
handler never holds up the others. A `latest_only` subscription (MQTT discovery) keeps one
pending message per topic instead, since only a topic's newest config counts: a flood of
thousands of retained configs is taken in whole, and the same topic twice costs one handling.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterator

import paho.mqtt.client as paho

_LOGGER = logging.getLogger(__name__)

BEHIND_WARNING_S = 60.0  # at most one "is behind" warning per subscription in this time


@dataclass(frozen=True)
class MqttMessage:
    topic: str
    payload: bytes
    retain: bool = False
    qos: int = 0


MessageHandler = Callable[[MqttMessage], Awaitable[None]]


class Subscription:
    """One handler on one topic filter, fed in arrival order by its own worker task."""

    def __init__(self, topic_filter: str, qos: int, handler: MessageHandler, queue_limit: int, *,
                 retained: bool = True, latest_only: bool = False) -> None:
        self.topic_filter = topic_filter
        self.qos = qos
        self.handler = handler
        self.retained = retained
        self._latest_only = latest_only
        self._limit = queue_limit
        self._pending: OrderedDict[object, MqttMessage] = OrderedDict()
        self._arrived = asyncio.Event()
        self._dropped = 0
        self._warned_at = -BEHIND_WARNING_S
        self.worker = asyncio.ensure_future(self._run())

    def deliver(self, message: MqttMessage) -> None:
        if message.retain and not self.retained:
            _LOGGER.warning("ignored a retained message on command topic %s: a command runs only when it "
                            "is sent, never again at the next connect (publish it without retain)", message.topic)
            return
        key: object = message.topic if self._latest_only else object()
        if key in self._pending:
            self._pending[key] = message  # keeps its place in the queue
        else:
            if len(self._pending) >= self._limit:
                self._pending.popitem(last=False)
                self._behind()
            self._pending[key] = message
        self._arrived.set()

    def _behind(self) -> None:
        self._dropped += 1
        now = time.monotonic()
        if now - self._warned_at >= BEHIND_WARNING_S:
            _LOGGER.warning("handler for %s is behind: dropped %d oldest message(s) (at most %d wait)",
                            self.topic_filter, self._dropped, self._limit)
            self._warned_at, self._dropped = now, 0

    async def _run(self) -> None:
        while True:
            while not self._pending:
                self._arrived.clear()
                await self._arrived.wait()
            _, message = self._pending.popitem(last=False)
            try:
                await self.handler(message)
            except Exception:  # a handler's bug must never stop the client
                _LOGGER.exception("MQTT handler for %s failed on %s", self.topic_filter, message.topic)


def has_wildcard(topic_filter: str) -> bool:
    return "+" in topic_filter or "#" in topic_filter


class Subscriptions:
    """The client's subscriptions: exact filters by topic, the few wildcard ones scanned."""

    def __init__(self) -> None:
        self._exact: dict[str, list[Subscription]] = {}
        self._wildcard: list[Subscription] = []

    def add(self, sub: Subscription) -> None:
        if has_wildcard(sub.topic_filter):
            self._wildcard.append(sub)
        else:
            self._exact.setdefault(sub.topic_filter, []).append(sub)

    def remove(self, sub: Subscription) -> bool:
        """Remove `sub`; whether it was there."""
        if has_wildcard(sub.topic_filter):
            if sub not in self._wildcard:
                return False
            self._wildcard.remove(sub)
            return True
        subs = self._exact.get(sub.topic_filter, [])
        if sub not in subs:
            return False
        subs.remove(sub)
        if not subs:
            del self._exact[sub.topic_filter]
        return True

    def uses(self, topic_filter: str) -> bool:
        if has_wildcard(topic_filter):
            return any(s.topic_filter == topic_filter for s in self._wildcard)
        return topic_filter in self._exact

    def matching(self, topic: str) -> list[Subscription]:
        return [*self._exact.get(topic, ()), *(s for s in self._wildcard if paho.topic_matches_sub(s.topic_filter, topic))]

    def __iter__(self) -> Iterator[Subscription]:
        for subs in self._exact.values():
            yield from subs
        yield from self._wildcard

    def clear(self) -> None:
        self._exact.clear()
        self._wildcard.clear()
