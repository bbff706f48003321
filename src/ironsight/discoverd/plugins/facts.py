"""The facts the built-in hooks hand each other (and that third-party hooks may require).

Each is a small frozen dataclass; what it stores in the processed data keeps the shape that
discoverd has always returned from `GET /v1/introspection/{node}/data`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ironsight.discoverd.plugins.base import Fact


@dataclass(frozen=True)
class Nic:
    mac: str
    ip: str | None
    pxe: bool  # the NIC the node PXE-booted from

    def as_dict(self) -> dict[str, Any]:
        return {"mac": self.mac, "ip": self.ip, "pxe": self.pxe}


@dataclass(frozen=True)
class Interfaces:
    """The report's NICs with a valid MAC, by name; those chosen for ports; the PXE NIC."""

    all: dict[str, Nic]
    chosen: dict[str, Nic]
    boot_mac: str | None

    def store(self) -> dict[str, Any]:
        return {"all_interfaces": {n: i.as_dict() for n, i in self.all.items()},
                "interfaces": {n: i.as_dict() for n, i in self.chosen.items()},
                "macs": [i.mac for i in self.chosen.values()], "boot_mac": self.boot_mac}


@dataclass(frozen=True)
class RootDisk:
    """The disk the node will boot from (None: diskless) and the size scheduled on."""

    disk: dict[str, Any] | None
    local_gb: int

    def store(self) -> dict[str, Any]:
        stored: dict[str, Any] = {"local_gb": self.local_gb}
        if self.disk is not None:
            stored["root_disk"] = self.disk
        return stored


@dataclass(frozen=True)
class Scheduling:
    """The design's four scheduling properties."""

    cpus: int
    cpu_arch: str
    memory_mb: int
    local_gb: int

    def store(self) -> dict[str, Any]:
        return {"cpus": self.cpus, "cpu_arch": self.cpu_arch, "memory_mb": self.memory_mb,
                "local_gb": self.local_gb}


@dataclass(frozen=True)
class CapabilitySet:
    """CapabilitySet found on this run (boot mode, CPU features), before merging."""

    found: dict[str, str]

    def store(self) -> dict[str, Any]:
        return {"capabilities": self.found} if self.found else {}


@dataclass(frozen=True)
class ParsedLldp:
    """What each interface's LLDP TLVs say, by Ironic's names (see discoverd/lldp.py).

    Stored as Ironic stores it (`parsed_lldp`) and, when validate_interfaces ran, also where
    ironic-inspector's lldp_basic put it (`all_interfaces[name].lldp_processed`, the
    interfaces fact's `all_interfaces` with it added), which
    `openstack baremetal introspection interface list|show` reads."""

    by_interface: dict[str, dict[str, Any]]
    all_interfaces: dict[str, dict[str, Any]] | None = None

    def store(self) -> dict[str, Any]:
        if not self.by_interface:
            return {}
        stored: dict[str, Any] = {"parsed_lldp": self.by_interface}
        if self.all_interfaces is not None:
            stored["all_interfaces"] = self.all_interfaces
        return stored


@dataclass(frozen=True)
class ExtraHardware:
    """The report's extra-hardware `data` as nested mappings (None: refused in strict mode);
    it replaces `data` in the processed data, as upstream."""

    extra: dict[str, Any] | None

    def store(self) -> dict[str, Any]:
        return {"extra": self.extra} if self.extra is not None else {}


INTERFACES = Fact("interfaces", Interfaces, "NICs of the report and which get ports "
                  "(validate_interfaces)", Interfaces.store)
ROOT_DISK = Fact("root_disk", RootDisk, "the root disk and local_gb (root_disk_selection)",
                 RootDisk.store)
SCHEDULING = Fact("scheduling", Scheduling, "cpus, cpu_arch, memory_mb, local_gb (scheduler)",
                  Scheduling.store)
CAPABILITIES = Fact("capabilities", CapabilitySet, "capabilities found (capabilities)",
                    CapabilitySet.store)
PARSED_LLDP = Fact("parsed_lldp", ParsedLldp, "LLDP by interface (parse-lldp)",
                   ParsedLldp.store)
EXTRA_HARDWARE = Fact("extra_hardware", ExtraHardware, "extra hardware data (extra-hardware)",
                      ExtraHardware.store, replaces=("data",))
