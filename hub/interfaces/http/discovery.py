"""How Home Assistant's Bolt Hub integration (custom_components/bolt_hub) finds the HTTP API
(hub.interfaces.announce): inside the add-on the Supervisor's `bolt_hub` discovery with the API's
address and token (the Supervisor hands discovery messages to Home Assistant, as the Mosquitto
add-on hands over its broker's credentials), so the user adds the hub with one click; standalone an mDNS `_bolt-hub._tcp.local.` service with the API's port and the
hub's version, never the token."""

from __future__ import annotations

import socket
from typing import Any

from hub import __version__
from hub.interfaces.announce import Announcer, DiscoveryOptions

API_SERVICE_TYPE = "_bolt-hub._tcp.local."


class ApiDiscovery(Announcer):
    """Announces the HTTP API (the integration's config flow takes it)."""

    service = "bolt_hub"
    zeroconf_type = API_SERVICE_TYPE

    def __init__(self, options: DiscoveryOptions, token: str, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self._token = token

    def supervisor_config(self) -> dict[str, Any]:
        return {"url": f"http://{socket.gethostname()}:{self.port}", "api_token": self._token,
                "version": __version__}

    def zeroconf_properties(self) -> dict[str, str]:
        return {**super().zeroconf_properties(), "version": __version__}
