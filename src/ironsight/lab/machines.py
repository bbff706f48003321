"""Simulated machines: procfs/sysfs trees that the real agent reads with `--root`.

Where no QEMU VM boots the real ramdisk, this is how a node's ramdisk is simulated: in the
demo's fallback (when the QEMU lab cannot run), the functional tests and the agent's unit
tests. The real `ironsight.agent` runs against a tree that describes the machine (CPUs,
memory, disks, NICs, DMI, BOOTIF), so the whole report path — collection, document, POST
with retries — is the production one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

GIB = 1024**3
# efivarfs' file of the UEFI variable SecureBoot: 4 bytes of attributes (BS|RT), the value.
SECURE_BOOT_VAR = ("sys/firmware/efi/efivars/"
                   "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c")
EFI_ATTRIBUTES = (0x06).to_bytes(4, "little")


@dataclass(frozen=True)
class MachineSpec:
    name: str
    cpus: int = 2
    memory_mb: int = 2048
    disks_gb: tuple[int, ...] = (10,)
    macs: tuple[str, ...] = ("52:54:00:00:00:01",)
    cpu_model: str = "QEMU Virtual CPU version 2.5+"
    cpu_flags: str = "fpu pse tsc msr pae cx8 apic sep pge cmov mmx fxsr sse sse2 lm"
    arch: str = "x86_64"
    uefi: bool = False
    secure_boot: bool = False  # with uefi: the SecureBoot variable says on (else off)
    serial: str = ""
    vendor: str = "QEMU"
    product: str = "Standard PC (Q35 + ICH9, 2009)"
    ipv4: tuple[str, ...] = field(default_factory=tuple)

    @property
    def pxe_mac(self) -> str:
        return self.macs[0]


class Tree:
    """A directory laid out like the kernel's /proc and /sys (also the agent tests' fixtures)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, content: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path

    def link(self, rel: str, target: str) -> None:
        """Symlink `rel` -> tree-relative `target`, written relative as the kernel does."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        (self.root / target).mkdir(parents=True, exist_ok=True)
        if not path.is_symlink():
            path.symlink_to(os.path.relpath(self.root / target, path.parent))


def build_tree(root: Path, spec: MachineSpec, callback_url: str | None = None) -> Path:
    """Write the tree of `spec` under `root` (created) and return it."""
    tree = Tree(root)
    tree.write("proc/cpuinfo", "\n".join(
        f"processor\t: {i}\nvendor_id\t: GenuineIntel\nmodel name\t: {spec.cpu_model}\n"
        f"cpu MHz\t\t: 2400.000\nphysical id\t: 0\nflags\t\t: {spec.cpu_flags}\n"
        for i in range(spec.cpus)) + "\n")
    tree.write("sys/devices/system/cpu/online", f"0-{spec.cpus - 1}\n")
    tree.write("proc/sys/kernel/arch", f"{spec.arch}\n")
    tree.write("proc/sys/kernel/hostname", f"{spec.name}\n")
    tree.write("proc/meminfo", f"MemTotal:       {spec.memory_mb * 1024 - 90000} kB\n")
    for index in range(max(1, spec.memory_mb // 1024)):  # SMBIOS type 17: one DIMM per GiB
        raw = bytearray(0x28)
        raw[0], raw[1], raw[2] = 17, 0x28, index
        size = 1024 if index < spec.memory_mb // 1024 else spec.memory_mb
        raw[0x0C:0x0E] = size.to_bytes(2, "little")
        tree.write(f"sys/firmware/dmi/entries/17-{index}/raw", bytes(raw) + b"DIMM\0\0")
    bootif = "01-" + spec.pxe_mac.replace(":", "-")
    cmdline = f"console=ttyS0 BOOTIF={bootif}"
    if callback_url:
        cmdline += f" ironsight.callback_url={callback_url}"
    tree.write("proc/cmdline", cmdline + "\n")
    for index, size_gb in enumerate(spec.disks_gb):
        name = f"vd{chr(ord('a') + index)}"
        device = f"devices/pci0000:00/0000:00:{5 + index:02x}.0/virtio{10 + index}"
        block = f"sys/{device}/block/{name}"
        tree.link(f"sys/block/{name}", block)
        tree.write(f"{block}/size", f"{size_gb * GIB // 512}\n")
        tree.write(f"{block}/queue/rotational", "1\n")
        tree.link(f"{block}/device", f"sys/{device}")
        tree.write(f"sys/{device}/vendor", "0x1af4\n")
        tree.write(f"{block}/serial", f"{spec.serial or spec.name}-{name}\n")
    addresses = []
    for index, mac in enumerate(spec.macs):
        name = f"eth{index}"
        device = f"devices/pci0000:00/0000:00:{3 + index:02x}.0/virtio{index}"
        net = f"sys/{device}/net/{name}"
        tree.link(f"sys/class/net/{name}", net)
        tree.write(f"{net}/address", f"{mac}\n")
        tree.write(f"{net}/carrier", "1\n")
        tree.link(f"{net}/device", f"sys/{device}")
        tree.write(f"sys/{device}/vendor", "0x1af4\n")
        tree.write(f"sys/{device}/device", "0x0001\n")
        tree.link(f"sys/{device}/driver", "sys/bus/pci/drivers/virtio_net")
        info = ([{"family": "inet", "local": spec.ipv4[index], "prefixlen": 24,
                  "scope": "global"}] if index < len(spec.ipv4) else [])
        addresses.append({"ifname": name, "addr_info": info})
    tree.write("ip-addr.json", json.dumps(addresses))
    tree.write("sys/class/dmi/id/sys_vendor", f"{spec.vendor}\n")
    tree.write("sys/class/dmi/id/product_name", f"{spec.product}\n")
    tree.write("sys/class/dmi/id/product_serial", f"{spec.serial or spec.name}\n")
    if spec.uefi:  # efivarfs as the ramdisk mounts it, on firmware that has Secure Boot
        tree.write(SECURE_BOOT_VAR, EFI_ATTRIBUTES + bytes([int(spec.secure_boot)]))
    return root
