"""Who may use the Wyoming port, and for how long (issue #17 points 1 and 12), on real sockets.

The port has no authentication. A web page the user opens may POST to it (a no-cors
`text/plain` request): the first line is then `POST / HTTP/1.1`, and the JSON body must never
run. Clients outside the allow-list, connections beyond the cap (told so) and idle ones are closed.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp
import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info

from hub.config import ConfigError, validate
from hub.options import hub_options
from hub.interfaces.client_networks import allowed_networks, is_allowed
from hub.interfaces.wyoming.server import WyomingServer
from helpers.wyoming_fake_agent import ScriptedAgent
from reliability.served_hub import ServedHub

pytestmark = pytest.mark.timeout(60)
TOKEN = "wyoming-hardening-token"


def browser_post(port: int, body: str) -> bytes:
    """What Chrome sends for `fetch("http://127.0.0.1:PORT/", {method: "POST", mode: "no-cors",
    body})` from a page on another site: a text/plain body needs no CORS preflight."""
    data = body.encode()
    headers = [
        "POST / HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: keep-alive", f"Content-Length: {len(data)}",
        'sec-ch-ua: "Chromium";v="131", "Not_A Brand";v="24"', "sec-ch-ua-mobile: ?0",
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
        'sec-ch-ua-platform: "Linux"', "Content-Type: text/plain;charset=UTF-8", "Accept: */*",
        "Origin: http://attacker.example", "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors",
        "Sec-Fetch-Dest: empty", "Referer: http://attacker.example/", "Accept-Encoding: gzip, deflate, br, zstd",
        "Accept-Language: en-US,en;q=0.9",
    ]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + data


async def send_and_wait_for_close(port: int, raw: bytes, timeout: float = 10) -> bytes:
    """Send `raw`, then read until the server closes the connection; what it answered (a reset,
    from a server closing with our bytes unread, is a close)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout)
    except ConnectionResetError:
        return b""
    except TimeoutError:
        return b"(still open after %d s)" % timeout
    finally:
        writer.close()


async def lock_state(hub: ServedHub) -> str:
    url = f"http://127.0.0.1:{hub.ports['http_port']}/api/entities?domain=lock"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
        async with session.get(url) as response:
            [lock] = [e for e in await response.json() if e["entity_id"] == "lock.front_door"]
            return lock["state"]


async def wyoming_say(port: int, text: str) -> str:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcript(text).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), 120)
            assert event is not None, "the hub closed the connection"
            if Handled.is_type(event.type) or NotHandled.is_type(event.type):
                return event.data["text"]


@pytest.mark.timeout(300)
async def test_a_web_pages_post_to_the_wyoming_port_runs_nothing(tmp_path: Path, smollm_path: Path) -> None:
    """Two cross-site POSTs, "unlock the front door" then "yes", leave the demo home's lock locked;
    the same two sentences sent as Wyoming transcripts open it (so the test sees an unlock)."""
    hub = ServedHub(tmp_path, smollm_path, {"api_token": TOKEN}).start()
    try:
        port = hub.ports["wyoming_port"]
        deadline = time.monotonic() + 60
        while await lock_state(hub) != "locked":  # the demo home announces itself after start
            assert time.monotonic() < deadline, "the demo lock never showed up locked"
            await asyncio.sleep(0.2)
        answers = []
        for text in ("unlock the front door", "yes"):
            body = json.dumps({"type": "transcript", "data": {"text": text}}) + "\n"
            answers.append(await send_and_wait_for_close(port, browser_post(port, body)))
        await asyncio.sleep(1.0)  # a turn that was started anyway would have acted by now
        assert await lock_state(hub) == "locked"
        assert answers == [b"", b""], f"the hub answered a web page's request: {answers!r:.300}"
        assert "first line is not a Wyoming event" in hub.log()

        question = await wyoming_say(port, "unlock the front door")
        assert await lock_state(hub) == "locked", question  # it asks first
        await wyoming_say(port, "yes")
        deadline = time.monotonic() + 30
        while await lock_state(hub) != "unlocked":
            assert time.monotonic() < deadline, "a real Wyoming client's confirmed unlock did not happen"
            await asyncio.sleep(0.2)
    finally:
        hub.stop()


@pytest.fixture
def agent() -> ScriptedAgent:
    return ScriptedAgent()


async def started(agent: ScriptedAgent, **options) -> WyomingServer:
    server = WyomingServer(agent, hub_options(validate(options)).wyoming, host="127.0.0.1", port=0, discovery=False)
    await server.start()
    return server


async def describe(port: int) -> bool:
    """Whether a describe on a fresh connection is answered with info."""
    try:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            event = await asyncio.wait_for(client.read_event(), 5)
    except (ConnectionError, asyncio.IncompleteReadError):
        return False
    return event is not None and Info.is_type(event.type)


async def test_clients_outside_the_allow_list_are_refused(agent: ScriptedAgent) -> None:
    server = await started(agent, wyoming_allowed_clients="192.0.2.0/24, 2001:db8::/32")
    try:
        assert not await describe(server.port)
        raw = json.dumps({"type": "transcript", "data": {"text": "unlock the front door"}}).encode() + b"\n"
        assert await send_and_wait_for_close(server.port, raw) == b""
        assert agent.requests == []
    finally:
        await server.stop()
    server = await started(agent, wyoming_allowed_clients="192.0.2.0/24,127.0.0.1")
    try:
        assert await describe(server.port)
    finally:
        await server.stop()


def test_allow_list_defaults_and_bad_entries() -> None:
    addon, standalone = allowed_networks(None, in_addon=True), allowed_networks("", in_addon=False)
    assert is_allowed("172.30.32.1", addon) and is_allowed("172.30.33.254", addon)  # HA's internal network
    assert is_allowed("127.0.0.1", addon) and is_allowed("::1", addon) and is_allowed("::ffff:127.0.0.1", addon)
    assert not is_allowed("192.168.1.20", addon) and not is_allowed("172.30.34.1", addon)
    assert is_allowed("192.168.1.20", standalone) and is_allowed("10.1.2.3", standalone)  # the home network
    assert not is_allowed("8.8.8.8", standalone) and not is_allowed("2a00:1450::1", standalone)
    assert is_allowed("8.8.8.8", allowed_networks("0.0.0.0/0", in_addon=True))
    with pytest.raises(ConfigError, match="wyoming_allowed_clients: 'kitchen' is not an IP address"):
        allowed_networks("192.168.1.0/24, kitchen", in_addon=False)


async def test_two_hundred_idle_connections_do_not_stay_open(agent: ScriptedAgent) -> None:
    server = await started(agent, wyoming_idle_timeout=2, wyoming_max_connections=20)
    connections = []
    try:
        for _ in range(200):
            connections.append(await asyncio.open_connection("127.0.0.1", server.port))

        async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes | None:
            """What the server sent before it closed the connection (None: still open)."""
            try:
                return await asyncio.wait_for(reader.read(), seconds)
            except TimeoutError:
                return None

        answers = await asyncio.gather(*(closed_within(r, 1.5) for r, _ in connections))
        refused = [a for a in answers if a is not None]
        assert len(refused) >= 180, f"{len(refused)} of 200 closed at once"
        assert all(json.loads(a.split(b"\n")[0])["type"] == "error" for a in refused), "refused without a word"
        open_ones = [r for (r, _), answer in zip(connections, answers) if answer is None]
        assert all(a is not None for a in await asyncio.gather(*(closed_within(r, 5.0) for r in open_ones))), \
            "idle ones stayed open"
        assert not len(server.slots)
        assert await describe(server.port), "the server still serves after the flood"
    finally:
        for _, writer in connections:
            writer.close()
        await server.stop()


async def test_a_running_turn_keeps_its_connection_past_the_idle_timeout(agent: ScriptedAgent) -> None:
    server = await started(agent, wyoming_idle_timeout=1)
    try:
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Transcript("wait").event())
            await asyncio.sleep(2.5)  # the turn runs past the idle timeout
            agent.gate.set()
            events = []
            while not events or events[-1].type != "handled-stop":
                event = await asyncio.wait_for(client.read_event(), 5)
                assert event is not None, "the connection of a running turn was closed"
                events.append(event)
            assert Handled.from_event(events[-2]).text == "You said: wait"
            await asyncio.sleep(2)  # idle again, after the turn
            assert await asyncio.wait_for(client.read_event(), 5) is None
    finally:
        await server.stop()


@pytest.mark.parametrize("data, what", [
    ('{"text": "\\ud800 unlock"}', "lone surrogate"),
    ('{"text": "x", "deep": ' + "[" * 30_000 + "]" * 30_000 + "}", "nested too deeply"),
], ids=["lone-surrogate", "nested-30000"])
async def test_unusable_json_text_gets_an_error_event(agent: ScriptedAgent, data: str, what: str) -> None:
    server = await started(agent)
    try:
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Describe().event())
            assert Info.is_type((await asyncio.wait_for(client.read_event(), 5)).type)
            client._writer.write(b'{"type": "transcript", "data": ' + data.encode() + b"}\n")
            error = await asyncio.wait_for(client.read_event(), 5)
            assert error.type == "error" and error.data["code"] == "bad_json" and what in error.data["text"]
            await client.write_event(Describe().event())
            assert Info.is_type((await asyncio.wait_for(client.read_event(), 5)).type)
        assert agent.requests == []
    finally:
        await server.stop()
