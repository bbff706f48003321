"""The per-node document fleet queries (CEL), drift and export read.

One flat dict per node, built once per change of the node or of its latest stored data:

- the node's API fields under their own names (`name`, `provision_state`, `properties`,
  `traits` as a list of strings, …; `links` left out);
- `inventory`: the latest introspection's inventory in ironic-python-agent's shape, with the
  agent's collector sections (`pci_devices`, `usb_devices`, `numa_topology`, `dmi`) folded in
  where the inventory has no key of that name, so `inventory.pci_devices` reads as operators
  expect;
- `plugin_data`: the rest of the processed data (what hooks and rules stored);
- `hardware`: derived conveniences with units in their names (below), so that common
  questions need no arithmetic on raw fields;
- `inspected_at`: when that data was stored (RFC 3339), `inspected` (whether any is kept).

Nodes with no stored data have `inventory`, `plugin_data` and `hardware` as empty maps: a
query reading `inventory.memory.physical_mb` is an error for them, which a query treats as
"does not match" (and counts).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from ironsight.discoverd import lldp

COLLECTORS = ("pci_devices", "usb_devices", "numa_topology", "dmi")
GPU_CLASS_PREFIX = "03"  # PCI base class 0x03: display controllers (VGA, 3D)
# Display devices that are the board's own (BMC or virtual VGA), not GPUs a tenant asks for:
# ASPEED, Matrox, Cirrus Logic, QEMU/Bochs, Red Hat virtio-gpu/QXL.
ONBOARD_VGA_VENDORS = frozenset({"1a03", "102b", "1013", "1234", "1af4", "1b36"})
EMPTY_DIMM = "no module installed"


def build(node: Mapping[str, Any], data: Mapping[str, Any] | None,
          stored_at: dt.datetime | None) -> dict[str, Any]:
    doc = {k: v for k, v in node.items() if k != "links"}
    if data is None:
        doc.update(inventory={}, plugin_data={}, hardware={}, inspected=False,
                   inspected_at=None)
        return doc
    inventory = dict(mapping(data.get("inventory")))
    for section in COLLECTORS:
        if section not in inventory and section in data:
            inventory[section] = data[section]
    doc.update(inventory=inventory,
               plugin_data={k: v for k, v in data.items() if k != "inventory"},
               hardware=hardware(inventory, data), inspected=True,
               inspected_at=_rfc3339(stored_at))
    return doc


def _rfc3339(when: dt.datetime | None) -> str | None:
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.isoformat()


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a map, else an empty one: reports are read, never trusted."""
    return value if isinstance(value, Mapping) else {}


def records(value: Any) -> list[Mapping[str, Any]]:
    """The maps of `value` if it is a list, else none."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def hardware(inventory: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """The derived conveniences (documented in docs/fleet.md, field by field)."""
    memory_mb = _int(mapping(inventory.get("memory")).get("physical_mb"))
    cpu = mapping(inventory.get("cpu"))
    vendor = mapping(inventory.get("system_vendor"))
    firmware = mapping(vendor.get("firmware"))
    disks = [_disk(d) for d in records(inventory.get("disks"))]
    nics = _nics(inventory, data)
    gpus = [_gpu(d) for d in records(inventory.get("pci_devices")) if _is_gpu(d)]
    speeds = sorted({n["speed_mbps"] for n in nics if n["speed_mbps"]})
    return {
        "memory_mb": memory_mb,
        "memory_gib": memory_mb / 1024 if memory_mb is not None else None,
        "cpu_count": _int(cpu.get("count")),
        "cpu_model": cpu.get("model_name"),
        "cpu_architecture": cpu.get("architecture"),
        "gpu_count": len(gpus),
        "gpus": gpus,
        "nic_count": len(nics),
        "nics": nics,
        "nic_speeds_mbps": speeds,
        "max_nic_speed_mbps": speeds[-1] if speeds else 0,
        "switches": sorted({n["switch"] for n in nics if n["switch"]}),
        "disk_count": len(disks),
        "disks": disks,
        "disk_total_gb": sum(d["size_gb"] for d in disks),
        "dimm_count": _dimm_count(inventory),
        "vendor": vendor.get("manufacturer"),
        "product": vendor.get("product_name"),
        "serial": vendor.get("serial_number"),
        "bios_version": firmware.get("version"),
        "bmc_address": inventory.get("bmc_address"),
    }


def _disk(disk: Mapping[str, Any]) -> dict[str, Any]:
    size = _int(disk.get("size")) or 0
    return {"name": disk.get("name"), "size_gb": size // 10**9,
            "size_gib": size // 2**30, "model": disk.get("model") or "",
            "vendor": disk.get("vendor") or "", "serial": disk.get("serial") or "",
            "wwn": disk.get("wwn") or "", "rotational": bool(disk.get("rotational"))}


def _is_gpu(device: Mapping[str, Any]) -> bool:
    cls = str(device.get("class") or "").lower().removeprefix("0x")
    vendor = str(device.get("vendor_id") or "").lower().removeprefix("0x")
    return cls.startswith(GPU_CLASS_PREFIX) and vendor not in ONBOARD_VGA_VENDORS


def _gpu(device: Mapping[str, Any]) -> dict[str, Any]:
    return {"vendor_id": str(device.get("vendor_id") or "").lower().removeprefix("0x"),
            "product_id": str(device.get("product_id") or "").lower().removeprefix("0x"),
            "address": device.get("bus") or device.get("address")}


def _nics(inventory: Mapping[str, Any], data: Mapping[str, Any]) -> list[dict[str, Any]]:
    parsed = mapping(data.get("parsed_lldp"))
    nics = []
    for nic in records(inventory.get("interfaces")):
        name = str(nic.get("name") or "")
        neighbour = mapping(parsed.get(name)) or _lldp(data, nic)
        nics.append({"name": name, "mac": str(nic.get("mac_address") or "").lower(),
                     "speed_mbps": _int(nic.get("speed_mbps")) or 0,
                     "vendor": nic.get("vendor") or "", "product": nic.get("product") or "",
                     "switch": str(neighbour.get("switch_system_name") or ""),
                     "switch_port": str(neighbour.get("switch_port_id") or "")})
    return nics


def _lldp(data: Mapping[str, Any], nic: Mapping[str, Any]) -> Mapping[str, Any]:
    """The neighbour's names decoded from the report's TLVs, when no hook stored them."""
    reported = lldp.reported_tlvs(dict(data), dict(nic))
    if not reported:
        return {}
    tlvs, _ = lldp.decode(reported)
    return lldp.parse(tlvs).values


def _dimm_count(inventory: Mapping[str, Any]) -> int | None:
    devices = mapping(mapping(inventory.get("dmi")).get("memory")).get("devices")
    if not isinstance(devices, list):
        return None
    return sum(1 for d in records(devices)
               if str(d.get("Size") or "") and str(d.get("Size")).lower() != EMPTY_DIMM)
