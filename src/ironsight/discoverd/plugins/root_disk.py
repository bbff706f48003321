"""`root_disk_selection`: the root disk (root device hints first) and `local_gb` from it.

Provides `root_disk`. A legacy ramdisk's own `local_gb` is kept as it reported it (it already
left room for partitioning).
"""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import HookError, ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import ROOT_DISK, RootDisk

GIB = 1024**3
_STRING_HINTS = ("name", "model", "vendor", "serial", "wwn", "wwn_with_extension",
                 "wwn_vendor_extension", "by_path", "hctl")


def _int_hint(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise HookError(f"Root device hint 'size' must be a whole number of GiB, got "
                        f"{value!r}") from None


def _matches(disk: dict[str, Any], hints: dict[str, Any]) -> bool:
    for key, want in hints.items():
        have = disk.get(key)
        if key == "size":
            if have is None or int(have) // GIB != _int_hint(want):
                return False
        elif key == "rotational":
            if bool(have) != (str(want).lower() in ("1", "true", "yes")):
                return False
        elif key in _STRING_HINTS and (have is None or str(have).lower() != str(want).lower()):
            return False
        # unknown hints are ignored, as upstream does
    return True


class RootDiskSelection(ProcessingHook):
    name = "root_disk_selection"
    provides = (ROOT_DISK,)

    def before_update(self, ctx: ProcessingContext) -> None:
        if ctx.data.get("legacy_format") and ctx.data.get("local_gb") is not None:
            ctx.set(ROOT_DISK, RootDisk(None, int(ctx.data["local_gb"])))
            return
        hints = (ctx.node.get("properties") or {}).get("root_device")
        disks = ctx.inventory.get("disks") or []
        root = ctx.data.get("root_disk")
        if hints:
            if not isinstance(hints, dict):
                raise HookError(f"Root device hints must be an object, got {hints!r}")
            root = next((d for d in disks if _matches(d, hints)), None)
            if root is None:
                raise HookError(f"No disks satisfied root device hints {hints}")
        if not root:
            ctx.set(ROOT_DISK, RootDisk(None, 0))  # diskless, as upstream assumes
            return
        size_gb = int(root["size"]) // GIB
        if self.conf.processing.disk_partitioning_spacing and size_gb > 0:
            size_gb -= 1
        ctx.set(ROOT_DISK, RootDisk(dict(root), size_gb))
