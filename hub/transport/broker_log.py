"""The embedded broker's (amqtt's) log, kept to what a user can read.

amqtt logs each message a client did not acknowledge in time twice, as a warning and as an ERROR
with its own traceback ("Task failed and will be skipped"): a flood of 5,000 discovery configs
wrote 8,857 of them, 11 MB. Its warnings and errors are said in one line each, without amqtt's
traceback, and each kind at most once a minute, with a count of the ones left out.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter

EVERY_S = 60.0
_LOGGERS = ("amqtt", "amqtt.broker", "amqtt.mqtt.protocol.handler", "amqtt.mqtt.protocol.broker_handler",
            "amqtt.adapters", "amqtt.plugins.manager", "amqtt.session")


class BrokerLogLimit(logging.Filter):
    """One line per kind of broker warning or error per `every_s`, without a traceback."""

    def __init__(self, every_s: float = EVERY_S) -> None:
        super().__init__()
        self._every_s = every_s
        self._last: dict[str, float] = {}
        self._left_out: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        error = record.exc_info[1] if record.exc_info else None
        kind = f"{record.name} {type(error).__name__ if error else ''} {re.sub(r'[0-9]+', '#', str(record.msg))[:60]}"
        now = time.monotonic()
        if now - self._last.get(kind, -self._every_s) < self._every_s:
            self._left_out[kind] += 1
            return False
        self._last[kind] = now
        text = record.getMessage()[:300]
        if error is not None:
            text = f"{text} ({type(error).__name__}: {str(error)[:200]})"
            record.exc_info = record.exc_text = None
        if left_out := self._left_out.pop(kind, 0):
            text = f"{text} (and {left_out} more like it since the last such line)"
        record.msg, record.args = "%s", (text,)
        return True


def limit_broker_log() -> None:
    """Install the filter on amqtt's loggers (once)."""
    limit = BrokerLogLimit()
    names = {*_LOGGERS, *(n for n in logging.Logger.manager.loggerDict if n.startswith("amqtt."))}
    for name in sorted(names):
        logger = logging.getLogger(name)
        if not any(isinstance(f, BrokerLogLimit) for f in logger.filters):
            logger.addFilter(limit)
