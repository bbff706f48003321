"""Addresses of the provisioning interface, as `ip` reports them (possibly inside another
network namespace, through the command prefix)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ironsight.discoverd.pxe.commands import run_command


@dataclass(frozen=True)
class InterfaceAddresses:
    ipv4: list[str]
    ipv6: list[str]  # global scope only: what a router advertisement needs


def parse_ip_addr(output: str) -> InterfaceAddresses:
    """`ip -o addr show dev X`: one address per line, `... inet 10.0.0.1/24 ... scope global`."""
    ipv4: list[str] = []
    ipv6: list[str] = []
    for line in output.splitlines():
        words = line.split()
        for family, found in (("inet", ipv4), ("inet6", ipv6)):
            if family in words and words.index(family) + 1 < len(words):
                address = words[words.index(family) + 1].split("/")[0]
                if family == "inet" or "global" in words:
                    found.append(address)
    return InterfaceAddresses(ipv4, ipv6)


async def interface_addresses(name: str, prefix: Sequence[str] = ()
                              ) -> InterfaceAddresses | None:
    """None when there is no such interface."""
    code, out = await run_command([*prefix, "ip", "-o", "addr", "show", "dev", name])
    return parse_ip_addr(out) if code == 0 else None


async def neighbour_mac(address: str, interface: str, prefix: Sequence[str] = ()) -> str | None:
    """The link-layer address the kernel's neighbour table gives `address` on `interface`,
    lower case; None when it has none."""
    code, out = await run_command([*prefix, "ip", "neigh", "show", "to", address, "dev",
                                   interface])
    return parse_neigh(out) if code == 0 else None


def parse_neigh(output: str) -> str | None:
    """`ip neigh show to ADDR dev IF`: `ADDR lladdr aa:bb:... STATE`; a FAILED or
    INCOMPLETE entry names no usable MAC."""
    words = output.split()
    if "lladdr" not in words or {"FAILED", "INCOMPLETE"} & set(words):
        return None
    index = words.index("lladdr") + 1
    return words[index].lower() if index < len(words) else None
