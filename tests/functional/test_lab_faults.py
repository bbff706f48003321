"""The lab's fault injection (lab/faults.py) on real traffic: the lab's own network and nft
rules in namespaces of this test's own. Two stand-in VMs are namespaces on veth pairs, each
with its own MAC; a stand-in of discoverd's ramdisk side (one HTTP port for boot files and
callbacks) and of dnsmasq (UDP 67) listen in the lab's namespace on the bridge address, as
the real ones do. Each fault must stop exactly what it names, for its VM only."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ironsight.lab import faults, network
from ironsight.lab.network import LabNetwork, entered
from ironsight.lab.state import NS_RAMDISK_PORT

from .lab_network import MARKS

WAIT = 1.5  # an answer comes within milliseconds; a dropped request never does
BROKEN_MAC, OTHER_MAC = "52:54:00:fa:00:01", "52:54:00:fa:00:02"


pytestmark = MARKS


@dataclass(frozen=True)
class Segment:
    lab: LabNetwork
    broken: str  # the namespace of the VM given faults
    other: str  # the namespace of a VM never given one


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


def _plug(lab: LabNetwork, vm: str, port: str, mac: str, host: int) -> None:
    ip("netns", "add", vm)
    ip("-n", lab.namespace, "link", "add", port, "type", "veth", "peer", "name", "eth0",
       "netns", vm)
    ip("-n", lab.namespace, "link", "set", port, "master", lab.bridge, "up")
    ip("-n", vm, "link", "set", "eth0", "address", mac)
    ip("-n", vm, "link", "set", "lo", "up")
    ip("-n", vm, "link", "set", "eth0", "up")
    ip("-n", vm, "addr", "add", f"10.20.0.{host}/24", "dev", "eth0")


def _http_server(namespace: str, address: str, stop: threading.Event) -> socket.socket:
    """Answers every request `200 <its request line>` (each connection in a thread: a
    dropped request must not hold up the next)."""
    with entered(namespace):
        server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((address, NS_RAMDISK_PORT))
    server.listen(16)
    server.settimeout(0.2)

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(WAIT * 2)
            try:
                line = conn.recv(4096).split(b"\r\n")[0]
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n" + line)
            except OSError:
                pass

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def segment() -> Iterator[Segment]:
    name = f"isflt-{os.getpid()}"
    lab = LabNetwork(namespace=name, bridge="br-f")
    broken, other = f"{name}-a", f"{name}-b"
    network.create(lab, taps=())
    stop = threading.Event()
    try:
        _plug(lab, broken, "isf-a", BROKEN_MAC, 10)
        _plug(lab, other, "isf-b", OTHER_MAC, 11)
        server = _http_server(name, lab.address, stop)
        with server:
            yield Segment(lab, broken, other)
    finally:
        stop.set()
        for vm in (broken, other):
            subprocess.run(["ip", "netns", "del", vm], capture_output=True, timeout=20,
                           check=False)
        network.destroy(lab)


@pytest.fixture
def fault(segment: Segment) -> Iterator[None]:
    """Each test sets its own fault; none is left behind."""
    yield
    faults.apply(segment.lab, {}, NS_RAMDISK_PORT)


def request(segment: Segment, vm: str, line: str) -> str:
    """What the stand-in discoverd answered to `line` sent from `vm`: its request line, or
    "timeout" (the request never reached it), or "reset" (refused)."""
    with entered(vm):
        sock = socket.create_connection((segment.lab.address, NS_RAMDISK_PORT), timeout=WAIT)
    with sock:
        try:
            sock.sendall(f"{line} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            answer = sock.recv(4096)
        except TimeoutError:
            return "timeout"
        except ConnectionResetError:
            return "reset"
    return answer.split(b"\r\n\r\n", 1)[-1].decode() or "reset"


def dhcp_arrives(segment: Segment, vm: str) -> bool:
    """Whether a datagram from `vm` to UDP 67 of the bridge address is received."""
    with entered(segment.lab.namespace):
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with entered(vm):
        client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with server, client:
        server.bind((segment.lab.address, 67))
        server.settimeout(WAIT)
        client.sendto(b"discover", (segment.lab.address, 67))
        with contextlib.suppress(TimeoutError):
            return server.recv(64) == b"discover"
    return False


KERNEL, INITRAMFS = "GET /pxe/vmlinuz", "GET /pxe/initramfs"
SCRIPT, HELLO, REPORT = "GET /boot/52-54-00-fa-00-01.ipxe", "POST /v1/hello", \
    "POST /v1/continue"


@pytest.mark.usefixtures("fault")
def test_no_kernel_drops_only_the_kernels_request(segment: Segment) -> None:
    faults.apply(segment.lab, {BROKEN_MAC: "no-kernel"}, NS_RAMDISK_PORT)
    assert request(segment, segment.broken, KERNEL) == "timeout"
    assert request(segment, segment.broken, INITRAMFS) == INITRAMFS + " HTTP/1.1"
    assert request(segment, segment.broken, SCRIPT) == SCRIPT + " HTTP/1.1"
    assert request(segment, segment.other, KERNEL) == KERNEL + " HTTP/1.1"


@pytest.mark.usefixtures("fault")
def test_no_ramdisk_drops_only_the_initramfs_request(segment: Segment) -> None:
    faults.apply(segment.lab, {BROKEN_MAC: "no-ramdisk"}, NS_RAMDISK_PORT)
    assert request(segment, segment.broken, INITRAMFS) == "timeout"
    assert request(segment, segment.broken, KERNEL) == KERNEL + " HTTP/1.1"
    assert request(segment, segment.other, INITRAMFS) == INITRAMFS + " HTTP/1.1"


@pytest.mark.usefixtures("fault")
def test_no_agent_drops_the_ramdisks_calls_but_not_its_boot_files(segment: Segment) -> None:
    faults.apply(segment.lab, {BROKEN_MAC: "no-agent"}, NS_RAMDISK_PORT)
    assert request(segment, segment.broken, HELLO) == "timeout"
    assert request(segment, segment.broken, REPORT) == "timeout"
    assert request(segment, segment.broken, KERNEL) == KERNEL + " HTTP/1.1"
    assert request(segment, segment.other, HELLO) == HELLO + " HTTP/1.1"


@pytest.mark.usefixtures("fault")
def test_wrong_callback_refuses_the_ramdisks_calls_at_once(segment: Segment) -> None:
    faults.apply(segment.lab, {BROKEN_MAC: "wrong-callback"}, NS_RAMDISK_PORT)
    assert request(segment, segment.broken, REPORT) == "reset"
    assert request(segment, segment.broken, INITRAMFS) == INITRAMFS + " HTTP/1.1"
    assert request(segment, segment.other, REPORT) == REPORT + " HTTP/1.1"


@pytest.mark.usefixtures("fault")
def test_no_dhcp_drops_the_vms_dhcp_only(segment: Segment) -> None:
    faults.apply(segment.lab, {BROKEN_MAC: "no-dhcp"}, NS_RAMDISK_PORT)
    assert not dhcp_arrives(segment, segment.broken)
    assert dhcp_arrives(segment, segment.other)
    assert request(segment, segment.broken, KERNEL) == KERNEL + " HTTP/1.1"


@pytest.mark.usefixtures("fault")
def test_clearing_the_faults_lets_everything_through_again(segment: Segment) -> None:
    faults.apply(segment.lab, {BROKEN_MAC: "no-kernel"}, NS_RAMDISK_PORT)
    faults.apply(segment.lab, {}, NS_RAMDISK_PORT)
    assert request(segment, segment.broken, KERNEL) == KERNEL + " HTTP/1.1"
    assert dhcp_arrives(segment, segment.broken)
