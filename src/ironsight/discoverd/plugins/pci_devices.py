"""`pci-devices`: capabilities counting the PCI devices of configured aliases.

`[processing] pci_device_alias` names devices (`vendor_id:product_id:name`, checked at start);
each alias found in the report's `pci_devices` becomes the capability `name:<count>`, merged
into the node's `capabilities` like every capability hook. A report without `pci_devices`
changes nothing (a warning in the log when aliases are configured), as upstream.
"""

from __future__ import annotations

import collections
import logging

from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins import capabilities, pci_ids
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

LOG = logging.getLogger(__name__)
OPTION = "[processing] pci_device_alias"


def parse_aliases(entries: list[str]) -> dict[tuple[str, str], str]:
    aliases: dict[tuple[str, str], str] = {}
    for entry in entries:
        parts = [part.strip() for part in entry.split(":")]
        ids = [pci_ids.normal(part) for part in parts[:2]]
        if len(parts) != 3 or not parts[2] or ids[0] is None or ids[1] is None:
            raise ConfigError(f"{OPTION}: {entry!r} is not vendor_id:product_id:name "
                              "(hexadecimal IDs, e.g. 10de:1eb8:gpu_t4)")
        aliases[(ids[0], ids[1])] = parts[2]
    return aliases


class PciDevices(ProcessingHook):
    name = "pci-devices"

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.aliases = parse_aliases(conf.processing.pci_device_alias)

    def before_update(self, ctx: ProcessingContext) -> None:
        devices = ctx.data.get("pci_devices")
        if devices is None:
            if self.aliases:
                LOG.warning("Node %s: the report has no pci_devices", ctx.node.get("uuid"))
            return
        if not isinstance(devices, list):
            ctx.warn(f"pci_devices is not a list ({type(devices).__name__}); ignored")
            return
        counts = collections.Counter(self.aliases[ids] for ids in map(pci_ids.reported, devices)
                                     if ids in self.aliases)
        capabilities.merge(ctx, {name: str(count) for name, count in sorted(counts.items())})


class PciDevicesInspector(PciDevices):
    """ironic-inspector's name for it."""

    name = "pci_devices"
