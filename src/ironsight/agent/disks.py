"""Block devices in IPA's shape, from `/sys/block` (the ramdisk has no udev, no lsblk).

Skipped: loop, ram, dm-, sr, zram, fd and nbd devices (not installable disks),
and devices whose `size` is missing or 0 (e.g. an empty card reader).
`wwn` comes from the kernel's `wwid`: `naa.X` becomes `0xX` as udev's ID_WWN;
`eui.X` stays as is (NVMe); other forms (`t10.`, `nvme.`) are not WWNs -> None.
`by_path` needs udev's /dev/disk/by-path links and is None without them.
"""

from __future__ import annotations

import os
import re

from .sysfs import join, listdir, read, read_bytes, read_int

SKIPPED_PREFIXES = ("loop", "ram", "dm-", "sr", "zram", "fd", "nbd")
SECTOR = 512  # /sys/block/*/size is always in 512-byte units
_HCTL = re.compile(r"^\d+:\d+:\d+:\d+$")


def collect(root: str = "/", warnings: list[str] | None = None) -> list[dict[str, object]]:
    block = join(root, "sys/block")
    by_path = _by_path_links(root)
    disks = []
    for name in listdir(block):
        if name.startswith(SKIPPED_PREFIXES):
            continue
        sectors = read_int(os.path.join(block, name, "size"))
        if sectors is None and warnings is not None:
            warnings.append(f"disk {name}: no readable size, skipped")
        if sectors:
            disks.append(_disk(os.path.join(block, name), name, sectors * SECTOR,
                               by_path.get(name)))
    return disks


def _disk(path: str, name: str, size: int, by_path: str | None) -> dict[str, object]:
    device = os.path.join(path, "device")
    return {
        "name": "/dev/" + name,
        "model": read(os.path.join(device, "model")) or None,
        "size": size,
        "rotational": read(os.path.join(path, "queue/rotational")) == "1",
        "wwn": _wwn(path),
        "serial": _serial(path),
        "vendor": read(os.path.join(device, "vendor")) or None,
        "wwn_with_extension": None,
        "wwn_vendor_extension": None,
        "hctl": _hctl(device),
        "by_path": by_path,
        "uuid": None,
        "partuuid": None,
        "logical_sectors": read_int(os.path.join(path, "queue/logical_block_size")),
        "physical_sectors": read_int(os.path.join(path, "queue/physical_block_size")),
        "tran": None,
    }


def _wwn(path: str) -> str | None:
    for rel in ("wwid", "device/wwid"):  # NVMe namespace, SCSI device
        wwid = read(os.path.join(path, rel))
        if wwid:
            kind, _, value = wwid.partition(".")
            if kind == "naa":
                return "0x" + value.lower()
            if kind == "eui":
                return wwid.lower()
            return None
    return None


def _serial(path: str) -> str | None:
    for rel in ("device/serial", "serial"):  # NVMe controller, virtio-blk
        serial = read(os.path.join(path, rel))
        if serial:
            return serial
    return _vpd_serial(read_bytes(os.path.join(path, "device/vpd_pg80")))


def _vpd_serial(page: bytes | None) -> str | None:
    """SCSI VPD page 0x80 (Unit Serial Number): 4-byte header, then the serial."""
    if not page or len(page) < 5 or page[1] != 0x80:
        return None
    length = int.from_bytes(page[2:4], "big")
    return page[4:4 + length].decode("ascii", "replace").strip() or None


def _hctl(device: str) -> str | None:
    name = os.path.basename(os.path.realpath(device))
    return name if _HCTL.match(name) else None


def _by_path_links(root: str) -> dict[str, str]:
    """Disk name -> first /dev/disk/by-path link (sorted) pointing at it."""
    directory = join(root, "dev/disk/by-path")
    links: dict[str, str] = {}
    for link in listdir(directory):
        try:
            target = os.path.basename(os.readlink(os.path.join(directory, link)))
        except OSError:
            continue
        links.setdefault(target, "/dev/disk/by-path/" + link)
    return links
