"""How Home Assistant finds one of the hub's servers (`Announcer`; what each says: the Wyoming
server's `wyoming.discovery`, the HTTP API's `http.discovery`).

- Inside the add-on (SUPERVISOR_TOKEN set): `POST http://supervisor/discovery` with
  `{"service": <the HA integration's domain>, "config": {…}}`, as the official add-ons do; HA
  then offers to add it. The Supervisor passes on any service the add-on's config.yaml lists.
- Standalone (option `zeroconf`, on by default): an mDNS service of the server's type, which HA's
  zeroconf integration discovers on the same network.

Announcing failing never stops the hub: it logs a warning and the user adds the server by hand.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any

import aiohttp

_LOGGER = logging.getLogger(__name__)

SUPERVISOR_URL = "http://supervisor"
_MDNS_GROUP = "224.0.0.251"
_SUPERVISOR_ATTEMPTS = 5
_SUPERVISOR_RETRY_S = 5.0


@dataclass(frozen=True)
class DiscoveryOptions:
    zeroconf: bool
    instance_name: str


class Announcer:
    """Announces one server the right way for where the hub runs; a subclass says what:
    `service` and `supervisor_config()` for the Supervisor, `zeroconf_type` and
    `zeroconf_properties()` for mDNS."""

    service = ""  # the Supervisor discovery's service: the domain of the integration that takes it
    zeroconf_type = ""  # the mDNS service type, e.g. "_wyoming._tcp.local."

    def __init__(
        self,
        options: DiscoveryOptions,
        *,
        environ: dict[str, str] | None = None,
        supervisor_url: str = SUPERVISOR_URL,
    ) -> None:
        self.options = options
        self.port = 0
        self._environ = dict(os.environ) if environ is None else environ
        self._supervisor_url = supervisor_url.rstrip("/")
        self._zeroconf_host: str | None = None
        self._zeroconf: Any = None  # AsyncZeroconf
        self._service: Any = None  # AsyncServiceInfo
        self._task: asyncio.Task[bool] | None = None

    @property
    def supervisor_token(self) -> str | None:
        return self._environ.get("SUPERVISOR_TOKEN") or None

    def supervisor_config(self) -> dict[str, Any]:
        """What the integration is told inside the add-on (how to reach the server)."""
        raise NotImplementedError

    def zeroconf_properties(self) -> dict[str, str]:
        """The mDNS service's TXT record (never a secret: anyone on the network reads it)."""
        return {"name": self.options.instance_name}

    async def start(self, port: int, host: str | None = None) -> None:
        """Announce `port`; `host` is the address to announce by mDNS (default: the outward one)."""
        self.port = port
        self._zeroconf_host = host
        if self.supervisor_token:
            self._task = asyncio.create_task(self._announce_to_supervisor(), name=f"supervisor discovery ({self.service})")
        elif self.options.zeroconf:
            try:
                await self._register_zeroconf()
            except Exception as err:  # OSError, zeroconf errors: no multicast route, name clash, ...
                _LOGGER.warning("zeroconf announcement failed (add the hub by host and port instead): %s", err)
                await self._close_zeroconf()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self._close_zeroconf()

    # --- Supervisor -----------------------------------------------------------------------

    def supervisor_payload(self) -> dict[str, Any]:
        return {"service": self.service, "config": self.supervisor_config()}

    async def _announce_to_supervisor(self) -> bool:
        """POST the discovery message, retrying a few times while the Supervisor is not ready."""
        headers = {"Authorization": f"Bearer {self.supervisor_token}"}
        timeout = aiohttp.ClientTimeout(total=10)
        last_error = ""
        for attempt in range(_SUPERVISOR_ATTEMPTS):
            try:
                async with aiohttp.ClientSession(timeout=timeout) as session:
                    async with session.post(
                        f"{self._supervisor_url}/discovery", json=self.supervisor_payload(), headers=headers
                    ) as response:
                        if response.status < 300:
                            _LOGGER.info("sent %s discovery to the Supervisor (port %s)", self.service, self.port)
                            return True
                        last_error = f"HTTP {response.status}: {(await response.text())[:200]}"
                        if response.status in (401, 403):
                            break  # retrying will not help
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as err:
                last_error = str(err) or type(err).__name__
            if attempt + 1 < _SUPERVISOR_ATTEMPTS:
                await asyncio.sleep(_SUPERVISOR_RETRY_S)
        _LOGGER.warning("Supervisor discovery failed for %s (add the hub by hand instead): %s",
                        self.service, last_error)
        return False

    # --- zeroconf -------------------------------------------------------------------------

    def zeroconf_name(self) -> str:
        """Stable per machine, and per port so two servers or hubs on one host do not clash."""
        return f"bolt-hub-{uuid.getnode():012x}-{self.port}"

    async def _register_zeroconf(self) -> None:
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

        host = self._zeroconf_host or _outward_ipv4()
        self._service = AsyncServiceInfo(
            self.zeroconf_type,
            f"{self.zeroconf_name()}.{self.zeroconf_type}",
            addresses=[socket.inet_aton(host)],
            port=self.port,
            properties=self.zeroconf_properties(),
            server=f"{self.zeroconf_name()}.local.",
        )
        interfaces = [host] if self._zeroconf_host else None
        if interfaces:
            self._zeroconf = AsyncZeroconf(interfaces=interfaces, ip_version=IPVersion.V4Only)
        else:
            self._zeroconf = AsyncZeroconf(ip_version=IPVersion.V4Only)
        await self._zeroconf.async_register_service(self._service)
        _LOGGER.info("announced %s on %s:%s by zeroconf", self._service.name, host, self.port)

    async def _close_zeroconf(self) -> None:
        zeroconf, self._zeroconf = self._zeroconf, None
        if zeroconf is None:
            return
        try:
            if self._service is not None:
                await zeroconf.async_unregister_service(self._service)
            await zeroconf.async_close()
        except Exception as err:
            _LOGGER.debug("closing zeroconf: %s", err)
        self._service = None


def announced_host(bound: str) -> str | None:
    """The address to announce for a server bound to `bound`: that one, or (bound to all) None,
    the outward one."""
    return None if bound in ("0.0.0.0", "::", "") else bound


def _outward_ipv4() -> str:
    """The address other machines reach this one at (the route to the mDNS group)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((_MDNS_GROUP, 1))  # UDP connect sends nothing; it only picks the route
        address: str = probe.getsockname()[0]
        return address
