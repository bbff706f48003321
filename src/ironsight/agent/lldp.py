"""LLDP frames captured with raw sockets, without lldpd (not in the ramdisk), IPA's way.

For each interface with carrier, an AF_PACKET socket bound to ethertype 0x88cc joins the
LLDP multicast group (01:80:c2:00:00:0e: some NICs filter it otherwise) and waits, all
interfaces at once, for one LLDPDU each or until the timeout. Like IPA, the TLVs are sent
raw, `[type, hex value]` (hex: a switch may put anything in a TLV, UTF-8 or not; decoding
is the `parse-lldp` hook's job), in `inventory.interfaces[].lldp` and in `lldp_raw`
(`{interface: TLVs}`, IPA's `lldp` collector).

Bounds, as Ironic's after bug 2155051: a TLV value longer than 511 octets is dropped (the
9-bit length field cannot say more; a frame claiming it is malformed), and at most 64
interfaces are listened on. The End TLV stops the parsing and is not reported.

Kernel command line, as IPA: `ipa-collect-lldp=1` turns it on (off by default, as IPA: on a
network without LLDP every interface with carrier waits out the timeout; discoverd's
default `[pxe] kernel_params` carry `=1`, so ironsight's own inspections collect it);
`ipa-lldp-timeout=SECONDS` (default 30 as IPA's, switches' default interval; at most 300).
The wait ends as soon as every interface has had its frame.
On a fixture tree (`--root`), `<root>/lldp/<interface>` holds a saved frame (our convention).
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time

from .sysfs import join, listdir, read_bytes

ETH_P_LLDP = 0x88CC
ETH_P_8021Q = 0x8100
MULTICAST = bytes.fromhex("0180c200000e")
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_MULTICAST = 0
PACKET_OUTGOING = 4
MAX_VALUE = 511
MAX_INTERFACES = 64
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 300.0
FRAME_SIZE = 1600
FIXTURE_DIR = "lldp"

Tlvs = list[list[object]]


def settings(params: dict[str, str]) -> tuple[bool, float]:
    """(enabled, timeout) from the kernel command line; a bad timeout keeps the default."""
    enabled = params.get("ipa-collect-lldp", "0").strip().lower() in ("1", "true", "yes")
    try:
        timeout = float(params.get("ipa-lldp-timeout", DEFAULT_TIMEOUT))
    except ValueError:
        timeout = DEFAULT_TIMEOUT
    return enabled, bounded(timeout)


def bounded(timeout: float) -> float:
    """NaN or negative: the default; beyond MAX_TIMEOUT (infinity too): MAX_TIMEOUT."""
    if timeout != timeout or timeout < 0:
        return DEFAULT_TIMEOUT
    return min(timeout, MAX_TIMEOUT)


def parse_frame(frame: bytes) -> Tlvs | None:
    """The TLVs of an Ethernet LLDP frame, or None when it is not one."""
    offset = 12
    if frame[offset:offset + 2] == ETH_P_8021Q.to_bytes(2, "big"):
        offset += 4
    if len(frame) < offset + 2 or frame[offset:offset + 2] != ETH_P_LLDP.to_bytes(2, "big"):
        return None
    return parse_tlvs(frame[offset + 2:])


def parse_tlvs(payload: bytes) -> Tlvs:
    tlvs: Tlvs = []
    offset = 0
    while offset + 2 <= len(payload):
        header = int.from_bytes(payload[offset:offset + 2], "big")
        kind, length = header >> 9, header & 0x1FF
        if kind == 0:  # End of LLDPDU
            break
        value = payload[offset + 2:offset + 2 + length]
        if len(value) < length:  # truncated: the rest cannot be trusted
            break
        if length <= MAX_VALUE:
            tlvs.append([kind, value.hex()])
        offset += 2 + length
    return tlvs


def collect(root: str, names: list[str], timeout: float, live: bool,
            warnings: list[str] | None = None) -> dict[str, Tlvs]:
    """`{interface: TLVs}` for the interfaces that got an LLDPDU (live or fixture)."""
    if len(names) > MAX_INTERFACES and warnings is not None:
        warnings.append(f"LLDP: {len(names)} interfaces with carrier, listening on the "
                        f"first {MAX_INTERFACES} only")
    names = names[:MAX_INTERFACES]
    if not live:
        return _fixture(root, names)
    return capture(names, timeout, warnings)


def _fixture(root: str, names: list[str]) -> dict[str, Tlvs]:
    base = join(root, FIXTURE_DIR)
    found = {}
    for name in listdir(base):
        tlvs = parse_frame(read_bytes(os.path.join(base, name)) or b"") if name in names else None
        if tlvs is not None:
            found[name] = tlvs
    return found


def capture(names: list[str], timeout: float,
            warnings: list[str] | None = None) -> dict[str, Tlvs]:
    """Listen on every interface at once until each has one LLDPDU or `timeout` passes."""
    sockets: dict[socket.socket, str] = {}
    found: dict[str, Tlvs] = {}
    try:
        for name in names:
            try:
                sockets[open_socket(name)] = name
            except OSError as exc:
                if warnings is not None:
                    warnings.append(f"LLDP: cannot listen on {name}: {exc}")
        deadline = time.monotonic() + timeout
        while sockets:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select(list(sockets), [], [], left)
            for sock in ready:
                tlvs = _receive(sock, sockets[sock])
                if tlvs is not None:
                    found[sockets.pop(sock)] = tlvs
                    sock.close()
    finally:
        for sock in sockets:
            sock.close()
    return found


def open_socket(name: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_LLDP))
    try:
        sock.bind((name, ETH_P_LLDP))
        index = socket.if_nametoindex(name)
        # struct packet_mreq: int ifindex, u16 type, u16 alen, u8 address[8]
        mreq = struct.pack("iHH8s", index, PACKET_MR_MULTICAST, len(MULTICAST), MULTICAST)
        sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _receive(sock: socket.socket, name: str) -> Tlvs | None:
    """A frame sent by this host, or queued before `bind` from another interface, is no
    answer for this one."""
    try:
        frame, address = sock.recvfrom(FRAME_SIZE)
    except OSError:
        return None
    if address[0] != name or (len(address) > 2 and address[2] == PACKET_OUTGOING):
        return None
    return parse_frame(frame)
