"""How Home Assistant finds the hub's Wyoming server (hub.interfaces.announce): inside the add-on
the Supervisor's `wyoming` discovery with `{"uri": "tcp://<container hostname>:<port>"}`, as the
official Wyoming add-ons send it; standalone an mDNS `_wyoming._tcp.local.` service."""

from __future__ import annotations

import socket
from typing import Any

from hub.interfaces.announce import Announcer

WYOMING_SERVICE_TYPE = "_wyoming._tcp.local."


class Discovery(Announcer):
    """Announces the Wyoming server (HA's wyoming integration takes it)."""

    service = "wyoming"
    zeroconf_type = WYOMING_SERVICE_TYPE

    def supervisor_config(self) -> dict[str, Any]:
        return {"uri": f"tcp://{socket.gethostname()}:{self.port}"}
