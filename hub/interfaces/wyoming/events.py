"""Reading Wyoming events from an untrusted peer: one bad event is consumed whole and named
(a `ProtocolProblem`), so the connection reads the next one cleanly; nothing is read past the
size caps."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from wyoming.event import Event

from hub.interfaces import json_input

MAX_DATA_BYTES = 1 << 20  # a transcript's JSON data block; larger blocks are skipped unread
MAX_PAYLOAD_BYTES = 16 << 20  # the hub takes no binary payloads; they are skipped unread


@dataclass(frozen=True)
class ProtocolProblem:
    """An event that could not be decoded; `code` is machine-readable, `text` says what.
    `not_an_event`: the line was no JSON event header at all (not a bad part of an event)."""

    code: str
    text: str
    not_an_event: bool = False


async def read_event_checked(reader: asyncio.StreamReader, head: bytes = b"") -> Event | ProtocolProblem | None:
    """Read one Wyoming event; None at end of stream, a ProtocolProblem for a bad event.
    `head`: the start of its header line, already read.

    Unlike `wyoming.event.async_read_event` (which treats bad JSON as end of stream), a bad event
    is consumed whole, so the next one is read cleanly.
    """
    try:
        line = head if head.endswith(b"\n") else head + await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as err:  # end of stream (maybe after a last unterminated line)
        line = head + err.partial
    except asyncio.LimitOverrunError:  # header line longer than the reader's limit
        await _skip_line(reader)
        return ProtocolProblem("too_large", "event header line is too long", not_an_event=True)
    if not line:
        return None
    if not line.strip():
        return ProtocolProblem("bad_event", "empty event header line", not_an_event=True)
    try:
        header = json_input.loads(line)
    except json_input.BadJson as err:
        return ProtocolProblem("bad_json", f"event header is not valid JSON: {err}", not_an_event=True)
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        return ProtocolProblem("bad_event", "event header must be a JSON object with a string 'type'",
                               not_an_event=True)
    data = header.get("data") or {}
    data_length = header.get("data_length") or 0
    payload_length = header.get("payload_length") or 0
    if not isinstance(data, dict):
        return ProtocolProblem("bad_event", "event 'data' must be a JSON object")
    if not (_is_length(data_length) and _is_length(payload_length)):
        return ProtocolProblem("bad_event", "data_length and payload_length must be non-negative integers")
    problem = None
    if data_length > MAX_DATA_BYTES:
        await _skip_bytes(reader, data_length)
        problem = ProtocolProblem("too_large", f"event data is larger than {MAX_DATA_BYTES} bytes")
    elif data_length:
        block = await reader.readexactly(data_length)
        try:
            extra = json_input.loads(block)
        except json_input.BadJson:
            extra = None
        if isinstance(extra, dict):
            data = {**data, **extra}
        else:
            problem = ProtocolProblem("bad_json", "event data block is not a JSON object of Unicode text")
    payload = None
    if payload_length > MAX_PAYLOAD_BYTES:
        await _skip_bytes(reader, payload_length)
        problem = problem or ProtocolProblem("too_large", f"event payload is larger than {MAX_PAYLOAD_BYTES} bytes")
    elif payload_length:
        payload = await reader.readexactly(payload_length)
    if problem is not None:
        return ProtocolProblem(problem.code, f"{header['type']}: {problem.text}")
    return Event(type=header["type"], data=data, payload=payload)


def _is_length(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


async def _skip_bytes(reader: asyncio.StreamReader, count: int) -> None:
    while count > 0:
        chunk = await reader.read(min(count, 1 << 16))
        if not chunk:
            raise asyncio.IncompleteReadError(b"", count)
        count -= len(chunk)


async def _skip_line(reader: asyncio.StreamReader) -> None:
    """Consume up to and including the next newline, however long the line is."""
    while True:
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as err:  # nothing consumed yet: drop what is buffered
            await reader.readexactly(err.consumed)
