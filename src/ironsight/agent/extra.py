"""The optional extra-hardware section: IPA's `data`, a list of python-hardware 4-tuples
`[class, object, key, value]` (what `hardware-detect` prints and Ironic's `extra-hardware`
hook nests into `plugin_data.extra[class][object][key]`).

IPA runs python-hardware, which is not in our ramdisk (it needs lshw, hdparm, smartctl...);
we derive the same keys, as strings as `hardware-detect` gives most of them, from what the
agent already collected: system, firmware, CPUs, memory (total and each bank, from SMBIOS),
disks (size in GB, like python-hardware), NICs. Sent only when asked, like IPA:
`ipa-inspection-collectors=...,extra-hardware` on the kernel command line.
"""

from __future__ import annotations

from collections.abc import Mapping

COLLECTORS_KEY = "ipa-inspection-collectors"
NAME = "extra-hardware"

Row = list[str]


def wanted(params: Mapping[str, str]) -> bool:
    return NAME in [part.strip() for part in params.get(COLLECTORS_KEY, "").split(",")]


def collect(inventory: Mapping[str, object], dmi: Mapping[str, object] | None) -> list[Row]:
    rows: list[Row] = []
    _system(rows, _dict(inventory.get("system_vendor")))
    _cpu(rows, _dict(inventory.get("cpu")))
    _memory(rows, _dict(inventory.get("memory")), _dict(_dict(dmi).get("memory")))
    _disks(rows, inventory.get("disks"))
    _nics(rows, inventory.get("interfaces"))
    return rows


def _add(rows: list[Row], kind: str, obj: str, key: str, value: object) -> None:
    if value is not None and value != "":
        rows.append([kind, obj, key, str(value)])


def _dict(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Mapping[str, object]]:
    return [item for item in value if isinstance(item, Mapping)] \
        if isinstance(value, list) else []


def _system(rows: list[Row], vendor: Mapping[str, object]) -> None:
    for key, field in (("name", "product_name"), ("vendor", "manufacturer"),
                       ("serial", "serial_number"), ("uuid", "uuid")):
        _add(rows, "system", "product", key, vendor.get(field))
    firmware = _dict(vendor.get("firmware"))
    for key, field in (("vendor", "vendor"), ("version", "version"), ("date", "build_date")):
        _add(rows, "firmware", "bios", key, firmware.get(field))


def _cpu(rows: list[Row], cpu: Mapping[str, object]) -> None:
    _add(rows, "cpu", "physical", "number", cpu.get("socket_count"))
    _add(rows, "cpu", "logical", "number", cpu.get("count"))
    sockets = cpu.get("socket_count")
    for index in range(sockets if isinstance(sockets, int) and 0 < sockets <= 64 else 0):
        _add(rows, "cpu", f"physical_{index}", "product", cpu.get("model_name"))
        _add(rows, "cpu", f"physical_{index}", "frequency", cpu.get("frequency"))


def _memory(rows: list[Row], memory: Mapping[str, object],
            smbios_memory: Mapping[str, object]) -> None:
    total = memory.get("physical_mb")
    if isinstance(total, int):
        _add(rows, "memory", "total", "size", total * 1024 * 1024)
    banks = _list(smbios_memory.get("devices"))
    _add(rows, "memory", "banks", "count", len(banks) if banks else None)
    for index, bank in enumerate(banks):
        size = bank.get("size_mb")
        obj = f"bank:{index}"
        _add(rows, "memory", obj, "size", size * 1024 * 1024 if isinstance(size, int) else None)
        _add(rows, "memory", obj, "slot", bank.get("Locator"))
        for key, field in (("type", "Type"), ("vendor", "Manufacturer"),
                           ("product", "Part Number")):
            _add(rows, "memory", obj, key, bank.get(field))


def _disks(rows: list[Row], disks: object) -> None:
    found = _list(disks)
    _add(rows, "disk", "logical", "count", len(found))
    for disk in found:
        name = str(disk.get("name", "")).removeprefix("/dev/")
        size = disk.get("size")
        _add(rows, "disk", name, "size", size // 1000**3 if isinstance(size, int) else None)
        for key in ("vendor", "model", "serial", "rotational"):
            _add(rows, "disk", name, key, disk.get(key))


def _nics(rows: list[Row], interfaces: object) -> None:
    for nic in _list(interfaces):
        name = str(nic.get("name"))
        _add(rows, "network", name, "serial", nic.get("mac_address"))
        _add(rows, "network", name, "ipv4", nic.get("ipv4_address"))
        _add(rows, "network", name, "link", "yes" if nic.get("has_carrier") else "no")
        _add(rows, "network", name, "driver", nic.get("driver"))
        _add(rows, "network", name, "speed", nic.get("speed_mbps"))
