"""The discovery ramdisk, built for real and booted in QEMU: what its agent posts.

QEMU runs with TCG only (`-accel tcg`): /dev/kvm on the CI machines is PVM, where stock
kernels hang instead of failing. User-mode networking maps the guest's 10.0.2.2 to the
host's loopback, where a local HTTP server plays discoverd's `/v1/continue`. On an IPv6-only
user network (`ipv4=off`) slirp answers no DHCP but sends router advertisements (fec0::/64
unless `ipv6-net=` says otherwise) and maps its host address (fec0::2, or `ipv6-host=`) to
the host's ::1. With
`ironsight.poweroff=1` the ramdisk powers the VM off itself, so QEMU must exit on its own.

The ramdisk is built into a cache shared across runs (`$IRONSIGHT_STATE_DIR/ramdisk`, else
`.state/ramdisk-cache` in the repository) and only rebuilt when its inputs change.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ironsight.ramdisk import build

REPO = Path(__file__).resolve().parents[2]
QEMU = shutil.which("qemu-system-x86_64")
QEMU_IMG = shutil.which("qemu-img")
MAC = "52:54:00:12:34:56"
BOOTIF = "01-" + MAC.replace(":", "-")
MEMORY_MB = 256
DISK_BYTES = 3 * 1024**3
REPORT_TIMEOUT = 120.0  # seconds from QEMU start; a boot takes ~10-15 s under TCG
EXIT_TIMEOUT = 60.0


def _cache_dir() -> Path:
    state = os.environ.get("IRONSIGHT_STATE_DIR")
    return Path(state) / "ramdisk" if state else REPO / ".state" / "ramdisk-cache"


@pytest.fixture(scope="module")
def ramdisk() -> build.Result:
    if not (QEMU and QEMU_IMG):
        message = "qemu-system-x86_64/qemu-img not installed (scripts/install-deps.sh)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    result = build.build(_cache_dir(), log=print)
    timings = ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
    print(f"ramdisk {'built' if result.rebuilt else 'cached'} in {result.out_dir}: {timings}")
    return result


# --- the callback server --------------------------------------------------------------------------

@dataclass(frozen=True)
class Network:
    """The VM's user-mode network and the address the guest reaches the host's loopback at."""

    netdev: str
    host: str  # in a URL: an IPv6 one in brackets
    loopback: str  # where the callback server listens


IPV4 = Network("user,id=n0", "10.0.2.2", "127.0.0.1")


class _Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


@dataclass
class Callback:
    """Receives reports (`/v1/continue`); answers the first `reject_first` of them with HTTP
    400. The agent's hello and progress beats (`/v1/hello`, `/v1/beat`) are kept apart."""

    reject_first: int = 0
    reports: queue.Queue[tuple[float, dict[str, Any]]] = field(default_factory=queue.Queue)
    hellos: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    beats: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        callback = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received = time.monotonic()
                if self.path.endswith("/v1/hello"):
                    callback.hellos.append((received, json.loads(body)))
                    self._answer(202, {"uuid": "e2e"})
                    return
                if self.path.endswith("/v1/beat"):
                    callback.beats.append(json.loads(body))
                    self._answer(202, {"uuid": "e2e"})
                    return
                if callback.reject_first > 0:
                    callback.reject_first -= 1
                    self._answer(400, {"error": {"message": "rejected by the test"}})
                    return
                callback.reports.put((received, json.loads(body)))
                self._answer(202, {"uuid": "e2e"})

            def _answer(self, status: int, data: dict[str, Any]) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def network(request: pytest.FixtureRequest) -> Network:
    """IPv4 with DHCP unless a test parametrizes it (indirect)."""
    net: Network = getattr(request, "param", IPV4)
    return net


@pytest.fixture
def callback(request: pytest.FixtureRequest, network: Network) -> Iterator[Callback]:
    cb = Callback(reject_first=getattr(request, "param", 0))
    server_class = _Server6 if ":" in network.loopback else ThreadingHTTPServer
    server = server_class((network.loopback, 0), cb.handler())
    cb.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield cb
    server.shutdown()
    server.server_close()


# --- the VM ---------------------------------------------------------------------------------------

@dataclass
class Boot:
    proc: subprocess.Popen[bytes]
    serial: Path
    started: float

    def log(self) -> str:
        try:
            return self.serial.read_text(errors="replace")
        except OSError:
            return "(no serial log)"

    def fail(self, why: str) -> None:
        pytest.fail(f"{why}\n--- serial log ({self.serial}) ---\n{self.log()}")


def qemu_command(ramdisk: build.Result, disk: Path, serial: Path, port: int,
                 network: Network = IPV4) -> list[str]:
    append = (f"console=ttyS0 ironsight.callback_url=http://{network.host}:{port}/v1/continue "
              f"ironsight.poweroff=1 BOOTIF={BOOTIF}")
    return [str(QEMU), "-accel", "tcg", "-smp", "1", "-m", str(MEMORY_MB),
            "-kernel", str(ramdisk.vmlinuz), "-initrd", str(ramdisk.initramfs),
            "-append", append,
            "-netdev", network.netdev, "-device", f"virtio-net-pci,netdev=n0,mac={MAC}",
            "-drive", f"file={disk},if=virtio,format=qcow2",
            "-nographic", "-serial", f"file:{serial}", "-monitor", "none", "-no-reboot"]


@pytest.fixture
def boot(ramdisk: build.Result, tmp_path: Path, callback: Callback,
         network: Network) -> Iterator[Boot]:
    disk = tmp_path / "disk.qcow2"
    subprocess.run([str(QEMU_IMG), "create", "-q", "-f", "qcow2", str(disk),
                    str(DISK_BYTES)], check=True, timeout=30)
    serial = tmp_path / "serial.log"
    started = time.monotonic()
    proc = subprocess.Popen(qemu_command(ramdisk, disk, serial, callback.port, network),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        yield Boot(proc, serial, started)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


def _wait_report(boot: Boot, callback: Callback) -> tuple[float, dict[str, Any]]:
    deadline = boot.started + REPORT_TIMEOUT
    while time.monotonic() < deadline:
        try:
            return callback.reports.get(timeout=0.5)
        except queue.Empty:
            if boot.proc.poll() is not None:
                boot.fail(f"QEMU exited with {boot.proc.returncode} before a report arrived: "
                          f"{boot.proc.stderr.read().decode() if boot.proc.stderr else ''}")
    boot.fail(f"no report within {REPORT_TIMEOUT:.0f} s")
    raise AssertionError("unreachable")


def _wait_exit(boot: Boot) -> None:
    try:
        code = boot.proc.wait(timeout=EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        boot.fail(f"the VM did not power itself off within {EXIT_TIMEOUT:.0f} s of its report")
    if code != 0:
        boot.fail(f"QEMU exited with {code}")


# --- tests ----------------------------------------------------------------------------------------

def test_the_ramdisk_reports_the_vm_and_powers_off(boot: Boot, callback: Callback,
                                                  record_property: Any) -> None:
    received, report = _wait_report(boot, callback)
    seconds = received - boot.started
    record_property("boot_to_report_seconds", round(seconds, 2))
    print(f"QEMU start -> report received: {seconds:.1f} s")
    _wait_exit(boot)

    inventory = report["inventory"]
    assert report["error"] is None, report["error"]
    assert inventory["cpu"]["count"] == 1
    assert inventory["memory"]["physical_mb"] == MEMORY_MB
    assert [(d["name"], d["size"]) for d in inventory["disks"]] == [("/dev/vda", DISK_BYTES)]
    assert [i["mac_address"] for i in inventory["interfaces"]] == [MAC]
    assert inventory["interfaces"][0]["ipv4_address"] == "10.0.2.15"
    assert inventory["interfaces"][0]["driver"] == "virtio_net"
    assert inventory["boot"] == {"current_boot_mode": "bios", "pxe_interface": MAC,
                                 "secure_boot": False}
    assert report["boot_interface"] == BOOTIF
    assert report["configuration"]["managers"][0]["name"] == "ironsight_agent"
    # the agent said hello before it collected anything, naming its NIC
    ((said_at, hello),) = callback.hellos
    assert said_at < received and hello["macs"] == [MAC], hello
    log = boot.log()
    assert "ironsight[" in log  # /init's log lines reach the serial console
    assert "boot: bios" in log
    assert "network up: 10.0.2.15/24" in log


@pytest.mark.parametrize("callback", [1], indirect=True)  # the agent's report gets a 400
def test_a_rejected_agent_report_ends_with_a_ramdisk_error_report(
        boot: Boot, callback: Callback) -> None:
    _, report = _wait_report(boot, callback)
    _wait_exit(boot)

    assert report["error"].startswith("ramdisk error: agent exited with code 1: ")
    assert "HTTP 400" in report["error"]
    assert report["interfaces"] == {"eth0": {"mac": MAC}}
    assert report["boot_interface"] == BOOTIF


# slirp's default IPv6 network: fec0::/64 is site-local (deprecated, but the kernel still
# gives it site scope); the ULA one is what an IPv6-only provisioning network looks like.
SLIRP_IPV6 = Network("user,id=n0,ipv4=off,ipv6=on", "[fec0::2]", "::1")
ULA_IPV6 = Network("user,id=n0,ipv4=off,ipv6=on,ipv6-net=fd20:20::/64,ipv6-host=fd20:20::1",
                   "[fd20:20::1]", "::1")
EUI64 = "5054:ff:fe12:3456"  # SLAAC's interface identifier from MAC


@pytest.mark.skipif(not socket.has_ipv6, reason="needs IPv6 on the host (::1)")
@pytest.mark.parametrize(("network", "address"), [
    pytest.param(SLIRP_IPV6, f"fec0::{EUI64}", id="slirp-fec0"),
    pytest.param(ULA_IPV6, f"fd20:20::{EUI64}", id="ula-fd20"),
], indirect=["network"])
def test_on_an_ipv6_only_network_the_ramdisk_takes_slaac_and_runs_no_dhcp(
        boot: Boot, callback: Callback, address: str) -> None:
    _, report = _wait_report(boot, callback)
    _wait_exit(boot)

    log = boot.log()
    assert f"network up: {address}/64 (IPv6)" in log, log
    assert "udhcpc" not in log and "dhcp on" not in log, log
    assert "boot: bios" in log  # -kernel: SeaBIOS
    assert "insmod efivarfs" not in log  # not even tried without UEFI (ENODEV)
    assert report["error"] is None, report["error"]
    nic = report["inventory"]["interfaces"][0]
    assert (nic["mac_address"], nic["ipv4_address"]) == (MAC, None)
    if address.startswith("fd"):  # the agent reports global-scope addresses before link-local
        assert nic["ipv6_address"] == address
    assert report["inventory"]["boot"] == {"current_boot_mode": "bios", "pxe_interface": MAC,
                                           "secure_boot": False}
