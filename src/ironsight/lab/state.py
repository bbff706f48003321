"""What a lab is: its VMs, the options `up` takes, and the state directory describing it.

Every lab process (the `ironsight lab` commands, the daemon, tests and benchmarks) reads the
same state directory, so the lab's whole description lives in files there, not in memory:
`lab.json` (the VMs, ports, pids; no secret), the BMC password in a 0600 file (read by the
daemon and ipmitool `-f`; never on a command line), `ironsight.conf`, the service's database
and logs, `vms/` (disks, UEFI variables, serial logs) and, when the lab has unknown VMs,
`manifest.csv` (their delivery manifest, `manifest.py`).

Unknown VMs (`default_vms(unknown=K)`, `unknown-1..K`) are machines nobody enrolled: behind
virtual IPMI BMCs like the others, off until someone powers them on (`lab power-on`), for
discoverd's auto-discovery to find. Each also has a second NIC whose MAC,
`SHARED_EXTRA_MAC`, is the same on all of them (a USB or BMC NIC's MAC that identifies
nothing), isolated from the lab's network (`VmSpec.isolated_macs`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ironsight.client.http import ApiClient, baremetal_client
from ironsight.common.config import default_state_dir
from ironsight.common.files import create_private
from ironsight.common.process import runs_with
from ironsight.lab import firmware as fw
from ironsight.lab.network import LabNetwork
from ironsight.lab.qemu import VmFiles, VmSpec

STATE_FILE = "lab.json"
DAEMON_FILE = "daemon.json"
PASSWORD_FILE = "bmc-password"
CONF_FILE = "ironsight.conf"
SERVE_LOG = "serve.log"
DAEMON_LOG = "lab-daemon.log"
VMS_DIR = "vms"
MANIFEST_FILE = "manifest.csv"
FORMAT = 1

NS_API_PORT = 6385  # inside the namespace, on its loopback
NS_DISCOVERD_PORT = 5050  # inside the namespace, on its loopback
NS_RAMDISK_PORT = 5051  # discoverd's ramdisk side, inside the namespace, on the bridge address
# the virtual IPMI BMCs, inside the namespace (each on its VM's bmc_port): the nodes'
# ipmi_address, and the manifest's bmc_address
NS_BMC_ADDRESS = "127.0.0.1"
DRIVERS = ("pxe_ipmitool", "pxe_ipminative")
# the unknown VMs: not enrolled, behind virtual IPMI BMCs of this driver (the manifest's and
# [auto_discovery] driver)
UNKNOWN_DRIVER = DRIVERS[0]
UNKNOWN_PREFIX = "unknown-"
MAX_UNKNOWN = 20
# the MAC of every unknown VM's second NIC: the same on all of them, never on the bridge
SHARED_EXTRA_MAC = "52:54:00:5e:00:99"
SSH_DRIVER = "pxe_ssh"  # a libvirt domain of the lab's hypervisor (hypervisor.py), no BMC
# a libvirt domain of the lab's hypervisor behind the lab's Redfish BMC (redfish_bmc.py)
REDFISH_DRIVER = "redfish"
VMEDIA_BOOT = "redfish-virtual-media"
PXE_BOOT = "ipxe"
LIBVIRT_DRIVERS = (SSH_DRIVER, REDFISH_DRIVER)
HYPERVISOR_DIR = "hypervisor"
REDFISH_DIR = "redfish"
REDFISH_PORT = 8000  # the Redfish BMC, inside the namespace, on its loopback
# Redfish VMs get at least this: the emulator reports memory in whole GiB (none below 1 GiB),
# which out-of-band inspection reads. QEMU allocates guest memory as it is touched.
REDFISH_MIN_MB = 1024
# (vCPUs, MiB, disk GiB) of VM 1, 2, 3, then again. Disks of 4 GiB at least: smaller ones
# are no root disk (IPA's rule, which the agent follows) and local_gb would be 0. Memory is
# small: TCG is CPU-bound and 256 MiB is plenty for the ramdisk (its kernel has 218 MiB of
# them under SeaBIOS, 212 under OVMF, 199 with Secure Boot, when QEMU loads it directly).
SIZES = ((1, 256, 4), (2, 320, 5), (1, 288, 6))
# UEFI VMs get at least this: booted by shim and GRUB over PXE on OVMF's Secure Boot build
# (SMM keeps 16 MiB), 256 MiB left the kernel's EFI stub no room once GRUB held the kernel and
# the initramfs: the VM reset right after "EFI stub: UEFI Secure Boot is enabled.", at every
# boot tried; 288 and 320 MiB booted every time. Real servers have gigabytes.
UEFI_MIN_MB = 320


class LabError(Exception):
    """The lab cannot be brought up (or down); the message says what to do."""


@dataclass(frozen=True)
class LabVm:
    spec: VmSpec
    driver: str
    bmc_port: int  # inside the namespace (the node's ipmi_port)
    enroll: bool = True
    # the node's boot_interface (None: its hardware type's default); `redfish-virtual-media`
    # VMs also get a static address in their network_data (nodes.py): no DHCP of ours
    boot_interface: str | None = None

    def __post_init__(self) -> None:
        if self.under_libvirt and self.spec.isolated_macs:  # domain_xml has no such NIC
            raise ValueError(f"{self.spec.name}: isolated NICs are for VMs behind a virtual "
                             "IPMI BMC only")

    @property
    def unknown(self) -> bool:
        """Nobody enrols it: a machine for auto-discovery to find (in the manifest)."""
        return not self.enroll

    @property
    def virtual_media(self) -> bool:
        return self.boot_interface == VMEDIA_BOOT

    @property
    def under_libvirt(self) -> bool:
        """Run by the lab's libvirtd (powered over SSH, pxe_ssh, or through the Redfish BMC
        in front of it, redfish), not by a virtual IPMI BMC."""
        return self.driver in LIBVIRT_DRIVERS

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec.as_dict(), "driver": self.driver, "bmc_port": self.bmc_port,
                "enroll": self.enroll, "boot_interface": self.boot_interface}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabVm:
        return cls(VmSpec.from_dict(data["spec"]), data["driver"], int(data["bmc_port"]),
                   bool(data.get("enroll", True)), data.get("boot_interface"))


def default_vms(count: int, *, ssh: int = 0, redfish: int = 0, bmc_base_port: int = 6230,
                firmware: Sequence[str] = (fw.BIOS,), ipv6_only: int = 0,
                unknown: int = 0) -> list[LabVm]:
    """`count` VMs named lab-1..N, sizes cycling through SIZES: the first ones behind virtual
    IPMI BMCs (drivers alternating), then `ssh` libvirt domains (pxe_ssh), the last `redfish`
    libvirt domains behind the lab's Redfish BMC (redfish), whose boot interfaces alternate:
    redfish-virtual-media first, then ipxe (PXE through discoverd).

    Their firmware cycles through the kinds of `firmware`; the last `ipv6_only` of the VMs
    booting UEFI are IPv6-only (a SeaBIOS VM's iPXE is the lab's IPv4 path: never).

    Then `unknown` VMs (`unknown_vms`), after the N: nobody enrols them."""
    kinds = list(firmware) or [fw.BIOS]
    for kind in kinds:
        fw.get(kind)  # ValueError naming the choices
    # HTTP boot over IPv6 is not served (docs/pxe.md): IPv6-only VMs PXE-boot
    uefi = [index for index in range(count) if fw.get(kinds[index % len(kinds)]).uefi
            and not fw.get(kinds[index % len(kinds)]).http_boot]
    if ipv6_only > len(uefi):
        raise LabError(f"{ipv6_only} IPv6-only VMs asked for, but only {len(uefi)} of the "
                       f"{count} VMs boot UEFI (firmware {','.join(kinds)})")
    v6 = set(uefi[len(uefi) - ipv6_only:])
    vms = []
    for index in range(count):
        cpus, memory_mb, disk_gb = SIZES[index % len(SIZES)]
        number = index + 1
        mac = f"52:54:00:1a:{number >> 8:02x}:{number & 0xFF:02x}"
        kind = kinds[index % len(kinds)]
        if fw.get(kind).uefi:
            memory_mb = max(memory_mb, UEFI_MIN_MB)
        redfish_vm = index >= count - redfish
        if redfish_vm:
            memory_mb = max(memory_mb, REDFISH_MIN_MB)
        spec = VmSpec(name=f"lab-{number}", mac=mac, tap=f"tap{number}", cpus=cpus,
                      memory_mb=memory_mb, disk_gb=disk_gb, firmware=kind,
                      ipv6_only=index in v6)
        driver = (REDFISH_DRIVER if redfish_vm else SSH_DRIVER if index >= count - redfish - ssh
                  else DRIVERS[index % len(DRIVERS)])
        boot = None
        if redfish_vm:
            boot = (VMEDIA_BOOT, PXE_BOOT)[(index - (count - redfish)) % 2]
        vms.append(LabVm(spec, driver, bmc_base_port + index, boot_interface=boot))
    return vms + unknown_vms(unknown, bmc_base_port=bmc_base_port + count)


def unknown_vms(count: int, *, bmc_base_port: int) -> list[LabVm]:
    """`count` (up to MAX_UNKNOWN) VMs nobody enrols, named unknown-1..K: SeaBIOS, sizes
    cycling through SIZES, each behind a virtual IPMI BMC (UNKNOWN_DRIVER) from
    `bmc_base_port` on, on a tap `tapu<n>` of the bridge with a MAC of its own (52:54:00:1b:..:..;
    the enrolled VMs' are 52:54:00:1a:..:..), serial `LAB-unknown-<n>`, and a second, isolated
    NIC with SHARED_EXTRA_MAC."""
    if not 0 <= count <= MAX_UNKNOWN:
        raise LabError(f"{count} unknown VMs asked for: from 0 to {MAX_UNKNOWN}")
    vms = []
    for index in range(count):
        number = index + 1
        cpus, memory_mb, disk_gb = SIZES[index % len(SIZES)]
        spec = VmSpec(name=f"{UNKNOWN_PREFIX}{number}", mac=f"52:54:00:1b:00:{number:02x}",
                      tap=f"tapu{number}", cpus=cpus, memory_mb=memory_mb, disk_gb=disk_gb,
                      firmware=fw.BIOS, isolated_macs=(SHARED_EXTRA_MAC,))
        vms.append(LabVm(spec, UNKNOWN_DRIVER, bmc_base_port + index, enroll=False))
    return vms


@dataclass
class LabOptions:
    """What `up` is asked for."""

    state_dir: Path
    vms: list[LabVm]
    network: LabNetwork = field(default_factory=LabNetwork)
    ramdisk_dir: Path | None = None  # None: the default of `ironsight ramdisk build`
    api_port: int = 6385  # published on root 127.0.0.1; 0: any free port
    discoverd_port: int = 5050
    bmc_user: str = "admin"
    # The BMCs also answer on root 127.0.0.1: on the same port numbers as inside (when free),
    # or, False, on any free ports (tests running next to other users of those ports).
    bmc_same_ports: bool = True
    # [section] option = value merged into the service's configuration (tests, benchmarks)
    extra_conf: dict[str, dict[str, str]] = field(default_factory=dict)
    manage: bool = True  # move the enrolled nodes to manageable

    def __post_init__(self) -> None:
        # the IPv6-only VMs' taps are the network's business: it filters them as it creates
        # them (network.create)
        taps = tuple(dict.fromkeys([*self.network.ipv6_only_taps,
                                    *(vm.spec.tap for vm in self.vms if vm.spec.ipv6_only)]))
        if taps != self.network.ipv6_only_taps:
            self.network = dataclasses.replace(self.network, ipv6_only_taps=taps)


def default_lab_dir() -> Path:
    return Path(default_state_dir()) / "lab"


class Lab:
    """A lab as its state directory describes it (up or not)."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir.resolve()
        self.state: dict[str, Any] = read_json(self.state_dir / STATE_FILE) or {}

    @property
    def exists(self) -> bool:
        return bool(self.state)

    @property
    def network(self) -> LabNetwork:
        return LabNetwork(**self.state["network"]) if self.state else LabNetwork()

    @property
    def vms(self) -> list[LabVm]:
        return [LabVm.from_dict(vm) for vm in self.state.get("vms", [])]

    def vm(self, name: str) -> LabVm:
        for vm in self.vms:
            if vm.spec.name == name:
                return vm
        raise KeyError(name)

    @property
    def api_url(self) -> str:
        return str(self.state["api_url"])

    @property
    def discoverd_url(self) -> str:
        return str(self.state["discoverd_url"])

    @property
    def unknown_vms(self) -> list[LabVm]:
        return [vm for vm in self.vms if vm.unknown]

    @property
    def password_file(self) -> Path:
        return self.state_dir / PASSWORD_FILE

    def write_password(self, password: str) -> None:
        """The BMCs' password on the first line of `password_file`, created 0600."""
        create_private(self.password_file, (password + "\n").encode())

    @property
    def manifest_file(self) -> Path:
        """The unknown VMs' delivery manifest (written by `up` when there are any)."""
        return self.state_dir / MANIFEST_FILE

    @property
    def serve_log(self) -> Path:
        return self.state_dir / SERVE_LOG

    @property
    def daemon_log(self) -> Path:
        return self.state_dir / DAEMON_LOG

    @property
    def hypervisor_dir(self) -> Path:
        return self.state_dir / HYPERVISOR_DIR

    @property
    def redfish_dir(self) -> Path:
        """The Redfish BMC's configuration, bcrypt users, CA and certificate, and log."""
        return self.state_dir / REDFISH_DIR

    def files(self, name: str) -> VmFiles:
        return VmFiles(self.state_dir / VMS_DIR, name)

    def client(self, timeout: float = 30.0) -> ApiClient:
        """A client of the bare-metal API (latest microversion), through the published port."""
        return baremetal_client(self.api_url, timeout=timeout, version="latest")

    def ipmitool(self, name: str, *args: str, timeout: float = 30.0
                 ) -> subprocess.CompletedProcess[str]:
        """ipmitool against a VM's BMC, from inside the namespace as the service runs it."""
        vm = self.vm(name)
        argv = [*self.network.prefix, "ipmitool", "-I", "lanplus", "-H", NS_BMC_ADDRESS,
                "-p", str(vm.bmc_port), "-U", self.state["bmc_user"],
                "-f", str(self.password_file), *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False)

    def qemu_pid(self, name: str) -> int | None:
        """The pid of the VM's QEMU if it runs (from its pid file, checked)."""
        files = self.files(name)
        try:
            pid = int(files.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if runs_with(pid, str(files.pid_file).encode()) else None

    def pxe_lines(self, pattern: str = "") -> list[str]:
        """discoverd's PXE and dnsmasq log lines (leases, refusals), optionally filtered."""
        try:
            text = self.serve_log.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines()
                if ("ironsight.discoverd.pxe" in line) and pattern in line]

    def process(self, role: str) -> int | None:
        """The pid of the lab's `daemon` or `serve` if it still runs."""
        pid = self.state.get("pids", {}).get(role)
        if not isinstance(pid, int):
            return None
        return pid if runs_with(pid, str(self.state_dir).encode()) else None

    def save(self) -> None:
        write_json(self.state_dir / STATE_FILE, self.state)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from a state file; None when it is missing, partial or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomically (write, then rename): other lab processes may read the file at any time."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
