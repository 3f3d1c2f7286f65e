"""How Home Assistant finds the hub's Wyoming server.

- Inside the add-on (SUPERVISOR_TOKEN set): `POST http://supervisor/discovery` with
  `{"service": "wyoming", "config": {"uri": "tcp://<container hostname>:<port>"}}`, as the official
  Wyoming add-ons do; HA then offers to add the hub.
- Standalone (option `zeroconf`, on by default): an mDNS `_wyoming._tcp.local.` service, which
  HA's zeroconf integration discovers on the same network.

Discovery failing never stops the hub: it logs a warning and the user can add the hub by hand.
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
WYOMING_SERVICE_TYPE = "_wyoming._tcp.local."
_MDNS_GROUP = "224.0.0.251"
_SUPERVISOR_ATTEMPTS = 5
_SUPERVISOR_RETRY_S = 5.0


@dataclass(frozen=True)
class DiscoveryOptions:
    zeroconf: bool
    instance_name: str


class Discovery:
    """Announces the Wyoming server the right way for where the hub runs."""

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

    async def start(self, port: int, host: str | None = None) -> None:
        """Announce `port`; `host` is the address to announce by mDNS (default: the outward one)."""
        self.port = port
        self._zeroconf_host = host
        if self.supervisor_token:
            self._task = asyncio.create_task(self._announce_to_supervisor(), name="supervisor discovery")
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
        return {"service": "wyoming", "config": {"uri": f"tcp://{socket.gethostname()}:{self.port}"}}

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
                            _LOGGER.info("sent Wyoming discovery to the Supervisor (%s)", self.supervisor_payload()["config"]["uri"])
                            return True
                        last_error = f"HTTP {response.status}: {(await response.text())[:200]}"
                        if response.status in (401, 403):
                            break  # retrying will not help
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as err:
                last_error = str(err) or type(err).__name__
            if attempt + 1 < _SUPERVISOR_ATTEMPTS:
                await asyncio.sleep(_SUPERVISOR_RETRY_S)
        _LOGGER.warning("Supervisor discovery failed (add the hub by host and port instead): %s", last_error)
        return False

    # --- zeroconf -------------------------------------------------------------------------

    def zeroconf_name(self) -> str:
        """Stable per machine, and per port so two hubs on one host do not clash."""
        return f"bolt-hub-{uuid.getnode():012x}-{self.port}"

    async def _register_zeroconf(self) -> None:
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

        host = self._zeroconf_host or _outward_ipv4()
        self._service = AsyncServiceInfo(
            WYOMING_SERVICE_TYPE,
            f"{self.zeroconf_name()}.{WYOMING_SERVICE_TYPE}",
            addresses=[socket.inet_aton(host)],
            port=self.port,
            properties={"name": self.options.instance_name},
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


def _outward_ipv4() -> str:
    """The address other machines reach this one at (the route to the mDNS group)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((_MDNS_GROUP, 1))  # UDP connect sends nothing; it only picks the route
        address: str = probe.getsockname()[0]
        return address
