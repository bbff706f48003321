"""A node's static network for the inspection ramdisk, from its `network_data` (Ironic's
field, microversion 1.66: the OpenStack network_data.json format).

A node booted from virtual media may sit on a network where no DHCP server of ours answers;
its ramdisk then takes its address from these kernel parameters (the ramdisk's /init reads
`ironsight.ip=`, `ironsight.gateway=`, `ironsight.dns=` and `BOOTIF=`). Only what the
ramdisk needs to post its report is used: the first IPv4 and the first IPv6 network with a
static address on one link, that link's default route, and the DNS services. A network of
type `ipv4_dhcp`/`ipv6_dhcp`/`ipv6_slaac` (or none at all) leaves the ramdisk on DHCP.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any

from ironsight.common.exceptions import InvalidParameterValue

STATIC_TYPES = {"ipv4": 4, "ipv6": 6}


def _invalid(why: str) -> InvalidParameterValue:
    return InvalidParameterValue(f"network_data cannot configure the ramdisk: {why}")


def _interface(address: str, netmask: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    try:
        if "/" in address or netmask in (None, ""):
            return ipaddress.ip_interface(address)
        return ipaddress.ip_interface(f"{address}/{_prefix(str(netmask))}")
    except ValueError:
        raise _invalid(f"{address!r} with netmask {netmask!r} is not an address") from None


def _prefix(netmask: str) -> int:
    """A netmask's length, IPv6 ones too (ffff:ffff:ffff:ffff::, which `ipaddress` takes
    only as a length); ValueError when its ones are not contiguous."""
    if netmask.isdigit():
        return int(netmask)
    mask = ipaddress.ip_address(netmask)
    bits = mask.max_prefixlen
    ones = bin(int(mask)).count("1")
    if int(mask) != ((1 << ones) - 1) << (bits - ones):
        raise ValueError(netmask)
    return ones


def _gateway(network: Mapping[str, Any], version: int) -> str | None:
    for route in network.get("routes") or ():
        if not isinstance(route, Mapping):
            continue
        try:
            prefix = ipaddress.ip_network(
                f"{route.get('network')}/{_prefix(str(route.get('netmask')))}", strict=False)
            gateway = ipaddress.ip_address(str(route.get("gateway")))
        except ValueError:
            continue
        if prefix.prefixlen == 0 and gateway.version == version:
            return str(gateway)
    return None


def _link_macs(data: Mapping[str, Any]) -> dict[str, str]:
    links = data.get("links") or ()
    if not isinstance(links, Sequence):
        raise _invalid("'links' is not a list")
    return {str(link["id"]): str(link.get("ethernet_mac_address") or "").lower()
            for link in links if isinstance(link, Mapping) and "id" in link}


def static_args(network_data: Mapping[str, Any] | None, macs: Sequence[str] = ()) -> list[str]:
    """The kernel parameters of the node's static addresses (empty: DHCP). `macs`: the
    node's port addresses, PXE-enabled first: the link whose MAC is one of them is
    preferred, and its MAC becomes BOOTIF."""
    if not network_data:
        return []
    if not isinstance(network_data, Mapping):
        raise _invalid("it is not an object")
    link_macs = _link_macs(network_data)
    networks = network_data.get("networks") or ()
    if not isinstance(networks, Sequence):
        raise _invalid("'networks' is not a list")
    static = [n for n in networks
              if isinstance(n, Mapping) and n.get("type") in STATIC_TYPES and n.get("ip_address")]
    if not static:
        return []
    known = [m.lower() for m in macs]

    def rank(network: Mapping[str, Any]) -> int:
        mac = link_macs.get(str(network.get("link")))
        return known.index(mac) if mac in known else len(known)

    ranked = sorted(static, key=rank)  # stable: the data's order among equals
    link = str(ranked[0].get("link"))
    args: list[str] = []
    mac = link_macs.get(link)
    if mac:
        args.append("BOOTIF=01-" + mac.replace(":", "-"))
    for version in (4, 6):
        network = next((n for n in ranked if str(n.get("link")) == link
                        and STATIC_TYPES[str(n["type"])] == version), None)
        if network is None:
            continue
        iface = _interface(str(network["ip_address"]), network.get("netmask"))
        if iface.version != version:
            raise _invalid(f"network {network.get('id')!r} of type {network['type']} has the "
                           f"address {iface.ip}")
        args.append(f"ironsight.ip={iface.with_prefixlen}")
        gateway = _gateway(network, version)
        if gateway:
            args.append(f"ironsight.gateway={gateway}")
    dns = [str(s["address"]) for s in network_data.get("services") or ()
           if isinstance(s, Mapping) and s.get("type") == "dns" and _is_address(s.get("address"))]
    if dns:
        args.append("ironsight.dns=" + ",".join(dns))
    return args


def _is_address(value: Any) -> bool:
    try:
        ipaddress.ip_address(str(value))
    except ValueError:
        return False
    return True
