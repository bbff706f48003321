"""What identifies the machine a report comes from, for discovery's lookup over every node.

A machine is named by its MACs, its BMC addresses and its system serial with its system UUID.
Some of these name no machine and must never be matched: the MACs of USB and BMC virtual
NICs (the same on every board of a model), well-known shared BMC MACs, MACs found on two
machines, and the placeholder serials and UUIDs of boards nobody filled in (matching those
would merge unrelated machines into one node).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ironsight.common.bmc import host_of
from ironsight.common.ids import MAC_RE

# OpenBMC's MAC on every Wedge system (MAAS drops it from enlistment too).
BUILT_IN_NON_UNIQUE = frozenset({"02:00:00:00:00:02"})
# What firmware writes when the vendor wrote nothing (compared lower case, stripped).
_PLACEHOLDER_SERIALS = frozenset({
    "", "none", "n/a", "na", "not specified", "not applicable", "default string",
    "to be filled by o.e.m.", "to be filled by oem", "system serial number", "0", "00000000",
    "0123456789", "123456789", "serial", "unknown", "chassis serial number", "invalid"})
_PLACEHOLDER_UUIDS = frozenset({
    "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "03000200-0400-0500-0006-000700080009"})  # a well-known AMI placeholder
_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass(frozen=True)
class Identity:
    macs: tuple[str, ...]  # the MACs that identify the machine
    all_macs: tuple[str, ...]  # every MAC it reported
    excluded: dict[str, str] = field(default_factory=dict)  # mac -> why it identifies nothing
    bmc_hosts: tuple[str, ...] = ()
    serial: str | None = None
    system_uuid: str | None = None

    @property
    def system_key(self) -> str | None:
        """Serial and system UUID together: either alone is shared too often (clones)."""
        if self.serial is None or self.system_uuid is None:
            return None
        return f"{self.serial}|{self.system_uuid}"

    def without(self, mac: str, why: str) -> Identity:
        return Identity(tuple(m for m in self.macs if m != mac), self.all_macs,
                        {**self.excluded, mac: why}, self.bmc_hosts, self.serial,
                        self.system_uuid)


def serial_of(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    return None if text.lower() in _PLACEHOLDER_SERIALS or len(text) > 255 else text


def system_uuid_of(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    return text if _UUID_RE.match(text) and text not in _PLACEHOLDER_UUIDS else None


def identity_of(inventory: dict[str, Any], *, non_unique: Collection[str],
                non_unique_drivers: Collection[str]) -> Identity:
    """The identity of a validated inventory; `non_unique`: the MACs known to be shared
    (configured and recorded, besides the built-in ones)."""
    macs: list[str] = []
    excluded: dict[str, str] = {}
    for nic in inventory.get("interfaces") or []:
        mac = str(nic.get("mac_address") or "").strip().lower()
        if not MAC_RE.match(mac) or mac in macs or mac in excluded:
            continue
        driver = str(nic.get("driver") or "")
        if mac in BUILT_IN_NON_UNIQUE or mac in non_unique:
            excluded[mac] = "a MAC known to be shared by several machines"
        elif driver in non_unique_drivers:
            excluded[mac] = f"a USB or virtual NIC (driver {driver})"
        elif mac == "00:00:00:00:00:00" or int(mac[:2], 16) & 1:
            excluded[mac] = "not a unicast MAC"
        else:
            macs.append(mac)
    hosts = _hosts(inventory.get("bmc_address"), inventory.get("bmc_v6address"))
    system = inventory.get("system_vendor") or {}
    return Identity(tuple(macs), tuple([*macs, *excluded]), excluded, hosts,
                    serial_of(system.get("serial_number")),
                    system_uuid_of(system.get("uuid") or system.get("system_uuid")))


def _hosts(*values: Any) -> tuple[str, ...]:
    found: list[str] = []
    for value in values:
        host = host_of(value)
        if host and host not in found:
            found.append(host)
    return tuple(found)

