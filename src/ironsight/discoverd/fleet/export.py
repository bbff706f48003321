"""The fleet written out for other systems (a CMDB, a spreadsheet, NetBox), a chunk of rows
at a time, from a snapshot of the node documents (fleet/document.py).

- `ndjson`: one JSON object per node, its API summary and flattened hardware columns;
- `csv`: the same columns, lists joined with `;`;
- `components`: one JSON object per component of each node (components.py's identities);
- `netbox`: one JSON object keyed by system serial, each value shaped as NetBox's device
  (device type, status, interfaces with MACs, inventory items for disks, DIMMs and GPUs);
  the UUIDs of nodes without a serial (or with one an earlier node has) are listed under
  `"_no_serial"`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ironsight.discoverd import components
from ironsight.discoverd.fleet.document import mapping, records

FORMATS = ("ndjson", "csv", "components", "netbox")
MEDIA_TYPES = {"ndjson": "application/x-ndjson", "csv": "text/csv; charset=utf-8",
               "components": "application/x-ndjson", "netbox": "application/json"}
CHUNK = 200  # rows per chunk written

COLUMNS = ("uuid", "name", "provision_state", "power_state", "maintenance", "driver",
           "resource_class", "traits", "vendor", "product", "serial", "bios_version",
           "bmc_address", "cpu_model", "cpu_count", "cpu_architecture", "memory_mb",
           "memory_gib", "dimm_count", "disk_count", "disk_total_gb", "disk_models",
           "nic_count", "macs", "nic_speeds_mbps", "switches", "gpu_count", "gpu_ids",
           "inspected_at")
# NetBox's device statuses for Ironic's provision states (anything else: "inventory")
NETBOX_STATUS = {"active": "active", "deploying": "staged", "wait call-back": "staged",
                 "available": "planned", "manageable": "inventory", "enroll": "inventory",
                 "inspecting": "inventory", "inspect wait": "inventory",
                 "cleaning": "staged", "clean wait": "staged", "deploy failed": "failed",
                 "inspect failed": "failed", "clean failed": "failed", "error": "failed"}


def row(doc: Mapping[str, Any]) -> dict[str, Any]:
    """One node's flattened columns (COLUMNS, in order)."""
    hw = mapping(doc.get("hardware"))
    nics = records(hw.get("nics"))
    disks = records(hw.get("disks"))
    return {
        "uuid": doc.get("uuid"), "name": doc.get("name"),
        "provision_state": doc.get("provision_state"), "power_state": doc.get("power_state"),
        "maintenance": doc.get("maintenance"), "driver": doc.get("driver"),
        "resource_class": doc.get("resource_class"), "traits": list(doc.get("traits") or []),
        "vendor": hw.get("vendor"), "product": hw.get("product"), "serial": hw.get("serial"),
        "bios_version": hw.get("bios_version"), "bmc_address": hw.get("bmc_address"),
        "cpu_model": hw.get("cpu_model"), "cpu_count": hw.get("cpu_count"),
        "cpu_architecture": hw.get("cpu_architecture"), "memory_mb": hw.get("memory_mb"),
        "memory_gib": hw.get("memory_gib"), "dimm_count": hw.get("dimm_count"),
        "disk_count": hw.get("disk_count"), "disk_total_gb": hw.get("disk_total_gb"),
        "disk_models": sorted({str(d.get("model")) for d in disks if d.get("model")}),
        "nic_count": hw.get("nic_count"), "macs": [n.get("mac") for n in nics],
        "nic_speeds_mbps": list(hw.get("nic_speeds_mbps") or []),
        "switches": list(hw.get("switches") or []), "gpu_count": hw.get("gpu_count"),
        "gpu_ids": [f"{g.get('vendor_id')}:{g.get('product_id')}"
                    for g in records(hw.get("gpus"))],
        "inspected_at": doc.get("inspected_at"),
    }


def _data(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The stored data a document was built from, as components.py reads it."""
    return {**mapping(doc.get("plugin_data")), "inventory": mapping(doc.get("inventory"))}


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def _chunks(lines: Iterable[str]) -> Iterator[str]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= CHUNK:
            yield "".join(batch)
            batch = []
    if batch:
        yield "".join(batch)


def ndjson(docs: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    return _chunks(_dumps(row(d)) + "\n" for d in docs)


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return "" if value is None else value


def csv_rows(docs: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    def lines() -> Iterator[str]:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(COLUMNS)
        for doc in docs:
            flat = row(doc)
            writer.writerow([_cell(flat[c]) for c in COLUMNS])
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
        yield buffer.getvalue()

    return _chunks(lines())


def component_rows(docs: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    def lines() -> Iterator[str]:
        for doc in docs:
            if not doc.get("inspected"):
                continue
            head = {"node_uuid": doc.get("uuid"), "node_name": doc.get("name")}
            for kind, found in components.components(_data(doc)).items():
                for key, attrs in found.items():
                    yield _dumps({**head, "component": kind, "key": key, **attrs}) + "\n"

    return _chunks(lines())


def netbox_device(doc: Mapping[str, Any]) -> dict[str, Any]:
    hw = mapping(doc.get("hardware"))
    inventory = mapping(doc.get("inventory"))
    items = [{"name": d.get("name"), "manufacturer": d.get("vendor") or None,
              "part_id": d.get("model"), "serial": d.get("serial") or None,
              "description": f"disk, {d.get('size_gb')} GB", "role": "disk"}
             for d in records(hw.get("disks"))]
    dimms = records(mapping(mapping(inventory.get("dmi")).get("memory")).get("devices"))
    items += [{"name": " ".join(str(d[k]) for k in ("Bank Locator", "Locator") if d.get(k)),
               "manufacturer": d.get("Manufacturer"), "part_id": d.get("Part Number"),
               "serial": d.get("Serial Number"), "description": f"DIMM, {d.get('Size')}",
               "role": "memory"}
              for d in dimms if d.get("Size") and str(d["Size"]).lower() != "no module installed"]
    items += [{"name": g.get("address"), "manufacturer": g.get("vendor_id"),
               "part_id": g.get("product_id"), "serial": None, "description": "GPU",
               "role": "gpu"} for g in records(hw.get("gpus"))]
    return {
        "name": doc.get("name") or doc.get("uuid"),
        "serial": hw.get("serial"),
        "device_type": {"manufacturer": {"name": hw.get("vendor")}, "model": hw.get("product")},
        "status": NETBOX_STATUS.get(str(doc.get("provision_state")), "inventory"),
        "custom_fields": {"ironsight_uuid": doc.get("uuid"),
                          "cpu_model": hw.get("cpu_model"), "cpu_count": hw.get("cpu_count"),
                          "memory_gib": hw.get("memory_gib"),
                          "disk_total_gb": hw.get("disk_total_gb"),
                          "bios_version": hw.get("bios_version"),
                          "bmc_address": hw.get("bmc_address"),
                          "inspected_at": doc.get("inspected_at")},
        # NetBox's interface speed is in kbit/s
        "interfaces": [{"name": n.get("name"), "mac_address": n.get("mac"),
                        "speed": (n.get("speed_mbps") or 0) * 1000 or None,
                        "description": (f"{n.get('switch')} {n.get('switch_port')}".strip()
                                        or None)}
                       for n in records(hw.get("nics"))],
        "inventory_items": items,
    }


def netbox(docs: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    def parts() -> Iterator[str]:
        yield "{"
        first = True
        unkeyed: list[Any] = []
        seen: set[str] = set()
        for doc in docs:
            serial = str(mapping(doc.get("hardware")).get("serial") or "")
            if not serial or serial in seen:  # a key names one device
                unkeyed.append(doc.get("uuid"))
                continue
            seen.add(serial)
            yield ("" if first else ",\n") + f"{_dumps(serial)}:{_dumps(netbox_device(doc))}"
            first = False
        yield ("" if first else ",\n") + f'"_no_serial":{_dumps(unkeyed)}' + "}\n"

    return _chunks(parts())


WRITERS = {"ndjson": ndjson, "csv": csv_rows, "components": component_rows, "netbox": netbox}
