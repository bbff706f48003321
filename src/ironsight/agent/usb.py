"""USB devices in IPA's shape (`usb_devices`, its `usb-devices` collector: `product`,
`vendor`, `handle`), from `/sys/bus/usb/devices` instead of lshw (not in the ramdisk).

`product` and `vendor` are the device's own strings when it has them, else its ids; `handle`
is lshw's `USB:<bus>:<device>`. Ours next to them: `vendor_id` and `product_id` (hex, as
`lsusb` prints them). Interfaces (`1-1:1.0`) and hubs (root hubs included) are not devices
an operator schedules on: left out, as lshw's `generic` class leaves them out.
"""

from __future__ import annotations

import os

from .sysfs import join, listdir, read

DEVICES = "sys/bus/usb/devices"
HUB_CLASS = "09"


def collect(root: str = "/") -> list[dict[str, object]]:
    base = join(root, DEVICES)
    devices: list[dict[str, object]] = []
    for name in listdir(base):
        path = os.path.join(base, name)
        vendor_id, product_id = read(os.path.join(path, "idVendor")), read(
            os.path.join(path, "idProduct"))
        if ":" in name or not vendor_id or not product_id \
                or read(os.path.join(path, "bDeviceClass")) == HUB_CLASS:
            continue
        bus, number = read(os.path.join(path, "busnum")), read(os.path.join(path, "devnum"))
        devices.append({
            "product": read(os.path.join(path, "product")) or product_id,
            "vendor": read(os.path.join(path, "manufacturer")) or vendor_id,
            "handle": f"USB:{bus}:{number}" if bus and number else None,
            "vendor_id": vendor_id, "product_id": product_id})
    return devices
