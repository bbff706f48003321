"""The agent for real on this machine: `python -m ironsight.agent` in a subprocess.

Expectations come from the machine itself (/sys, os.cpu_count()), not from a list
of known devices, so the tests hold on any Linux test host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

import ironsight.agent

SKIPPED_DISKS = ("loop", "ram", "dm-", "sr", "zram", "fd", "nbd")
DEBIAN_PYTHON = "/usr/bin/python3.11"  # the interpreter the ramdisk carries


def _agent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ironsight.agent", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def _expected_interfaces() -> set[str]:
    net = Path("/sys/class/net")
    return {p.name for p in net.iterdir() if p.name != "lo" and (p / "device").exists()}


def _expected_disks() -> set[str]:
    found = set()
    for block in Path("/sys/block").iterdir():
        size = block / "size"
        if not block.name.startswith(SKIPPED_DISKS) and size.exists() \
                and int(size.read_text()) > 0:
            found.add("/dev/" + block.name)
    return found


@pytest.fixture(scope="module")
def printed() -> dict:
    proc = _agent("--print")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_print_gives_a_json_document(printed):
    assert {"inventory", "root_disk", "boot_interface", "configuration", "error"} <= set(printed)


def test_cpu_count_is_the_machines(printed):
    assert printed["inventory"]["cpu"]["count"] == os.cpu_count()


def test_memory_is_reported(printed):
    memory = printed["inventory"]["memory"]
    assert memory["total"] > 0
    assert memory["physical_mb"] * 1024 * 1024 >= memory["total"]


def _online_memory_blocks_mb() -> int | None:
    base = Path("/sys/devices/system/memory")
    if not (base / "block_size_bytes").exists():
        return None
    block = int((base / "block_size_bytes").read_text(), 16)
    online = sum(1 for p in base.glob("memory*/online") if p.read_text().strip() == "1")
    return online * block // 2**20


def _dmi_readable() -> bool:
    try:
        return bool(Path("/sys/firmware/dmi/tables/DMI").read_bytes())
    except OSError:
        return False


def test_physical_mb_is_the_sum_of_online_memory_blocks(printed):
    """Not MemTotal rounded (issue 13: 24192 instead of 24576 on a 24 GiB host)."""
    expected = _online_memory_blocks_mb()
    if expected is None:
        pytest.skip("this kernel has no memory block devices")
    if _dmi_readable():
        pytest.skip("SMBIOS is readable here: physical_mb comes from the DIMMs")
    assert printed["inventory"]["memory"]["physical_mb"] == expected


def test_numa_topology_lists_the_machines_nodes_and_threads(printed):
    nodes = sorted(int(p.name[4:]) for p in Path("/sys/devices/system/node").glob("node*")
                   if p.name[4:].isdigit())
    if not nodes:
        pytest.skip("no NUMA nodes in sysfs")
    topology = printed["numa_topology"]
    assert [ram["numa_node"] for ram in topology["ram"]] == nodes
    threads = sum(len(cpu["thread_siblings"]) for cpu in topology["cpus"])
    assert threads == len(list(Path("/sys/devices/system/node").glob("node*/cpu[0-9]*")))


def test_pci_devices_are_the_machines(printed):
    base = Path("/sys/bus/pci/devices")
    expected = sorted(p.name for p in base.iterdir()) if base.exists() else []
    assert sorted(device["address"] for device in printed["pci_devices"]) == expected


def test_usb_devices_are_the_machines_non_hub_devices(printed):
    base = Path("/sys/bus/usb/devices")
    expected = sorted(p.name for p in base.iterdir() if ":" not in p.name
                      and (p / "idVendor").exists()
                      and (p / "bDeviceClass").read_text().strip() != "09") \
        if base.exists() else []
    assert len(printed["usb_devices"]) == len(expected)


def test_interfaces_are_the_machines_device_backed_ones(printed):
    names = {nic["name"] for nic in printed["inventory"]["interfaces"]}
    assert names == _expected_interfaces()


def test_disks_are_the_machines_real_block_devices(printed):
    names = {disk["name"] for disk in printed["inventory"]["disks"]}
    assert names == _expected_disks()


def test_this_machine_has_an_interface_or_a_disk(printed):
    inventory = printed["inventory"]
    assert inventory["interfaces"] or inventory["disks"]


def test_architecture_is_the_machines(printed):
    assert printed["inventory"]["cpu"]["architecture"] == os.uname().machine


def test_nothing_essential_failed(printed):
    if not _expected_interfaces():
        pytest.skip("this machine has no network interface: the agent reports an error")
    assert printed["error"] is None


class _Receiver(BaseHTTPRequestHandler):
    """Keeps the reports (`/v1/continue`); the agent's hello and beats are answered only."""

    received: list[dict] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path.endswith("/v1/continue"):
            type(self).received.append(json.loads(body))
        self.send_response(202)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict]]]:
    _Receiver.received = []
    httpd = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/continue", _Receiver.received
    httpd.shutdown()
    httpd.server_close()


def test_callback_url_receives_the_document(receiver):
    url, received = receiver
    proc = _agent("--callback-url", url)
    assert proc.returncode == 0, proc.stderr
    assert [doc["inventory"]["cpu"]["count"] for doc in received] == [os.cpu_count()]
    assert "callback accepted" in proc.stdout


@pytest.mark.skipif(not os.path.exists(DEBIAN_PYTHON), reason=f"no {DEBIAN_PYTHON}")
def test_the_ramdisk_python_runs_the_agent_copied_alone(tmp_path, receiver):
    url, received = receiver
    shutil.copytree(Path(ironsight.agent.__file__).parent, tmp_path / "agent",
                    ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([DEBIAN_PYTHON, "-S", "-E", "-m", "agent", "--callback-url", url],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert received[0]["configuration"]["managers"][0]["name"] == "ironsight_agent"


def test_addresses_without_iproute2_are_the_same(printed):
    """The ramdisk has only busybox: /proc/net/if_inet6 and SIOCGIFADDR must agree with ip."""
    proc = subprocess.run([sys.executable, "-m", "ironsight.agent", "--print"],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PATH": "/nonexistent"})
    assert proc.returncode == 0, proc.stderr

    def addresses(doc: dict) -> dict:
        return {nic["name"]: (nic["ipv4_address"], nic["ipv6_address"])
                for nic in doc["inventory"]["interfaces"]}

    assert addresses(json.loads(proc.stdout)) == addresses(printed)
