"""Which network peers may use a port that has no authentication (the Wyoming port).

The option is a comma-separated list of addresses or networks; empty means the defaults: in the
add-on, Home Assistant's Supervisor network (Core and add-ons) and loopback; standalone, loopback
and the private networks, where the Home Assistant that talks to the hub usually runs (another
machine of the home network), while addresses from the internet are refused.
"""

from __future__ import annotations

import ipaddress
from typing import Sequence

from hub.config import ConfigError

ADDON_CLIENTS = ("172.30.32.0/23", "127.0.0.0/8", "::1")
STANDALONE_CLIENTS = ("127.0.0.0/8", "::1", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                      "169.254.0.0/16", "fc00::/7", "fe80::/10")

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def allowed_networks(option: str | None, in_addon: bool) -> tuple[IpNetwork, ...]:
    """The `wyoming_allowed_clients` option as networks (the defaults when empty); ConfigError for
    an entry that is neither an address nor a network."""
    entries = [e.strip() for e in (option or "").split(",") if e.strip()]
    networks = []
    for entry in entries or (ADDON_CLIENTS if in_addon else STANDALONE_CLIENTS):
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ConfigError(f"wyoming_allowed_clients: {entry!r} is not an IP address or network "
                              "(e.g. 192.168.1.20 or 192.168.1.0/24)") from None
    return tuple(networks)


def is_allowed(host: str, networks: Sequence[IpNetwork]) -> bool:
    """Whether a peer address is in one of `networks` (an IPv4-mapped IPv6 address counts as IPv4)."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in networks)
