"""`accelerators`: the `accelerators` property, the known accelerator devices found.

Matches the report's `pci_devices` against a YAML list of known devices (`[processing]
known_accelerators`; empty: `known_accelerators.yaml` next to this module), read and checked
at start. Each device found adds its entry from the file with its `pci_address` (the
reported `bus`); a report with PCI devices but no known ones sets an empty list, as upstream.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins import pci_ids
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook

LOG = logging.getLogger(__name__)
OPTION = "[processing] known_accelerators"
SHIPPED = Path(__file__).with_name("known_accelerators.yaml")


def load_known(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(vendor_id, device_id) -> the device's entry, from the file; every problem is a
    ConfigError naming the option and the file."""
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{OPTION}: cannot read {path}: {exc}") from None
    devices = loaded.get("pci_devices") if isinstance(loaded, dict) else None
    if not isinstance(devices, list):
        raise ConfigError(f"{OPTION}: {path} has no list 'pci_devices'")
    known: dict[tuple[str, str], dict[str, Any]] = {}
    for index, device in enumerate(devices):
        ids = (pci_ids.normal(device.get("vendor_id")), pci_ids.normal(device.get("device_id"))
               ) if isinstance(device, dict) else (None, None)
        if ids[0] is None or ids[1] is None:
            raise ConfigError(f"{OPTION}: {path}: pci_devices[{index}] lacks a hexadecimal "
                              "vendor_id or device_id")
        known[(ids[0], ids[1])] = dict(device)
    return known


class Accelerators(ProcessingHook):
    name = "accelerators"

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.known = load_known(Path(conf.processing.known_accelerators or SHIPPED))

    def before_update(self, ctx: ProcessingContext) -> None:
        devices = ctx.data.get("pci_devices")
        if not devices or not isinstance(devices, list):
            LOG.warning("Node %s: no PCI devices in the report; accelerators unknown",
                        ctx.node.get("uuid"))
            return
        found = []
        for device in devices:
            ids = pci_ids.reported(device)
            if ids in self.known:
                found.append({**self.known[ids], "pci_address": device.get("bus")})
        ctx.set_property("accelerators", found)
