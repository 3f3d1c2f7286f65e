"""The `id` a JSON request over MQTT carries so its answer can be matched (asks, tool calls)."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_ID_CHARS = 200
_ID_PEEK = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,18})')

RequestId = str | int | None


def peek_id(payload: bytes) -> RequestId:
    """The id of an unreadable request, when its first bytes show one (so the error reaches its sender)."""
    match = _ID_PEEK.search(payload[:4096].decode("utf-8", "replace"))
    if not match:
        return None
    try:
        value: str | int | None = json.loads(match.group(1))
        return value
    except ValueError:
        return None


def checked_id(data: dict[str, Any]) -> RequestId:
    """The request's `id`; ValueError with a message for the sender when it is not usable."""
    request_id = data.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, (str, int))):
        raise ValueError("'id' must be a string or an integer")
    if isinstance(request_id, str) and len(request_id) > MAX_ID_CHARS:
        raise ValueError(f"'id' longer than {MAX_ID_CHARS} characters")
    return request_id
