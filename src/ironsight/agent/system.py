"""System identity: DMI vendor data, boot mode and Secure Boot, hostname and BMC address."""

from __future__ import annotations

import os
import re

from . import cmdline
from .sysfs import is_live, join, read, read_bytes, run, which

# The UEFI global variable SecureBoot (EFI_GLOBAL_VARIABLE's GUID), as efivarfs names it.
SECURE_BOOT_VAR = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
IPMITOOL_TIMEOUT = 10.0  # a wedged BMC must not hold the ramdisk
_LAN6_SECTION = re.compile(r"^IPv6 (Static|Dynamic) Address \d+:\s*$")
_LAN_FIELD = re.compile(r"^(IP Address|MAC Address)\s*:\s*(\S+)\s*$", re.MULTILINE)


def system_vendor(root: str = "/") -> dict[str, object]:
    """DMI strings; `product_serial` and `product_uuid` are root-only (None otherwise)."""
    def dmi(name: str) -> str | None:
        return read(join(root, "sys/class/dmi/id/" + name)) or None

    return {
        "product_name": dmi("product_name"),
        "serial_number": dmi("product_serial"),
        "manufacturer": dmi("sys_vendor"),
        "uuid": dmi("product_uuid"),
        "firmware": {"vendor": dmi("bios_vendor"), "version": dmi("bios_version"),
                     "build_date": dmi("bios_date")},
    }


def boot(root: str, params: dict[str, str]) -> dict[str, object]:
    """`pxe_interface` is the MAC from `BOOTIF`, normalised (IPA sends BOOTIF raw).
    `secure_boot` (not in IPA's object) feeds the `secure_boot` capability."""
    uefi = os.path.isdir(join(root, "sys/firmware/efi"))
    return {"current_boot_mode": "uefi" if uefi else "bios",
            "pxe_interface": cmdline.bootif_mac(params.get("BOOTIF")),
            "secure_boot": secure_boot(root) if uefi else False}


def secure_boot(root: str) -> bool | None:
    """The SecureBoot variable's byte after its 4 attribute bytes (1: on). None when the
    variable cannot be read (efivarfs not mounted, old firmware): unknown, not off."""
    data = read_bytes(join(root, "sys/firmware/efi/efivars/" + SECURE_BOOT_VAR))
    return data[4] == 1 if data is not None and len(data) >= 5 else None


def hostname(root: str = "/") -> str | None:
    """The kernel's hostname (set from DHCP in the ramdisk); an unset one is None."""
    name = read(join(root, "proc/sys/kernel/hostname"))
    if name is None and is_live(root):
        name = os.uname().nodename
    return name if name and name not in ("(none)", "localhost") else None


def bmc(root: str = "/") -> dict[str, str | None]:
    """BMC addresses from `ipmitool lan print` and `lan6 print` (default channel) on the live
    system only; `lan6` only when `lan` answered (no BMC: one timeout, not two)."""
    output = v6_output = None
    if is_live(root) and which("ipmitool"):
        output = run(["ipmitool", "lan", "print"], timeout=IPMITOOL_TIMEOUT)
        if output is not None:
            v6_output = run(["ipmitool", "lan6", "print"], timeout=IPMITOOL_TIMEOUT)
    found = parse_lan_print(output or "")
    found["bmc_v6address"] = parse_lan6_print(v6_output or "")
    return found


def parse_lan_print(text: str) -> dict[str, str | None]:
    fields = dict(_LAN_FIELD.findall(text))
    address = fields.get("IP Address")
    mac = fields.get("MAC Address")
    return {"bmc_address": address if address and address != "0.0.0.0" else None,
            "bmc_v6address": None,
            "bmc_mac": mac.lower() if mac and mac != "00:00:00:00:00:00" else None}


def parse_lan6_print(text: str) -> str | None:
    """The BMC's IPv6 address from `ipmitool lan6 print`, chosen as IPA does: an active
    dynamic one (DHCPv6 or SLAAC) first, else an active enabled static one; never `::` nor
    a link-local one. IPA answers `::/0` when there is none; we answer None (null)."""
    sections: list[tuple[str, dict[str, str]]] = []
    for line in text.splitlines():
        section = _LAN6_SECTION.match(line.strip())
        if section:
            sections.append((section.group(1), {}))
        elif sections and ":" in line:
            key, _, value = line.strip().partition(":")
            sections[-1][1][key.strip()] = value.strip()
    for wanted in ("Dynamic", "Static"):
        for kind, fields in sections:
            usable = (fields.get("Source/Type") in ("DHCPv6", "SLAAC") if kind == "Dynamic"
                      else fields.get("Enabled") == "yes")
            address = fields.get("Address", "").split("/")[0]
            if kind == wanted and usable and fields.get("Status") == "active" \
                    and address.strip(":") and not address.lower().startswith("fe80:"):
                return address
    return None
