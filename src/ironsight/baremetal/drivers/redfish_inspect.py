"""Out-of-band inspection (`inspect_interface = redfish`): a node's properties and NICs read
from its BMC's Redfish resources in seconds, without booting it, as Ironic's redfish inspect
interface reads them. It returns findings; the conductor writes them (properties, ports)."""

from __future__ import annotations

import logging
from typing import Any

import sushy

from ironsight.baremetal.drivers.base import Findings, InspectInterface, InspectOutcome, NodeContext
from ironsight.baremetal.drivers.redfish import _RedfishInterface, parse_redfish_info
from ironsight.common.exceptions import DriverError

LOG = logging.getLogger(__name__)

GIB = 1024**3
# Ironic's: the instruction set where the BMC gives one, else the architecture
_INSTRUCTION_SETS = {"x86-64": "x86_64", "x86": "i686", "IA-64": "ia64", "ARM-A64": "aarch64",
                     "ARM-A32": "armv7l", "PowerISA": "ppc64le"}
_ARCHITECTURES = {"x86": "x86_64", "IA-64": "ia64", "ARM": "aarch64", "MIPS": "mips"}


def _value(item: Any) -> str | None:
    """An enum's Redfish value (sushy maps them), or the string the BMC sent."""
    if item is None:
        return None
    return str(getattr(item, "value", item))


def read_system(system: Any) -> Findings:
    """What Ironic's redfish inspection reads, from one sushy System (blocking)."""
    properties: dict[str, Any] = {}
    missing: list[str] = []
    summary = system.processors.summary if system.processors else None
    if summary is not None and summary.count:
        properties["cpus"] = summary.count
    else:
        missing.append("CPUs")
    arch = None
    for proc in system.processors.get_members() if system.processors else ():
        arch = _INSTRUCTION_SETS.get(_value(proc.instruction_set) or "") or \
            _ARCHITECTURES.get(_value(proc.processor_architecture) or "")
        if arch:
            break
    if arch:
        properties["cpu_arch"] = arch
    else:
        missing.append("CPU architecture")
    # read raw: sushy rounds the GiB down to an integer (0 for a VM under 1 GiB)
    gib = (system.json.get("MemorySummary") or {}).get("TotalSystemMemoryGiB")
    if isinstance(gib, (int, float)) and gib > 0:
        properties["memory_mb"] = round(gib * 1024)
    else:
        missing.append("memory")
    sizes = [0]
    # a BMC without one of the two storage resources (or failing to give it) leaves the
    # disk size to the other, or unknown, as Ironic's inspection does
    for read in (lambda: system.simple_storage.max_size_bytes,
                 lambda: system.storage.drives_max_size_bytes):
        try:
            sizes.append(read() or 0)
        except (sushy.exceptions.SushyError, AttributeError) as exc:
            LOG.info("System %s: no disk size from this storage resource (%s)",
                     system.identity, type(exc).__name__)
    if max(sizes) >= GIB:
        # the largest disk less one GiB for partitioning, as Ironic's local_gb
        properties["local_gb"] = max(sizes) // GIB - 1
    mode = _value(system.boot.mode) if system.boot else None
    boot_mode = {"UEFI": "uefi", "Legacy": "bios"}.get(mode or "")
    macs: list[str] = []
    if system.ethernet_interfaces is not None:
        macs = sorted(mac.lower() for mac in system.ethernet_interfaces.summary)
    return Findings(properties=properties, macs=macs, boot_mode=boot_mode, missing=missing)


class RedfishInspect(_RedfishInterface, InspectInterface):
    name = "redfish"

    async def start(self, node: NodeContext, *, again: bool = False) -> InspectOutcome:
        try:
            findings = await self._call(node, "reading the system's hardware", read_system)
        except DriverError as exc:
            return InspectOutcome.failed(str(exc))
        if findings.missing:
            return InspectOutcome.failed(
                f"{parse_redfish_info(node, self.conf)} does not report the system's "
                f"{', '.join(findings.missing)}: out-of-band inspection cannot fill the "
                "node's properties (inspect it in-band: inspect_interface = discoverd)")
        return InspectOutcome.done(findings)
