"""PCI vendor and device IDs as reports and configuration write them, compared as one form.

Ramdisks report `"10de"`; lspci-style and sysfs-style IDs read `"0x10DE"`: both mean the same
device, so both hooks that match PCI IDs (pci-devices, accelerators) compare the lowercase
4-digit form without the prefix.
"""

from __future__ import annotations

import re
from typing import Any

_ID = re.compile(r"^(?:0x)?([0-9a-f]{4})$")


def normal(value: Any) -> str | None:
    """The ID's normal form, or None when it is not a 16-bit hexadecimal ID."""
    found = _ID.match(str(value).strip().lower()) if value is not None else None
    return found.group(1) if found else None


def reported(device: Any) -> tuple[str, str] | None:
    """A reported PCI device's (vendor_id, product_id), or None when it has no valid pair."""
    if not isinstance(device, dict):
        return None
    vendor, product = normal(device.get("vendor_id")), normal(device.get("product_id"))
    return (vendor, product) if vendor and product else None
