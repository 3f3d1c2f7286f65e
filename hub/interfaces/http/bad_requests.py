"""aiohttp logs a request it cannot parse (a 10,000-character path, a broken header) as an ERROR
with a traceback, though the client already got its 400: bad input, not a fault of the hub. This
filter says it in one warning line."""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import BadHttpMessage

SERVER_LOGGER = "aiohttp.server"


class BadRequestsAsWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, BadHttpMessage):
            reason = str(error.message).splitlines()[0] if error.message else type(error).__name__
            record.msg, record.args = "%s: %s (%s, answered 400)", (record.getMessage(), type(error).__name__, reason[:200])
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info = record.exc_text = None
        return True


def quiet_bad_requests() -> None:
    """Install the filter on aiohttp's server logger (once)."""
    logger = logging.getLogger(SERVER_LOGGER)
    if not any(isinstance(f, BadRequestsAsWarnings) for f in logger.filters):
        logger.addFilter(BadRequestsAsWarnings())
