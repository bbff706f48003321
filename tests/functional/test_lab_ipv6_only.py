"""An IPv6-only port of the lab's bridge, for real: the lab's own `network.create` and its
nftables rules, in network namespaces of this test's own. Two stand-in VMs are namespaces on
veth pairs (the rules match bridge ports by name, a tap or a veth alike): `vm6` on a port
that is IPv6-only, `vm4` on an ordinary one.

Frames are sent and captured with packet sockets, so each direction is checked on its own
(a frame entering the bridge from the port, one leaving the bridge through it); they are
well-formed (a DHCPv4 discover's and a DHCPv6 solicit's headers, an ARP request), as a
machine with br_netfilter drops malformed IP frames on bridges before our rules see them.
Then a TCP connection, as a VM would make to discoverd, shows what that means: IPv6 only."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ironsight.lab import network
from ironsight.lab.network import LabNetwork, entered

from .lab_network import MARKS

ETH_P_ALL = 0x0003
IPV4, ARP, IPV6 = "IPv4", "ARP", "IPv6"
PACKET_OUTGOING = 4
WAIT = 1.0  # a frame that passes is there within milliseconds
CONNECT_TIMEOUT = 3.0

V6_PORT, V4_PORT = "isv-v6port", "isv-v4port"


pytestmark = MARKS


@dataclass(frozen=True)
class Segment:
    lab: LabNetwork
    vm6: str  # the namespace of the VM on the IPv6-only port
    vm4: str  # the namespace of the VM on an ordinary port

    @property
    def bridge_v4(self) -> str:
        return self.lab.address

    @property
    def bridge_v6(self) -> str:
        return self.lab.ipv6.split("/")[0]


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


def _plug(lab: LabNetwork, vm: str, port: str, host: int) -> None:
    """A stand-in VM: namespace `vm`, its eth0 the far end of the bridge port `port`."""
    ip("netns", "add", vm)
    ip("-n", lab.namespace, "link", "add", port, "type", "veth", "peer", "name", "eth0",
       "netns", vm)
    ip("-n", lab.namespace, "link", "set", port, "master", lab.bridge, "up")
    ip("-n", vm, "link", "set", "lo", "up")
    ip("-n", vm, "link", "set", "eth0", "up")
    ip("-n", vm, "addr", "add", f"10.20.0.{host}/24", "dev", "eth0")
    ip("-n", vm, "-6", "addr", "add", f"fd20:20::{host}/64", "dev", "eth0", "nodad")


@pytest.fixture(scope="module")
def segment() -> Iterator[Segment]:
    name = f"isv6-{os.getpid()}"
    lab = LabNetwork(namespace=name, bridge="br-t", ipv6_only_taps=(V6_PORT,))
    vm6, vm4 = f"{name}-vm6", f"{name}-vm4"
    network.create(lab, taps=())
    try:
        _plug(lab, vm6, V6_PORT, 10)
        _plug(lab, vm4, V4_PORT, 11)
        yield Segment(lab, vm6, vm4)
    finally:
        for vm in (vm6, vm4):
            subprocess.run(["ip", "netns", "del", vm], capture_output=True, timeout=20,
                           check=False)
        network.destroy(lab)


# --- frames ------------------------------------------------------------------------------------

@contextlib.contextmanager
def capture(namespace: str, ifname: str) -> Iterator[socket.socket]:
    with entered(namespace):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    with sock:
        sock.bind((ifname, 0))
        yield sock


def _checksum(header: bytes) -> int:
    total: int = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _udp(source: int, destination: int, payload: bytes) -> bytes:
    return struct.pack("!HHHH", source, destination, 8 + len(payload), 0) + payload


def frame(kind: str, mac: bytes, marker: bytes) -> bytes:
    """A broadcast or multicast frame from `mac` carrying `marker`."""
    if kind == IPV4:  # a DHCPv4 discover's headers: 0.0.0.0:68 -> 255.255.255.255:67
        udp = _udp(68, 67, marker)
        header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                             bytes(4), b"\xff" * 4)
        header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
        return b"\xff" * 6 + mac + b"\x08\x00" + header + udp
    if kind == ARP:  # who has 10.20.0.1 (the marker in the frame's padding)
        arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac, bytes([10, 20, 0, 99]),
                          bytes(6), bytes([10, 20, 0, 1]))
        return b"\xff" * 6 + mac + b"\x08\x06" + arp + marker
    # a DHCPv6 solicit's headers: [::]:546 -> [ff02::1:2]:547
    udp = _udp(546, 547, marker)
    header = struct.pack("!IHBB16s16s", 6 << 28, len(udp), 17, 64, bytes(16),
                         ipaddress.IPv6Address("ff02::1:2").packed)
    return b"\x33\x33\x00\x01\x00\x02" + mac + b"\x86\xdd" + header + udp


def send(namespace: str, ifname: str, kind: str, marker: bytes) -> None:
    """A frame of `kind` carrying `marker`, written on `ifname` of `namespace`."""
    with entered(namespace):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    with sock:
        sock.bind((ifname, 0))
        sock.send(frame(kind, sock.getsockname()[4], marker).ljust(60, b"\0"))


def arrives(segment: Segment, kind: str, sender: tuple[str, str],
            receiver: tuple[str, str]) -> bool:
    """Whether a frame written on `sender` (namespace, interface) is seen on `receiver`."""
    marker = secrets.token_bytes(16)
    with capture(*receiver) as sock:
        send(*sender, kind, marker)
        deadline = time.monotonic() + WAIT
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                frame, address = sock.recvfrom(65535)
            except TimeoutError:
                return False
            if address[2] != PACKET_OUTGOING and marker in frame:
                return True
    return False


def bridge(segment: Segment) -> tuple[str, str]:
    return segment.lab.namespace, segment.lab.bridge


def vm6(segment: Segment) -> tuple[str, str]:
    return segment.vm6, "eth0"


def vm4(segment: Segment) -> tuple[str, str]:
    return segment.vm4, "eth0"


@pytest.mark.parametrize("kind", [IPV4, ARP])
def test_ipv4_and_arp_from_the_ipv6_only_port_are_dropped(segment: Segment,
                                                          kind: str) -> None:
    assert not arrives(segment, kind, vm6(segment), bridge(segment))


@pytest.mark.parametrize("kind", [IPV4, ARP])
def test_ipv4_and_arp_to_the_ipv6_only_port_are_dropped(segment: Segment,
                                                        kind: str) -> None:
    assert not arrives(segment, kind, bridge(segment), vm6(segment))


@pytest.mark.parametrize("kind", [IPV4, ARP])
def test_ipv4_and_arp_between_vms_do_not_reach_the_ipv6_only_port(segment: Segment,
                                                                  kind: str) -> None:
    assert not arrives(segment, kind, vm4(segment), vm6(segment))


def test_ipv6_passes_from_the_ipv6_only_port(segment: Segment) -> None:
    assert arrives(segment, IPV6, vm6(segment), bridge(segment))


def test_ipv6_passes_to_the_ipv6_only_port(segment: Segment) -> None:
    assert arrives(segment, IPV6, bridge(segment), vm6(segment))


@pytest.mark.parametrize("kind", [IPV4, ARP])
def test_an_ordinary_port_passes_ipv4_and_arp(segment: Segment, kind: str) -> None:
    assert arrives(segment, kind, vm4(segment), bridge(segment))
    assert arrives(segment, kind, bridge(segment), vm4(segment))


# --- what a VM can reach ---------------------------------------------------------------------

@contextlib.contextmanager
def listening(namespace: str, family: socket.AddressFamily, address: str) -> Iterator[int]:
    """A TCP listener in `namespace` (discoverd's stand-in); its port."""
    with entered(namespace):
        server = socket.socket(family, socket.SOCK_STREAM)
    with server:
        server.bind((address, 0))
        server.listen()
        yield server.getsockname()[1]


def connects(namespace: str, family: socket.AddressFamily, address: str, port: int) -> bool:
    with entered(namespace):
        client = socket.socket(family, socket.SOCK_STREAM)
    with client:
        client.settimeout(CONNECT_TIMEOUT)
        try:
            client.connect((address, port))
        except OSError:  # no ARP answer: unreachable, or no answer at all
            return False
        return True


def test_the_ipv6_only_vm_reaches_the_bridge_over_ipv6(segment: Segment) -> None:
    with listening(segment.lab.namespace, socket.AF_INET6, segment.bridge_v6) as port:
        assert connects(segment.vm6, socket.AF_INET6, segment.bridge_v6, port)


def test_the_ipv6_only_vm_cannot_reach_the_bridge_over_ipv4(segment: Segment) -> None:
    with listening(segment.lab.namespace, socket.AF_INET, segment.bridge_v4) as port:
        assert not connects(segment.vm6, socket.AF_INET, segment.bridge_v4, port)


def test_a_vm_on_an_ordinary_port_reaches_the_bridge_over_ipv4(segment: Segment) -> None:
    with listening(segment.lab.namespace, socket.AF_INET, segment.bridge_v4) as port:
        assert connects(segment.vm4, socket.AF_INET, segment.bridge_v4, port)


def test_the_rules_are_in_the_labs_namespace_only(segment: Segment) -> None:
    inside = subprocess.run([*segment.lab.prefix, "nft", "list", "tables"], check=True,
                            capture_output=True, text=True, timeout=20).stdout
    outside = subprocess.run(["nft", "list", "tables"], check=True, capture_output=True,
                             text=True, timeout=20).stdout
    assert f"table bridge {network.NFT_TABLE}" in inside.splitlines()
    assert f"table bridge {network.NFT_TABLE}" not in outside.splitlines()
