"""`validate_interfaces`: which NICs the report has, which one booted, and which get ports.

Provides `interfaces`: every NIC with a valid MAC (by name, with its IP and whether it is the
PXE NIC, from `inventory.boot.pxe_interface` or `boot_interface`) and the ones chosen for
ports by `[processing] add_ports`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ironsight.common.ids import MAC_RE
from ironsight.discoverd.formats import mac_from_boot_interface
from ironsight.discoverd.plugins.base import HookError, ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import INTERFACES, Interfaces, Nic


def _usable_ip(ip: str | None) -> str | None:
    if not ip:
        return None
    try:
        return None if ipaddress.ip_address(ip.split("/")[0]).is_loopback else ip
    except ValueError:
        return None


def named_interfaces(ctx: ProcessingContext) -> list[tuple[str, dict[str, Any]]]:
    """The inventory's interfaces with the names the `interfaces` fact uses (`nicN` for a
    nameless one), so that other hooks find a NIC's inventory entry by its name."""
    return [(str(iface.get("name") or f"nic{index}"), iface)
            for index, iface in enumerate(ctx.inventory.get("interfaces") or [])]


class ValidateInterfaces(ProcessingHook):
    name = "validate_interfaces"
    provides = (INTERFACES,)

    def before_processing(self, ctx: ProcessingContext) -> None:
        inventory = ctx.inventory
        boot_mac = mac_from_boot_interface((inventory.get("boot") or {}).get("pxe_interface")
                                           or ctx.data.get("boot_interface"))
        found: dict[str, Nic] = {}
        for name, iface in named_interfaces(ctx):
            mac = str(iface.get("mac_address") or "").lower()
            if name == "lo" or not MAC_RE.match(mac) or mac == "00:00:00:00:00:00":
                continue
            found[name] = Nic(mac, _usable_ip(iface.get("ipv4_address"))
                              or _usable_ip(iface.get("ipv6_address")), mac == boot_mac)
        if not found:
            raise HookError("No valid interfaces found in the ramdisk data: every NIC lacks "
                            "a valid MAC address")
        ctx.set(INTERFACES, Interfaces(found, self._select(found, boot_mac), boot_mac))

    def _select(self, found: dict[str, Nic], boot_mac: str | None) -> dict[str, Nic]:
        mode = self.conf.processing.add_ports
        if mode == "all":
            return dict(found)
        if mode == "disabled":
            return {}
        if mode == "pxe" and boot_mac is not None:
            return {n: i for n, i in found.items() if i.pxe}
        return {n: i for n, i in found.items() if i.ip}  # active (and pxe without a boot MAC)
