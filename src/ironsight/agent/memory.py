"""Memory in IPA's shape: `total` (bytes, kernel view) and `physical_mb` (installed).

`physical_mb` is what Ironic turns into `memory_mb`, so it should be the installed
size, not the kernel's (smaller) usable total:

1. the sum of the SMBIOS type 17 (Memory Device) sizes read from
   `/sys/firmware/dmi/entries/17-*/raw` (root only, what `dmidecode -t 17` decodes);
2. when that is not readable or sums to 0 (VMs without SMBIOS, non-root runs),
   `MemTotal` rounded UP to the next multiple of 128 MiB: the kernel reserves a few
   percent, and installed memory comes in such steps (a 2 GiB VM shows ~1.9 GiB).

IPA has no such fallback (it reports null when lshw fails); we prefer a close
value to a node Ironic's memory hook rejects.
"""

from __future__ import annotations

import os

from .sysfs import join, listdir, read, read_bytes

ROUND_MB = 128


def collect(root: str = "/") -> dict[str, object]:
    total = total_bytes(root)
    physical = dmi_physical_mb(root) or round_up_mb(total)
    return {"total": total, "physical_mb": physical}


def total_bytes(root: str) -> int:
    for line in (read(join(root, "proc/meminfo")) or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024  # the value is in kB
    raise ValueError("no MemTotal in /proc/meminfo")


def round_up_mb(total: int) -> int:
    step = ROUND_MB * 1024 * 1024
    return -(-total // step) * ROUND_MB


def dmi_physical_mb(root: str) -> int:
    entries = join(root, "sys/firmware/dmi/entries")
    total = 0
    for name in listdir(entries):
        if name.startswith("17-"):
            raw = read_bytes(os.path.join(entries, name, "raw"))
            total += module_size_mb(raw or b"")
    return total


def module_size_mb(raw: bytes) -> int:
    """Size of one SMBIOS type 17 structure (SMBIOS 3.x §7.18.5)."""
    if len(raw) < 0x0E or raw[0] != 17:
        return 0
    size = int.from_bytes(raw[0x0C:0x0E], "little")
    if size in (0, 0xFFFF):  # no module installed / unknown
        return 0
    if size == 0x7FFF and raw[1] >= 0x20 and len(raw) >= 0x20:  # Extended Size, in MB
        return int.from_bytes(raw[0x1C:0x20], "little") & 0x7FFFFFFF
    if size & 0x8000:  # granularity is kB
        return (size & 0x7FFF) // 1024
    return size
