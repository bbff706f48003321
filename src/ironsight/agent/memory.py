"""Memory in IPA's shape: `total` (bytes, kernel view) and `physical_mb` (installed).

`physical_mb` is what Ironic turns into `memory_mb`, so it must be the installed size, not
the kernel's usable total (a 24 GiB host shows MemTotal ~23.6 GiB). Sources, first that
gives a size wins:

1. SMBIOS type 17 (Memory Device) sizes (`smbios`: the sysfs DMI table or entries, root
   only; what `dmidecode -t 17` decodes, and what IPA reads through lshw);
2. the memory block devices: online `/sys/devices/system/memory/memory*` blocks times
   `block_size_bytes` (what IPA falls back to; readable by anyone, present on x86,
   arm64, ppc64 and s390x kernels with memory hotplug, which distributions build in);
3. `MemTotal` rounded UP to the next multiple of 128 MiB: installed memory comes in such
   steps and the kernel reserves a few percent. IPA has no such fallback (it reports null);
   we prefer a close value to a node Ironic's memory hook rejects.
"""

from __future__ import annotations

import os

from . import smbios
from .sysfs import join, listdir, read, read_int

ROUND_MB = 128
MEMORY_BLOCKS = "sys/devices/system/memory"
MiB = 1024 * 1024


def collect(root: str = "/") -> dict[str, object]:
    total = total_bytes(root)
    physical = dmi_physical_mb(root) or blocks_physical_mb(root) or round_up_mb(total)
    return {"total": total, "physical_mb": physical}


def total_bytes(root: str) -> int:
    for line in (read(join(root, "proc/meminfo")) or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024  # the value is in kB
    raise ValueError("no MemTotal in /proc/meminfo")


def round_up_mb(total: int) -> int:
    step = ROUND_MB * MiB
    return -(-total // step) * ROUND_MB


def dmi_physical_mb(root: str) -> int:
    return smbios.memory_devices_mb(smbios.structures(root))


def blocks_physical_mb(root: str) -> int:
    """Online blocks times the block size; 0 when the kernel has no memory block devices."""
    base = join(root, MEMORY_BLOCKS)
    size = (read(os.path.join(base, "block_size_bytes")) or "").strip()
    try:
        block = int(size, 16)  # hexadecimal without 0x, e.g. 8000000 for 128 MiB
    except ValueError:
        return 0
    online = sum(1 for name in listdir(base) if name.startswith("memory")
                 and read_int(os.path.join(base, name, "online")) == 1)
    return online * block // MiB


module_size_mb = smbios.module_size_mb
