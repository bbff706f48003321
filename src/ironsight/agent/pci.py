"""PCI devices in IPA's shape (`pci_devices`, its `pci-devices` collector), from
`/sys/bus/pci/devices`.

IPA's keys, values as IPA gives them (hex without `0x`; `numa_node_id` the sysfs text):
`vendor_id`, `product_id`, `class`, `revision`, `bus` (the address), `numa_node_id`.
Ours next to them: `address` (= `bus`), `numa_node` (an integer; None when the kernel says
-1, no affinity) and `driver` (the bound driver's name, None when unbound). A device whose
ids cannot be read is skipped, as IPA does.
"""

from __future__ import annotations

import os

from .sysfs import join, link_name, listdir, read

DEVICES = "sys/bus/pci/devices"


def collect(root: str = "/") -> list[dict[str, object]]:
    base = join(root, DEVICES)
    devices = []
    for address in listdir(base):
        device = _device(os.path.join(base, address), address)
        if device is not None:
            devices.append(device)
    return devices


def _device(path: str, address: str) -> dict[str, object] | None:
    vendor, product, kind = (_hex(os.path.join(path, name))
                             for name in ("vendor", "device", "class"))
    if vendor is None or product is None or kind is None:
        return None
    numa_text = read(os.path.join(path, "numa_node"))
    try:
        numa = int(numa_text) if numa_text is not None else None
    except ValueError:
        numa = None
    return {"vendor_id": vendor, "product_id": product, "class": kind,
            "revision": _hex(os.path.join(path, "revision")), "bus": address,
            "numa_node_id": numa_text, "address": address,
            "numa_node": numa if numa is not None and numa >= 0 else None,
            "driver": link_name(os.path.join(path, "driver"))}


def _hex(path: str) -> str | None:
    """`0x8086` -> `8086`, as IPA strips it."""
    text = read(path)
    if not text or not text.lower().startswith("0x") or len(text) < 3:
        return None
    return text[2:].lower()
