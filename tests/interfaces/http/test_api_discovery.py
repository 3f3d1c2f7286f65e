"""How Home Assistant's Bolt Hub integration finds the HTTP API (issue 41): the Supervisor's
`bolt_hub` discovery inside the add-on (address and token), mDNS `_bolt-hub._tcp.local.` elsewhere
(address, port and version, never the token). Real mDNS on loopback; the Supervisor's discovery
endpoint is a local stand-in."""

from __future__ import annotations

import asyncio
import socket

import pytest
from zeroconf import IPVersion
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from hub import __version__
from hub.config import validate
from hub.interfaces import announce
from hub.interfaces.http.discovery import API_SERVICE_TYPE, ApiDiscovery
from hub.options import hub_options
from interfaces.wyoming.test_wyoming_discovery import supervisor  # noqa: F401  (a fixture)

pytestmark = pytest.mark.timeout(60)
OPTIONS = hub_options(validate({"instance_name": "Upstairs hub"})).http.discovery


async def test_the_addon_tells_home_assistant_the_api_and_its_token(supervisor, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr(announce, "_SUPERVISOR_RETRY_S", 0.05)
    fake, url = supervisor
    discovery = ApiDiscovery(OPTIONS, "the-token", environ={"SUPERVISOR_TOKEN": "sv-token"}, supervisor_url=url)
    await discovery.start(8099)
    try:
        await asyncio.wait_for(asyncio.shield(discovery._task), 10)
        [(body, auth)] = fake.posts
        assert body == {"service": "bolt_hub", "config": {"url": f"http://{socket.gethostname()}:8099",
                                                          "api_token": "the-token", "version": __version__}}
        assert auth == "Bearer sv-token" and discovery._zeroconf is None
    finally:
        await discovery.stop()


async def test_a_standalone_hub_is_found_by_zeroconf_without_its_token() -> None:
    discovery = ApiDiscovery(OPTIONS, "the-token", environ={})
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    await discovery.start(port, "127.0.0.1")
    name = f"{discovery.zeroconf_name()}.{API_SERVICE_TYPE}"
    browser = AsyncZeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    try:
        info = AsyncServiceInfo(API_SERVICE_TYPE, name)
        assert await info.async_request(browser.zeroconf, 3000), "the _bolt-hub._tcp service was not found"
        assert info.port == port and info.parsed_addresses() == ["127.0.0.1"]
        assert info.decoded_properties == {"name": "Upstairs hub", "version": __version__}
    finally:
        await browser.async_close()
        await discovery.stop()
