"""A DHCP client that asks what a booting machine of a given kind is told to boot.

It sends one DHCPDISCOVER (or DHCPv6 SOLICIT) with the options a PXE ROM, UEFI firmware,
a UEFI HTTP-boot client or iPXE sends (client architecture, vendor class, user class), from
inside the test's client network namespace, and returns the boot file of the first answer.
busybox udhcpc cannot send those options; the packets are built here by their RFCs
(RFC 2131/2132, RFC 4578, RFC 8415, RFC 5970).
"""

from __future__ import annotations

import errno
import os
import secrets
import socket
import struct
import time
from dataclasses import dataclass, field

from ironsight.common.netns import entered, socket_in

MAGIC = b"\x63\x82\x53\x63"
UEFI_ENTERPRISE = 343
SO_BINDTODEVICE = getattr(socket, "SO_BINDTODEVICE", 25)
ALL_DHCP_SERVERS = "ff02::1:2"


@dataclass(frozen=True)
class Client:
    """What the machine says about itself."""

    mac: str
    arch: int | None = None  # option 93 / DHCPv6 option 61
    vendor_class: str | None = None  # option 60 / DHCPv6 option 16 (enterprise 343)
    user_class: str | None = None  # option 77 / DHCPv6 option 15 ("iPXE")


@dataclass
class Answer:
    boot_file: str | None  # BOOTP file field or option 67; DHCPv6 option 59
    server: str | None = None  # siaddr (next server), DHCPv4 only
    options: dict[int, bytes] = field(default_factory=dict)

    @property
    def vendor_class(self) -> bytes | None:
        return self.options.get(60)


def pxe_client(mac: str, arch: int) -> Client:
    """A firmware PXE client: vendor class PXEClient:Arch:NNNNN:UNDI:003000."""
    return Client(mac, arch, f"PXEClient:Arch:{arch:05d}:UNDI:003000")


def http_client(mac: str, arch: int = 16) -> Client:
    return Client(mac, arch, f"HTTPClient:Arch:{arch:05d}:UNDI:003000")


def _mac_bytes(mac: str) -> bytes:
    return bytes(int(part, 16) for part in mac.split(":"))


def discover_packet(client: Client, xid: int) -> bytes:
    header = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 0, xid, 0, 0x8000,
                         bytes(4), bytes(4), bytes(4), bytes(4),
                         _mac_bytes(client.mac).ljust(16, b"\0"), bytes(64), bytes(128))
    options = bytearray(b"\x35\x01\x01")  # DHCPDISCOVER
    options += bytes([55, 5, 1, 3, 60, 66, 67])  # parameter request list
    if client.arch is not None:
        options += bytes([93, 2]) + struct.pack("!H", client.arch)
        options += bytes([94, 3, 1, 3, 0])  # network interface identifier: UNDI 3.0
    if client.vendor_class:
        options += bytes([60, len(client.vendor_class)]) + client.vendor_class.encode()
    if client.user_class:
        options += bytes([77, len(client.user_class)]) + client.user_class.encode()
    return header + MAGIC + bytes(options) + b"\xff"


def parse_reply(data: bytes, xid: int) -> Answer | None:
    if len(data) < 240 or data[0] != 2 or struct.unpack("!I", data[4:8])[0] != xid:
        return None
    siaddr = socket.inet_ntoa(data[20:24])
    boot = data[108:236].split(b"\0")[0].decode() or None
    options: dict[int, bytes] = {}
    at = 240
    while at < len(data) and data[at] != 255:
        if data[at] == 0:
            at += 1
            continue
        code, size = data[at], data[at + 1]
        options[code] = data[at + 2:at + 2 + size]
        at += 2 + size
    if 67 in options:
        boot = options[67].split(b"\0")[0].decode()
    return Answer(boot, siaddr, options)


def ask_v4(namespace: str, interface: str, client: Client, timeout: float = 3.0
           ) -> Answer | None:
    """The OFFER to one DISCOVER, or None when none comes within `timeout`."""
    xid = secrets.randbits(32)
    with socket_in(namespace, socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        sock.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, interface.encode())
        sock.bind(("0.0.0.0", 68))
        sock.settimeout(timeout)
        sock.sendto(discover_packet(client, xid), ("255.255.255.255", 67))
        while True:
            try:
                data, _ = sock.recvfrom(4096)
            except TimeoutError:
                return None
            answer = parse_reply(data, xid)
            if answer is not None:
                return answer


def _v6_option(code: int, body: bytes) -> bytes:
    return struct.pack("!HH", code, len(body)) + body


def solicit_packet(client: Client, txid: bytes) -> bytes:
    duid = struct.pack("!HH", 3, 1) + _mac_bytes(client.mac)  # DUID-LL, Ethernet
    body = _v6_option(1, duid)
    body += _v6_option(3, struct.pack("!III", 1, 0, 0))  # IA_NA, IAID 1
    body += _v6_option(6, struct.pack("!HH", 59, 60))  # option request: boot file URL, param
    body += _v6_option(8, b"\0\0")  # elapsed time
    if client.arch is not None:
        body += _v6_option(61, struct.pack("!H", client.arch))
    if client.vendor_class:
        data = client.vendor_class.encode()
        body += _v6_option(16, struct.pack("!IH", UEFI_ENTERPRISE, len(data)) + data)
    if client.user_class:
        data = client.user_class.encode()
        body += _v6_option(15, struct.pack("!H", len(data)) + data)
    return b"\x01" + txid + body


def parse_advertise(data: bytes, txid: bytes) -> Answer | None:
    if len(data) < 4 or data[0] != 2 or data[1:4] != txid:
        return None
    options: dict[int, bytes] = {}
    at = 4
    while at + 4 <= len(data):
        code, size = struct.unpack("!HH", data[at:at + 4])
        options[code] = data[at + 4:at + 4 + size]
        at += 4 + size
    url = options.get(59)
    return Answer(url.decode() if url is not None else None, None, options)


def ask_v6(namespace: str, interface: str, client: Client, timeout: float = 3.0
           ) -> Answer | None:
    """The ADVERTISE to one SOLICIT, or None. The interface needs its link-local address
    (no duplicate address detection pending)."""
    txid = secrets.token_bytes(3)
    index = _index(namespace, interface)
    with socket_in(namespace, socket.AF_INET6) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, interface.encode())
        sock.bind(("::", 546, 0, index))
        sock.settimeout(timeout)
        packet = solicit_packet(client, txid)
        for _ in range(50):  # the link-local address comes a moment after the link
            try:
                sock.sendto(packet, (ALL_DHCP_SERVERS, 547, 0, index))
                break
            except OSError as exc:
                if exc.errno != errno.ENETUNREACH:
                    raise
                time.sleep(0.1)
        while True:
            try:
                data, _ = sock.recvfrom(4096)
            except TimeoutError:
                return None
            answer = parse_advertise(data, txid)
            if answer is not None:
                return answer


def _index(namespace: str | None, interface: str) -> int:
    """Interface indexes are per namespace: read it there."""
    if namespace is None:
        return socket.if_nametoindex(interface)
    with entered(namespace):
        return socket.if_nametoindex(interface)


def machine_id() -> str:
    """A MAC of the locally administered range for one test."""
    return "02:" + ":".join(f"{b:02x}" for b in os.urandom(5))
