"""Network interfaces in IPA's shape, from `/sys/class/net`.

Only interfaces backed by a device are listed (as IPA does): `lo`, bridges, bonds,
ifb and other virtual interfaces have no `device` link.

Addresses, in order of preference:
1. live system: `ip -j addr` (iproute2; busybox's `ip` has no JSON: not run);
2. fixture tree: `<root>/ip-addr.json`, a saved `ip -j addr` output (our own
   convention: no such file exists on a real system);
3. otherwise what is readable: IPv6 from `/proc/net/if_inet6`, IPv4 with the
   SIOCGIFADDR ioctl (live system only).
The first IPv4 address is reported, and the first global IPv6 address (a
link-local one when there is no global one).
"""

from __future__ import annotations

import json
import os
import re

from .sysfs import is_live, join, link_name, listdir, read, read_int, run, which

IP_JSON_FIXTURE = "ip-addr.json"
_PCI = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
# InfiniBand: Mellanox's DHCP client-id prefix, followed by the port GUID (as IPA).
_IB_CLIENT_ID_PREFIX = "ff:00:00:00:00:00:02:00:00:02:c9:00"

Addresses = dict[str, tuple[str | None, str | None]]


def collect(root: str = "/", warnings: list[str] | None = None) -> list[dict[str, object]]:
    base = join(root, "sys/class/net")
    names = [name for name in listdir(base)
             if name != "lo" and os.path.exists(os.path.join(base, name, "device"))]
    addrs = addresses(root, names)
    interfaces = []
    for name in names:
        interface = _interface(os.path.join(base, name), name, addrs.get(name, (None, None)))
        if interface is not None:
            interfaces.append(interface)
        elif warnings is not None:
            warnings.append(f"interface {name}: no readable MAC address, skipped")
    return interfaces


def _interface(path: str, name: str,
               addrs: tuple[str | None, str | None]) -> dict[str, object] | None:
    mac, client_id = mac_and_client_id(read(os.path.join(path, "address")) or "")
    if not mac:
        return None
    return {
        "name": name,
        "mac_address": mac,
        "ipv4_address": addrs[0],
        "ipv6_address": addrs[1],
        "has_carrier": read(os.path.join(path, "carrier")) == "1",
        "lldp": [],
        "vendor": read(os.path.join(path, "device/vendor")) or None,
        "product": read(os.path.join(path, "device/device")) or None,
        "client_id": client_id,
        "biosdevname": None,
        "speed_mbps": _speed(path),
        "driver": link_name(os.path.join(path, "device/driver")),
        "pci_address": _pci_address(os.path.join(path, "device")),
    }


def mac_and_client_id(address: str) -> tuple[str | None, str | None]:
    """Ethernet MAC as is; for a 20-byte InfiniBand address, IPA's MAC and client-id."""
    octets = address.strip().lower().split(":")
    if len(octets) == 6:
        return ":".join(octets), None
    if len(octets) == 20:
        guid = octets[12:]
        return ":".join(guid[:3] + guid[5:]), ":".join([_IB_CLIENT_ID_PREFIX, *guid])
    return None, None


def _speed(path: str) -> int | None:
    speed = read_int(os.path.join(path, "speed"))  # EINVAL when down, -1 when unknown
    return speed if speed is not None and speed > 0 else None


def _pci_address(device: str) -> str | None:
    """The PCI function; a virtio NIC's device is `virtioN`, whose parent is the PCI one."""
    real = os.path.realpath(device)
    for candidate in (os.path.basename(real), os.path.basename(os.path.dirname(real))):
        if _PCI.match(candidate):
            return candidate
    return None


def addresses(root: str, names: list[str]) -> Addresses:
    data = _ip_json(root)
    if data is not None:
        return from_ip_json(data)
    v6 = from_if_inet6(read(join(root, "proc/net/if_inet6")) or "")
    live = is_live(root)
    return {name: (_ioctl_ipv4(name) if live else None, v6.get(name)) for name in names}


def _ip_json(root: str) -> list[object] | None:
    if is_live(root):
        ip = which("ip")
        # busybox's ip (the ramdisk's) has no JSON output: spare the fork and the import
        usable = ip is not None and not os.path.realpath(ip).endswith("/busybox")
        output = run([ip, "-j", "addr", "show"], timeout=5) if ip and usable else None
    else:
        output = read(join(root, IP_JSON_FIXTURE))
    try:
        data = json.loads(output) if output else None
    except ValueError:
        return None
    return data if isinstance(data, list) else None


def from_ip_json(data: list[object]) -> Addresses:
    result: Addresses = {}
    for link in data:
        if not isinstance(link, dict):
            continue
        v4: list[str] = []
        v6: list[tuple[str, str]] = []
        for info in link.get("addr_info") or []:
            if isinstance(info, dict) and info.get("family") == "inet":
                v4.append(str(info.get("local")))
            elif isinstance(info, dict) and info.get("family") == "inet6":
                v6.append((str(info.get("scope")), str(info.get("local"))))
        result[str(link.get("ifname"))] = (v4[0] if v4 else None, _pick_v6(v6))
    return result


def from_if_inet6(text: str) -> dict[str, str]:
    """`/proc/net/if_inet6`: hex address, ifindex, prefix length, scope, flags, name."""
    per_name: dict[str, list[tuple[str, str]]] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 6 and len(fields[0]) == 32:
            scope = {"00": "global", "20": "link"}.get(fields[3], "other")
            per_name.setdefault(fields[5], []).append((scope, _ipv6_text(fields[0])))
    return {name: addr for name, addrs in per_name.items() if (addr := _pick_v6(addrs))}


def _pick_v6(addrs: list[tuple[str, str]]) -> str | None:
    for wanted in ("global", "link"):
        for scope, addr in addrs:
            if scope == wanted:
                return addr
    return None


def _ipv6_text(hex32: str) -> str:
    import socket

    return socket.inet_ntop(socket.AF_INET6, bytes.fromhex(hex32))


def _ioctl_ipv4(name: str) -> str | None:
    """Primary IPv4 address without `ip` (busybox ramdisks): SIOCGIFADDR."""
    import fcntl
    import socket

    request = name.encode()[:15].ljust(40, b"\0")  # struct ifreq: name[16] + sockaddr
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            reply = fcntl.ioctl(sock.fileno(), 0x8915, request)  # SIOCGIFADDR
    except OSError:
        return None
    return socket.inet_ntoa(reply[20:24])
