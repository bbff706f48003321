"""Fixture machines for the agent: /proc, /sys and /dev trees built like the kernel's.

Two machines (`qemu_vm`, `server`) plus an empty `tree`; tests change them further
through `Tree`. Symlinks are relative, as in sysfs, so realpath/readlink behave.
The addresses of a tree come from `<root>/ip-addr.json` (a saved `ip -j addr`) or
from `/proc/net/if_inet6`, as the agent documents.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from ironsight.lab import machines


class Tree(machines.Tree):
    def __str__(self) -> str:
        return str(self.root)

    def mkdir(self, rel: str) -> Path:
        path = self.root / rel
        path.mkdir(parents=True, exist_ok=True)
        return path

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink()

    # --- kernel-shaped pieces -------------------------------------------------------------

    def cpuinfo(self, count: int, model: str, mhz: str, flags: str, sockets: int = 1) -> None:
        blocks = [
            f"processor\t: {i}\nvendor_id\t: GenuineIntel\nmodel name\t: {model}\n"
            f"cpu MHz\t\t: {mhz}\nphysical id\t: {i * sockets // count}\n"
            f"flags\t\t: {flags}\n"
            for i in range(count)]
        self.write("proc/cpuinfo", "\n".join(blocks) + "\n")

    def nic(self, name: str, mac: str, device: str, driver: str, *, vendor: str,
            product: str, carrier: str | None = "1", speed: str | None = None) -> None:
        net = f"{device}/net/{name}"
        self.link(f"sys/class/net/{name}", f"sys/{net}")
        self.write(f"sys/{net}/address", mac + "\n")
        if carrier is not None:
            self.write(f"sys/{net}/carrier", carrier + "\n")
        if speed is not None:
            self.write(f"sys/{net}/speed", speed + "\n")
        self.link(f"sys/{net}/device", f"sys/{device}")
        self.write(f"sys/{device}/vendor", vendor + "\n")
        self.write(f"sys/{device}/device", product + "\n")
        self.link(f"sys/{device}/driver", f"sys/bus/pci/drivers/{driver}")

    def virtual_nic(self, name: str, mac: str) -> None:
        self.link(f"sys/class/net/{name}", f"sys/devices/virtual/net/{name}")
        self.write(f"sys/devices/virtual/net/{name}/address", mac + "\n")

    def disk(self, name: str, device: str, *, sectors: int | None, rotational: str = "0",
             files: dict[str, str | bytes] | None = None) -> None:
        block = f"sys/{device}/block/{name}"
        self.link(f"sys/block/{name}", block)
        if sectors is not None:
            self.write(f"{block}/size", f"{sectors}\n")
        self.write(f"{block}/queue/rotational", rotational + "\n")
        self.write(f"{block}/queue/logical_block_size", "512\n")
        self.write(f"{block}/queue/physical_block_size", "4096\n")
        self.link(f"{block}/device", f"sys/{device}")
        for rel, content in (files or {}).items():
            self.write(f"{block}/{rel}", content)

    def dmi(self, **fields: str) -> None:
        for key, value in fields.items():
            self.write(f"sys/class/dmi/id/{key}", value + "\n")

    def memory_device(self, index: int, size_field: int, extended_mb: int = 0) -> None:
        """An SMBIOS type 17 structure (40 bytes, SMBIOS 2.8) in /sys/firmware/dmi."""
        raw = bytearray(0x28)
        raw[0], raw[1], raw[2] = 17, 0x28, index
        raw[0x0C:0x0E] = size_field.to_bytes(2, "little")
        raw[0x1C:0x20] = extended_mb.to_bytes(4, "little")
        self.write(f"sys/firmware/dmi/entries/17-{index}/raw", bytes(raw) + b"DIMM\0\0")

    def memory_blocks(self, block_size_hex: str, online: list[str]) -> None:
        """/sys/devices/system/memory: the block size (hex, no 0x) and each block's `online`."""
        self.write("sys/devices/system/memory/block_size_bytes", block_size_hex + "\n")
        self.write("sys/devices/system/memory/auto_online_blocks", "online\n")
        for index, state in enumerate(online):
            self.write(f"sys/devices/system/memory/memory{index}/online", state + "\n")

    def numa_node(self, node: int, size_kb: int, cores: dict[int, int]) -> None:
        """/sys/devices/system/node/nodeN: its meminfo and cpuN links ({thread: core_id})."""
        base = f"sys/devices/system/node/node{node}"
        self.write(f"{base}/meminfo", f"Node {node} MemTotal:       {size_kb} kB\n"
                                      f"Node {node} MemFree:        1000 kB\n")
        for thread, core in cores.items():
            self.write(f"sys/devices/system/cpu/cpu{thread}/topology/core_id", f"{core}\n")
            self.link(f"{base}/cpu{thread}", f"sys/devices/system/cpu/cpu{thread}")

    def pci_device(self, address: str, vendor: str, device: str, kind: str, *,
                   revision: str | None = "0x01", numa: str | None = "-1",
                   driver: str | None = None) -> None:
        path = f"sys/devices/pci0000:00/{address}"
        self.link(f"sys/bus/pci/devices/{address}", path)
        for name, value in (("vendor", vendor), ("device", device), ("class", kind),
                            ("revision", revision), ("numa_node", numa)):
            if value is not None:
                self.write(f"{path}/{name}", value + "\n")
        if driver:
            self.link(f"{path}/driver", f"sys/bus/pci/drivers/{driver}")

    def usb_device(self, name: str, files: dict[str, str]) -> None:
        path = f"sys/devices/pci0000:00/0000:00:14.0/usb1/{name}"
        self.link(f"sys/bus/usb/devices/{name}", path)
        for key, value in files.items():
            self.write(f"{path}/{key}", value + "\n")

    def smbios_table(self, *structs: bytes) -> None:
        """/sys/firmware/dmi/tables/DMI: the structures, then the end-of-table one."""
        self.write("sys/firmware/dmi/tables/DMI",
                   b"".join(structs) + smbios_structure(127, b"", []))


def smbios_structure(kind: int, fields: bytes, strings: list[str], handle: int = 0) -> bytes:
    """One SMBIOS structure: header, `fields` (from offset 4), then its string set."""
    header = bytes([kind, 4 + len(fields)]) + handle.to_bytes(2, "little")
    area = b"".join(s.encode() + b"\0" for s in strings) + b"\0" if strings else b"\0\0"
    return header + fields + area


def smbios_memory_device(size_field: int, locator: str, bank: str, *, extended_mb: int = 0,
                         kind: int = 0x1A, speed: int = 2933, serial: str | None = None
                         ) -> bytes:
    """A type 17 structure (SMBIOS 3.2 layout up to Extended Size) with its two locators
    and, when given, its serial number."""
    fields = bytearray(0x28 - 4)
    if serial is not None:
        fields[0x18 - 4] = 3
    fields[0x0C - 4:0x0E - 4] = size_field.to_bytes(2, "little")
    fields[0x10 - 4], fields[0x11 - 4] = 1, 2  # strings 1 and 2
    fields[0x12 - 4] = kind
    fields[0x15 - 4:0x17 - 4] = speed.to_bytes(2, "little")
    fields[0x1C - 4:0x20 - 4] = extended_mb.to_bytes(4, "little")
    return smbios_structure(17, bytes(fields), [locator, bank]
                            + ([serial] if serial is not None else []))


def vpd_serial_page(serial: str) -> bytes:
    return bytes([0, 0x80, 0, len(serial)]) + serial.encode()


# --- machines ---------------------------------------------------------------------------

QEMU_FLAGS = "fpu de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pse36 clflush mmx " \
             "fxsr sse sse2 syscall nx lm rep_good nopl cpuid pni cx16 hypervisor lahf_lm"
QEMU_MAC = "52:54:00:12:34:56"
QEMU_UUID = "4e2c1a3b-7d1e-4a5f-9c1b-0d2e3f4a5b6c"


def build_qemu_vm(tree: Tree) -> Tree:
    """A QEMU/KVM guest as the lab boots it: 2 vCPUs, 2 GiB, one virtio disk and NIC."""
    tree.cpuinfo(2, "QEMU Virtual CPU version 2.5+", "2494.140", QEMU_FLAGS)
    tree.write("proc/meminfo", "MemTotal:        2013340 kB\nMemFree:         1800000 kB\n")
    tree.write("proc/sys/kernel/arch", "x86_64\n")
    tree.write("proc/sys/kernel/hostname", "node-1\n")
    tree.write("proc/cmdline", "console=ttyS0 ironsight.callback_url=http://10.0.0.1:5050/v1"
               "/continue BOOTIF=01-52-54-00-12-34-56 -- init-arg\n")
    tree.write("sys/devices/system/cpu/online", "0-1\n")
    tree.disk("vda", "devices/pci0000:00/0000:00:04.0/virtio1", sectors=10 * 2**21,
              rotational="1")
    tree.write("sys/devices/pci0000:00/0000:00:04.0/virtio1/vendor", "0x1af4\n")
    tree.disk("loop0", "devices/virtual", sectors=0)
    tree.disk("sr0", "devices/pci0000:00/0000:00:01.1/ata2/host1/target1:0:0/1:0:0:0",
              sectors=2048)
    tree.nic("eth0", QEMU_MAC, "devices/pci0000:00/0000:00:03.0/virtio0", "virtio_net",
             vendor="0x1af4", product="0x0001", carrier="1", speed="-1")
    tree.virtual_nic("lo", "00:00:00:00:00:00")
    tree.write("ip-addr.json", json.dumps([
        {"ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1",
                                        "scope": "host"}]},
        {"ifname": "eth0", "addr_info": [
            {"family": "inet", "local": "10.0.0.50", "prefixlen": 24, "scope": "global"},
            {"family": "inet6", "local": "fe80::5054:ff:fe12:3456", "scope": "link"}]}]))
    tree.dmi(sys_vendor="QEMU", product_name="Standard PC (i440FX + PIIX, 1996)",
             product_serial="SER-1", product_uuid=QEMU_UUID, bios_vendor="SeaBIOS",
             bios_version="1.16.2-debian-1.16.2-1", bios_date="04/01/2014")
    return tree


SERVER_MODEL = "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz"
SDA_DEVICE = "devices/pci0000:17/0000:17:00.0/0000:18:00.0/host0/target0:2:0/0:2:0:0"
SDB_DEVICE = "devices/pci0000:17/0000:17:00.0/0000:18:00.0/host0/target0:2:1/0:2:1:0"


def build_server(tree: Tree) -> Tree:
    """A 2-socket rack server: 40 threads, 192 GiB in 12 DIMMs, SSD + HDD, 2 NICs, UEFI."""
    tree.cpuinfo(40, SERVER_MODEL, "1000.000", "fpu vmx sse4_2 avx2 pdpe1gb", sockets=2)
    tree.write("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3900000\n")
    tree.write("proc/meminfo", "MemTotal:       197700000 kB\n")
    tree.write("proc/sys/kernel/arch", "x86_64\n")
    tree.write("proc/sys/kernel/hostname", "(none)\n")
    tree.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz ipa-inspection-callback-url="
               "http://192.0.2.1:5050/v1/continue,http://192.0.2.2:5050/v1/continue "
               "BOOTIF=01-3C-FD-FE-AA-BB-01\n")
    for i in range(12):
        tree.memory_device(i, 16384)
    tree.memory_device(12, 0)  # empty slot
    tree.mkdir("sys/firmware/efi/efivars")
    tree.disk("sda", SDA_DEVICE, sectors=937703088, rotational="0", files={
        "device/model": "PERC H740P      \n", "device/vendor": "DELL    \n",
        "device/wwid": "naa.6D0946606D2C6A00\n",
        "device/vpd_pg80": vpd_serial_page("SDA000001")})
    tree.disk("sdb", SDB_DEVICE, sectors=7814037168, rotational="1", files={
        "device/model": "ST4000NM0035\n", "device/vendor": "ATA     \n",
        "device/wwid": "naa.5000C500A1B2C3D4\n",
        "device/vpd_pg80": vpd_serial_page("ZC1ABCDE")})
    tree.disk("dm-0", "devices/virtual", sectors=2**21)
    tree.link("dev/disk/by-path/pci-0000:18:00.0-scsi-0:2:0:0", "dev/sda")
    tree.link("dev/disk/by-path/pci-0000:18:00.0-scsi-0:2:0:0-part1", "dev/sda1")
    tree.nic("eno1", "3c:fd:fe:aa:bb:01", "devices/pci0000:17/0000:17:02.0/0000:19:00.0",
             "i40e", vendor="0x8086", product="0x1572", carrier="1", speed="10000")
    tree.nic("eno2", "3c:fd:fe:aa:bb:02", "devices/pci0000:17/0000:17:02.0/0000:19:00.1",
             "i40e", vendor="0x8086", product="0x1572", carrier="0", speed=None)
    tree.virtual_nic("lo", "00:00:00:00:00:00")
    tree.virtual_nic("bond0", "3c:fd:fe:aa:bb:01")
    tree.write("proc/net/if_inet6",
               "20010db8000000000000000000000011 02 40 00 80     eno1\n"
               "fe800000000000003efdfefffeaabb01 02 40 20 80     eno1\n"
               "fe800000000000003efdfefffeaabb02 03 40 20 80     eno2\n"
               "00000000000000000000000000000001 01 80 10 80       lo\n")
    tree.dmi(sys_vendor="Dell Inc.", product_name="PowerEdge R640",
             product_serial="SN0000001", bios_vendor="Dell Inc.", bios_version="2.10.2",
             bios_date="02/24/2021")
    return tree


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    """An empty machine: nothing readable at all."""
    return Tree(tmp_path / "empty")


@pytest.fixture
def qemu_vm(tmp_path: Path) -> Tree:
    return build_qemu_vm(Tree(tmp_path / "qemu"))


@pytest.fixture
def server(tmp_path: Path) -> Tree:
    return build_server(Tree(tmp_path / "server"))


# --- a callback service -----------------------------------------------------------------

class CallbackServer:
    """A real HTTP server answering POSTs from a script of (status, body) replies;
    once the script is used up it accepts with 202. A 429 says Retry-After: 3. Hellos
    (`/v1/hello`) are kept apart and answered from `hello_replies` (202 once used up)."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, str]] = []
        self.received: list[dict[str, object]] = []
        self.content_types: list[str | None] = []
        self.tokens: list[str | None] = []  # X-Ironsight-Callback-Token of each request
        self.hellos: list[tuple[dict[str, object], str | None]] = []  # (body, token)
        self.hello_replies: list[tuple[int, str]] = []
        self.beats: list[dict[str, object]] = []  # `/v1/beat` bodies, answered 202
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.endswith("/beat"):
                    server.beats.append(json.loads(body))
                    self.send_response(202)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                    return
                if self.path.endswith("/hello"):
                    server.hellos.append((json.loads(body),
                                          self.headers.get("X-Ironsight-Callback-Token")))
                    status, text = (server.hello_replies.pop(0) if server.hello_replies
                                    else (202, '{"uuid": "x"}'))
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(text)))
                    self.end_headers()
                    self.wfile.write(text.encode())
                    return
                server.received.append(json.loads(body))
                server.content_types.append(self.headers.get("Content-Type"))
                server.tokens.append(self.headers.get("X-Ironsight-Callback-Token"))
                status, text = server.replies.pop(0) if server.replies else (202, '{"ok":1}')
                payload = text.encode()
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "3")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/continue"


@pytest.fixture
def callback_server() -> Iterator[CallbackServer]:
    server = CallbackServer()
    thread = threading.Thread(target=server.httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.fixture
def dead_url() -> str:
    """A 127.0.0.1 URL where nothing listens: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1/continue"
