"""BMC addresses as both services compare them: a host, whatever form it was written in.

driver_info names a BMC in a driver's own field and form (`ipmi_address` = a host,
`redfish_address` = a URL); a ramdisk reports what `ipmitool lan print` says. Discovery must
find the same BMC in all of them, so each is reduced to one canonical host: an IP address in
its compressed form, or a lower-case DNS name.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Mapping
from typing import Any

# driver_info fields naming the BMC a ramdisk's report is looked up by, first found first
# (upstream inspector's list); a node's start may carry only these (no secrets among them).
LOOKUP_FIELDS = ("ipmi_address", "redfish_address", "ilo_address", "drac_address", "drac_host")

# What a ramdisk reports when the BMC has no address (IPA's and ipmitool's "none").
UNSET = frozenset({"", "0.0.0.0", "::", "::/0"})


def host_of(value: Any) -> str | None:
    """The canonical host of a BMC address (`10.0.0.5`, `[fd00::5]:623`,
    `https://bmc-7.example.com:8443/redfish`); None when there is none."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.lower() in UNSET:
        return None
    if "://" in text:
        text = urllib.parse.urlsplit(text).netloc.rpartition("@")[2]
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # host:port (an IPv6 address has more colons)
        text = text.partition(":")[0]
    try:
        return str(ipaddress.ip_address(text.partition("%")[0]))
    except ValueError:
        return text.lower().rstrip(".") or None


def addresses_of(driver_info: Mapping[str, Any] | None) -> set[str]:
    """The BMC hosts a node's driver_info names (every `*_address` field)."""
    found = set()
    for key, value in (driver_info or {}).items():
        if key.endswith("_address") and not key.startswith("deploy"):
            host = host_of(value)
            if host:
                found.add(host)
    return found


def hosts_text(driver_info: Mapping[str, Any] | None) -> str | None:
    """`addresses_of` as the bare-metal service stores it beside driver_info: " h1 h2 " (a
    host is matched as " host "), or None."""
    hosts = sorted(addresses_of(driver_info))
    return f" {' '.join(hosts)} " if hosts else None


# Hardware types by the driver_info fields they read: ipmi_* or redfish_* (`ipmi` is
# Ironic's name of the IPMI type).
IPMI_DRIVERS = frozenset({"ipmi", "pxe_ipmitool", "pxe_ipminative"})
REDFISH_DRIVERS = frozenset({"redfish"})


def driver_field(driver: str | None) -> str | None:
    """The driver_info field a BMC address goes into for hardware type `driver` (None: the
    type has no BMC)."""
    if driver in REDFISH_DRIVERS:
        return "redfish_address"
    if driver in IPMI_DRIVERS:
        return "ipmi_address"
    return None


def field_value(field: str, host: str, port: int | None = None) -> str:
    """`host` as field `field` holds it: Redfish's is a URL (with the port, if any); the
    IPMI types keep the port in a field of its own."""
    if field == "redfish_address":
        where = f"[{host}]" if ":" in host else host
        return f"https://{where}" + (f":{port}" if port is not None else "")
    return host
