"""`physical-network`: a port's `physical_network` from its NIC's address and a CIDR map.

`[processing] physical_network_cidr_map` (CIDR:physnet, checked at start) maps networks to
physical networks; a NIC that validate_interfaces kept (so it requires `interfaces`) gets the
physical network of the first network that holds its IPv4 address, else its IPv6 address.
As upstream, a port's different physical network is replaced. A port created in the same run
is created with it.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import INTERFACES
from ironsight.discoverd.plugins.validate_interfaces import named_interfaces

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
OPTION = "[processing] physical_network_cidr_map"


def parse_map(entries: list[str]) -> list[tuple[Network, str]]:
    """`CIDR:physnet` entries (the physnet after the last colon: IPv6 CIDRs hold colons)."""
    parsed = []
    for entry in entries:
        cidr, sep, physnet = entry.rpartition(":")
        if not sep or not cidr or not physnet.strip():
            raise ConfigError(f"{OPTION}: {entry!r} is not CIDR:physical_network")
        try:
            parsed.append((ipaddress.ip_network(cidr.strip(), strict=False), physnet.strip()))
        except ValueError as exc:
            raise ConfigError(f"{OPTION}: {entry!r}: {exc}") from None
    return parsed


def _address(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(str(value).split("/")[0]) if value else None
    except ValueError:
        return None


class PhysicalNetwork(ProcessingHook):
    name = "physical-network"
    requires = (INTERFACES,)

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.networks = parse_map(conf.processing.physical_network_cidr_map)

    def physical_network(self, iface: dict[str, Any]) -> str | None:
        for key in ("ipv4_address", "ipv6_address"):
            address = _address(iface.get(key))
            for network, physnet in self.networks:
                if address is not None and address in network:
                    return physnet
        return None

    def before_update(self, ctx: ProcessingContext) -> None:
        nics = ctx.get(INTERFACES).all
        ports = {str(p.get("address", "")).lower(): p for p in ctx.ports}
        for name, iface in named_interfaces(ctx):
            physnet = self.physical_network(iface) if name in nics else None
            if physnet is None:
                continue
            port = ports.get(nics[name].mac)
            if port is None:
                ctx.changes.port_fields.setdefault(nics[name].mac, {})[
                    "physical_network"] = physnet
            elif port.get("physical_network") != physnet:
                ctx.changes.patch_port(str(port["uuid"]), {
                    "op": "replace", "path": "/physical_network", "value": physnet})


class PhysnetCidrMap(PhysicalNetwork):
    """ironic-inspector's name for it (whose option was [port_physnet] cidr_map)."""

    name = "physnet_cidr_map"
