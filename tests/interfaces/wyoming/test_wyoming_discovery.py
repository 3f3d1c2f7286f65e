"""Discovery: real mDNS on loopback, and the Supervisor's discovery endpoint (a local stand-in)."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest
from aiohttp import web
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info
from zeroconf import IPVersion
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from hub.config import validate
from hub.options import hub_options
from hub.interfaces import announce
from hub.interfaces.wyoming.discovery import WYOMING_SERVICE_TYPE, Discovery
from hub.interfaces.wyoming.server import WyomingServer
from helpers.wyoming_fake_agent import ScriptedAgent

pytestmark = pytest.mark.timeout(60)


async def find_service(name: str) -> AsyncServiceInfo | None:
    browser = AsyncZeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    try:
        info = AsyncServiceInfo(WYOMING_SERVICE_TYPE, name)
        found = await info.async_request(browser.zeroconf, 3000)
        return info if found else None
    finally:
        await browser.async_close()


async def test_server_is_found_by_zeroconf_and_answers_describe() -> None:
    server = WyomingServer(ScriptedAgent(), hub_options(validate({})).wyoming, host="127.0.0.1", port=0, discovery=Discovery(hub_options(validate({})).wyoming.discovery, environ={}))
    await server.start()
    try:
        name = f"{server.discovery.zeroconf_name()}.{WYOMING_SERVICE_TYPE}"
        info = await find_service(name)
        assert info is not None, "the hub's _wyoming._tcp service was not found over mDNS"
        assert info.port == server.port and info.parsed_addresses() == ["127.0.0.1"]
        async with AsyncTcpClient(info.parsed_addresses()[0], info.port) as client:
            await client.write_event(Describe().event())
            event = await asyncio.wait_for(client.read_event(), 5)
        assert event is not None and Info.is_type(event.type)
    finally:
        await server.stop()
    assert await find_service(name) is None, "the service is withdrawn when the server stops"


async def test_zeroconf_off_announces_nothing() -> None:
    config = validate({"zeroconf": False})
    server = WyomingServer(ScriptedAgent(), hub_options(config).wyoming, host="127.0.0.1", port=0, discovery=Discovery(hub_options(config).wyoming.discovery, environ={}))
    await server.start()
    try:
        assert await find_service(f"{server.discovery.zeroconf_name()}.{WYOMING_SERVICE_TYPE}") is None
    finally:
        await server.stop()


async def test_zeroconf_failure_warns_and_does_not_raise(caplog: pytest.LogCaptureFixture) -> None:
    discovery = Discovery(hub_options(validate({})).wyoming.discovery, environ={})
    with caplog.at_level(logging.WARNING):
        await discovery.start(10599, "192.0.2.254")  # TEST-NET-1: on no interface, cannot bind
    assert "zeroconf announcement failed" in caplog.text
    assert discovery._zeroconf is None
    await discovery.stop()


class FakeSupervisor:
    """Stands in for http://supervisor: records discovery posts, answers with a chosen status."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.posts: list[tuple[dict, str]] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.posts.append((await request.json(), request.headers.get("Authorization", "")))
        if self.status >= 300:
            return web.json_response({"result": "error", "message": "nope"}, status=self.status)
        return web.json_response({"result": "ok", "data": {"uuid": "abc"}})


@pytest.fixture
async def supervisor():
    fake = FakeSupervisor()
    app = web.Application()
    app.router.add_post("/discovery", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    yield fake, f"http://127.0.0.1:{port}"
    await runner.cleanup()


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(announce, "_SUPERVISOR_RETRY_S", 0.05)


async def test_addon_posts_wyoming_discovery_to_the_supervisor(supervisor) -> None:
    fake, url = supervisor
    config = validate({})
    discovery = Discovery(hub_options(config).wyoming.discovery, environ={"SUPERVISOR_TOKEN": "sv-token"}, supervisor_url=url)
    server = WyomingServer(ScriptedAgent(), hub_options(config).wyoming, host="127.0.0.1", port=0, discovery=discovery)
    await server.start()
    try:
        await asyncio.wait_for(asyncio.shield(discovery._task), 10)
        [(body, auth)] = fake.posts
        assert body == {"service": "wyoming", "config": {"uri": f"tcp://{socket.gethostname()}:{server.port}"}}
        assert auth == "Bearer sv-token"
        assert discovery._zeroconf is None, "no mDNS inside the add-on"
    finally:
        await server.stop()


async def test_supervisor_refusing_discovery_warns(supervisor, caplog: pytest.LogCaptureFixture) -> None:
    fake, url = supervisor
    fake.status = 500
    discovery = Discovery(hub_options(validate({})).wyoming.discovery, environ={"SUPERVISOR_TOKEN": "t"}, supervisor_url=url)
    with caplog.at_level(logging.WARNING):
        await discovery.start(10500)
        await asyncio.wait_for(asyncio.shield(discovery._task), 10)
    assert len(fake.posts) == announce._SUPERVISOR_ATTEMPTS, "a server error is retried"
    assert "Supervisor discovery failed" in caplog.text and "HTTP 500" in caplog.text
    await discovery.stop()


async def test_unreachable_supervisor_warns(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    discovery = Discovery(hub_options(validate({})).wyoming.discovery, environ={"SUPERVISOR_TOKEN": "t"}, supervisor_url=f"http://127.0.0.1:{port}")
    with caplog.at_level(logging.WARNING):
        await discovery.start(10500)
        await asyncio.wait_for(asyncio.shield(discovery._task), 10)
    assert "Supervisor discovery failed" in caplog.text
    await discovery.stop()
