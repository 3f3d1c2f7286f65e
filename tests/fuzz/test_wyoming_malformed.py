"""Property: whatever malformed event lines a Wyoming client sends after a first good event, the real server (scripted
agent) answers each with an `error` event (or a clear not-handled) and keeps the connection usable: a ping sent after
them still gets its pong. No traceback reaches the log."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hub.config import validate
from hub.options import hub_options
from hub.interfaces.wyoming.server import WyomingServer
from helpers.wyoming_fake_agent import ScriptedAgent

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10)
NOT_A_LENGTH = st.none() | st.integers(max_value=-1) | st.text(max_size=5) | st.floats(allow_nan=False) | st.booleans()

# each: one line the server must refuse (no newline inside, so the stream stays in step); empty
# values (data [] or data_length "") read as absent, which is lenient, not malformed
BAD_LINES = st.one_of(
    st.binary(max_size=200).filter(lambda b: b"\n" not in b).filter(lambda b: not _is_valid_header(b)),
    JSON_VALUES.filter(lambda v: not isinstance(v, dict)).map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"type": JSON_VALUES.filter(lambda v: not isinstance(v, str))}).map(
        lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"type": st.sampled_from(["transcript", "describe", "ping", "x"]),
                           "data": JSON_VALUES.filter(lambda v: bool(v) and not isinstance(v, dict))}).map(
        lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"type": st.sampled_from(["transcript", "ping"]), "data_length": NOT_A_LENGTH}).filter(
        lambda v: bool(v["data_length"])).map(lambda v: json.dumps(v).encode()),
)


def _is_valid_header(line: bytes) -> bool:
    try:
        header = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(header, dict) and isinstance(header.get("type"), str)


@pytest.fixture(scope="module")
def server_port() -> Iterator[int]:
    """The server on its own loop in a thread, so hypothesis drives it with plain calls."""
    loop = asyncio.new_event_loop()
    server = WyomingServer(ScriptedAgent(), hub_options(validate({})).wyoming, host="127.0.0.1", port=0, discovery=False)
    loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield server.port
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


async def _exchange(port: int, lines: list[bytes]) -> list[dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        # a first good event: a first line that is no event drops the connection unanswered
        writer.write(b'{"type": "ping", "data": {"text": "hello"}}\n')
        writer.write(b"".join(line + b"\n" for line in lines))
        writer.write(b'{"type": "ping", "data": {"text": "still there"}}\n')
        await writer.drain()
        headers = []
        while len(headers) < 2 or headers[-1].get("type") != "pong":
            header = json.loads(await asyncio.wait_for(reader.readline(), 10))
            if header.get("data_length"):
                header["data"] = json.loads(await reader.readexactly(header["data_length"]))
            headers.append(header)
        return headers
    finally:
        writer.close()


@pytest.mark.timeout(120)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(BAD_LINES, min_size=1, max_size=5))
def test_malformed_events_get_errors_and_the_connection_survives(
        server_port: int, lines: list[bytes], caplog: pytest.LogCaptureFixture) -> None:
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        headers = asyncio.run(_exchange(server_port, lines))
    # a protocol error, or (for a transcript whose empty data reads as no text) "not handled"
    assert headers[0]["data"]["text"] == "hello"
    headers = headers[1:]
    assert len(headers) == len(lines) + 1, (lines, headers)
    assert all(h["type"] in ("error", "not-handled") and h["data"]["text"] for h in headers[:-1]), headers
    assert headers[-1]["data"]["text"] == "still there"
    assert not [r for r in caplog.records if r.exc_info], "a traceback reached the log"
