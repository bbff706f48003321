"""SMBIOS structures read from sysfs, decoded without dmidecode (not in the ramdisk).

Sources, in order: `/sys/firmware/dmi/tables/DMI` (the whole table, every structure one
after the other) and `/sys/firmware/dmi/entries/<type>-<n>/raw` (one structure each). Both
are root-only, and absent in many containers: then there is nothing to decode.

A structure is a formatted area (type, length, handle, fields) followed by its strings, each
NUL-terminated, the set ending in an extra NUL; a string field holds a 1-based index into
them, 0 meaning none (SMBIOS 3.x §6.1.2-3).

`summary` gives IPA's `dmi` collector shape (dmidecode's field names, as
ironic_python_agent.dmi_inspector parses them): `bios`, `cpu`, `memory` with its `devices`,
plus `system` (type 1), and for each memory device its size in MiB as `size_mb`, which rules
can compare as a number. discoverd's hardware components (`discoverd.components`) key
DIMMs on these names (slot and serial) and compare their size, part number and maker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .sysfs import join, listdir, read_bytes

TABLE = "sys/firmware/dmi/tables/DMI"
ENTRIES = "sys/firmware/dmi/entries"
END_OF_TABLE = 127
MAX_TABLE = 1 << 20  # an SMBIOS 3 table may reach 4 GiB in theory; real ones are < 64 KiB

MEMORY_TYPES = {0x01: "Other", 0x02: "Unknown", 0x07: "RAM", 0x12: "DDR", 0x13: "DDR2",
                0x18: "DDR3", 0x1A: "DDR4", 0x1B: "LPDDR", 0x1C: "LPDDR2", 0x1D: "LPDDR3",
                0x1E: "LPDDR4", 0x20: "HBM", 0x21: "HBM2", 0x22: "DDR5", 0x23: "LPDDR5"}


@dataclass(frozen=True)
class Structure:
    type: int
    data: bytes  # the formatted area, header included, so offsets match the specification
    strings: tuple[str, ...]

    def byte(self, offset: int) -> int | None:
        return self.data[offset] if offset < len(self.data) else None

    def word(self, offset: int) -> int | None:
        return self._int(offset, 2)

    def dword(self, offset: int) -> int | None:
        return self._int(offset, 4)

    def qword(self, offset: int) -> int | None:
        return self._int(offset, 8)

    def string(self, offset: int) -> str | None:
        index = self.byte(offset)
        if not index or index > len(self.strings):
            return None
        return self.strings[index - 1].strip() or None

    def _int(self, offset: int, size: int) -> int | None:
        if offset + size > len(self.data):
            return None
        return int.from_bytes(self.data[offset:offset + size], "little")


def parse(blob: bytes) -> list[Structure]:
    """Every complete structure of `blob`, up to the end-of-table one or a truncated one."""
    found = []
    offset = 0
    while offset + 4 <= len(blob):
        kind, length = blob[offset], blob[offset + 1]
        if length < 4 or offset + length > len(blob):
            break
        end = blob.find(b"\0\0", offset + length)
        if end < 0:
            break
        area = blob[offset + length:end]
        strings = tuple(s.decode("latin-1") for s in area.split(b"\0")) if area else ()
        found.append(Structure(kind, blob[offset:offset + length], strings))
        if kind == END_OF_TABLE:
            break
        offset = end + 2
    return found


def structures(root: str = "/") -> list[Structure]:
    table = read_bytes(join(root, TABLE))
    if table:
        return parse(table[:MAX_TABLE])
    entries = join(root, ENTRIES)
    found = []
    for name in sorted(listdir(entries), key=_entry_order):
        raw = read_bytes(os.path.join(entries, name, "raw"))
        if raw:
            found.extend(parse(raw)[:1])
    return found


def _entry_order(name: str) -> tuple[int, ...]:
    """`17-2` before `17-10`: the table's order."""
    return tuple(int(part) if part.isdigit() else -1 for part in name.split("-"))


def module_size_mb(raw: bytes) -> int:
    """Size of one type 17 structure's module, as bytes (SMBIOS 3.x §7.18.5)."""
    return device_size_mb(Structure(raw[0] if raw else 0, raw, ()))


def device_size_mb(device: Structure) -> int:
    size = device.word(0x0C)
    if device.type != 17 or size is None or size in (0, 0xFFFF):  # none installed / unknown
        return 0
    if size == 0x7FFF:  # Extended Size (>= 32 GiB), in MiB
        return (device.dword(0x1C) or 0) & 0x7FFFFFFF
    if size & 0x8000:  # granularity is KiB
        return (size & 0x7FFF) // 1024
    return size


def memory_devices_mb(found: list[Structure]) -> int:
    return sum(device_size_mb(s) for s in found if s.type == 17)


def summary(root: str = "/") -> dict[str, object]:
    found = structures(root)
    first = {kind: next((s for s in found if s.type == kind), None) for kind in (0, 1)}
    arrays = [s for s in found if s.type == 16]
    memory: dict[str, object] = {"devices": [_device(s) for s in found if s.type == 17]}
    if arrays:
        memory["Number Of Devices"] = sum(s.word(0x0D) or 0 for s in arrays)
        memory["Maximum Capacity"] = _capacity(arrays[0])
    return {"bios": _fields(first[0], {"Vendor": 0x04, "Version": 0x05, "Release Date": 0x08}),
            "system": _fields(first[1], {"Manufacturer": 0x04, "Product Name": 0x05,
                                         "Version": 0x06}),
            "cpu": [_fields(s, {"Socket Designation": 0x04, "Manufacturer": 0x07,
                                "Version": 0x10}) for s in found if s.type == 4],
            "memory": memory}


def _fields(structure: Structure | None, offsets: dict[str, int]) -> dict[str, object]:
    if structure is None:
        return {}
    return {name: value for name, offset in offsets.items()
            if (value := structure.string(offset)) is not None}


def _device(device: Structure) -> dict[str, object]:
    size = device_size_mb(device)
    fields = _fields(device, {"Locator": 0x10, "Bank Locator": 0x11, "Manufacturer": 0x17,
                              "Serial Number": 0x18, "Part Number": 0x1A})
    speed = device.word(0x15)
    kind = device.byte(0x12)
    return {"Size": size_text(size) if size else "No Module Installed", "size_mb": size,
            **fields,
            **({"Type": MEMORY_TYPES.get(kind, "Unknown")} if kind is not None else {}),
            **({"Speed": f"{speed} MT/s"} if speed and speed != 0xFFFF else {})}


def size_text(mb: int) -> str:
    """As dmidecode prints it: `16 GB`, `512 MB`."""
    return f"{mb // 1024} GB" if mb % 1024 == 0 else f"{mb} MB"


def _capacity(array: Structure) -> str | None:
    kib = array.dword(0x07)
    if kib == 0x80000000:
        extended = array.qword(0x0F)
        return size_text(extended // 2**20) if extended else None
    return size_text(kib // 1024) if kib else None
