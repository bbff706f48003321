"""The negative control of the lab's Secure Boot: an unsigned program must not run.

Three VMs boot with the lab's own firmware arguments (`firmware.qemu_args`, the variables
copied from the template by `qemu.ensure_nvram` as at a lab VM's first power on) from a disk
laid out as an EFI system partition: QEMU's vvfat view of a directory holding
EFI/BOOT/BOOTX64.EFI (read-only), on a virtio-blk device with bootindex 1, no network.

- (a) `uefi-secureboot` with iPXE's snponly.efi, which nobody signed: OVMF refuses to load it
  ("Access Denied") and iPXE never prints a word;
- (b) `uefi`, the same program: it runs (iPXE's banner), so the test does see a program run
  when the firmware lets it;
- (c) `uefi-secureboot` with Debian's shim, signed by Microsoft's UEFI CA (whose key the
  variables' db holds): it runs, and says it finds no grubx64.efi next to it.

OVMF's words are those of edk2's BdsDxe (OVMF 2022.11, Debian 12), shim's those of shim 16.1
(Debian 12's shim-signed). The three VMs start together (TCG on 2 cores: all three decide
within ~6 s when idle), each bounded by TIMEOUT from its start, and each is killed as soon as
its test has decided. Needs neither root nor a network: only QEMU, OVMF, and iPXE's and
shim's EFI programs (under CI, their absence fails the test rather than skipping it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ironsight.lab import firmware
from ironsight.lab.firmware import UEFI, UEFI_SECUREBOOT
from ironsight.lab.qemu import QEMU, VmFiles, VmSpec, ensure_nvram

TIMEOUT = 60.0  # seconds from QEMU's start
POLL = 0.2
SNPONLY = Path("/usr/lib/ipxe/snponly.efi")  # iPXE for UEFI, unsigned (package ipxe)
SHIM = Path("/usr/lib/shim/shimx64.efi.signed")  # signed by Microsoft (package shim-signed)

# OVMF: a boot option from the disk (a PCI device, unlike the firmware's own shell) that
# LoadImage refused (Secure Boot: the image's signature is not in db), or that it started
REFUSED = re.compile(r'BdsDxe: failed to load Boot[0-9A-F]{4} "[^"]*" from PciRoot\S*: '
                     r"Access Denied")
STARTED = re.compile(r'BdsDxe: starting Boot[0-9A-F]{4} "[^"]*" from PciRoot\S*')
NOTHING_LEFT = re.compile(r"BdsDxe: No bootable option or device was found\.")
IPXE_BANNER = re.compile(r"iPXE \S+ -- Open Source Network Boot Firmware --")
SHIM_FINDS_NO_GRUB = re.compile(r"Failed to open \\EFI\\BOOT\\grubx64\.efi - Not Found")


def _missing() -> str | None:
    if shutil.which(QEMU) is None:
        return f"{QEMU} is not installed (apt-get install qemu-system-x86)"
    for kind in (UEFI, UEFI_SECUREBOOT):
        why = firmware.unavailable(kind)
        if why:
            return why
    for path, package in ((SNPONLY, "ipxe"), (SHIM, "shim-signed")):
        if not path.exists():
            return f"{path} is missing (apt-get install {package})"
    return None


@dataclass
class Boot:
    """One VM booting its EFI system partition; its serial console in a file."""

    name: str
    proc: subprocess.Popen[bytes]
    serial: Path
    started: float

    def log(self) -> str:
        try:
            return self.serial.read_text(errors="replace")
        except OSError:
            return "(no serial log)"

    def wait_for(self, pattern: re.Pattern[str]) -> float:
        """Seconds from QEMU's start until the serial log is seen matching `pattern` (the
        VMs run together: a later test may find its match there already); the test fails
        (serial log shown) when QEMU ends first or TIMEOUT passes."""
        while time.monotonic() < self.started + TIMEOUT:
            if pattern.search(self.log()):
                return time.monotonic() - self.started
            if self.proc.poll() is not None:
                self.fail(f"QEMU exited with {self.proc.returncode} before "
                          f"/{pattern.pattern}/")
            time.sleep(POLL)
        self.fail(f"no /{pattern.pattern}/ within {TIMEOUT:.0f} s")
        raise AssertionError("unreachable")

    def fail(self, why: str) -> None:
        self.stop()
        pytest.fail(f"{self.name}: {why}\n--- serial log ({self.serial}) ---\n{self.log()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def esp(directory: Path, program: Path) -> Path:
    """A directory laid out as an EFI system partition whose default loader is `program`."""
    (directory / "EFI" / "BOOT").mkdir(parents=True)
    shutil.copyfile(program, directory / "EFI" / "BOOT" / "BOOTX64.EFI")
    return directory


def start(name: str, kind: str, program: Path, tmp: Path) -> Boot:
    spec = VmSpec(name=name, mac="52:54:00:5b:00:01", tap="", disk_gb=0, firmware=kind)
    files = VmFiles(tmp, name)
    ensure_nvram(spec, files)
    partition = esp(tmp / f"{name}-esp", program)
    argv = [QEMU, "-name", name, "-accel", "tcg", *firmware.qemu_args(kind, files.nvram),
            "-smp", str(spec.cpus), "-m", str(spec.memory_mb),
            "-nographic", "-monitor", "none", "-serial", f"file:{files.serial_log}",
            "-drive", f"file=fat:{firmware.option_value(str(partition))},format=raw,"
            "if=none,id=esp,readonly=on",
            "-device", "virtio-blk-pci,drive=esp,bootindex=1",
            "-nic", "none"]
    with open(files.qemu_log, "wb") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT)
    return Boot(name, proc, files.serial_log, time.monotonic())


@pytest.fixture(scope="module")
def boots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Boot]]:
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    tmp = tmp_path_factory.mktemp("secure-boot")
    started: dict[str, Boot] = {}
    try:
        for name, kind, program in (("unsigned-sb", UEFI_SECUREBOOT, SNPONLY),
                                    ("unsigned-uefi", UEFI, SNPONLY),
                                    ("shim-sb", UEFI_SECUREBOOT, SHIM)):
            started[name] = start(name, kind, program, tmp)
        yield started
    finally:
        for boot in started.values():
            boot.stop()


def test_secure_boot_refuses_an_unsigned_program(boots: dict[str, Boot]) -> None:
    boot = boots["unsigned-sb"]
    seconds = boot.wait_for(NOTHING_LEFT)  # every boot option tried
    boot.stop()
    log = boot.log()
    print(f"{boot.name}: refused, nothing left to boot, by {seconds:.1f} s")
    assert REFUSED.search(log), log
    assert not STARTED.search(log), log
    assert "iPXE" not in log, log


def test_without_secure_boot_the_same_program_runs(boots: dict[str, Boot]) -> None:
    boot = boots["unsigned-uefi"]
    seconds = boot.wait_for(IPXE_BANNER)
    boot.stop()
    log = boot.log()
    print(f"{boot.name}: iPXE's banner by {seconds:.1f} s")
    assert STARTED.search(log), log
    assert not REFUSED.search(log), log


def test_secure_boot_runs_microsofts_signed_shim(boots: dict[str, Boot]) -> None:
    boot = boots["shim-sb"]
    seconds = boot.wait_for(SHIM_FINDS_NO_GRUB)
    boot.stop()
    log = boot.log()
    print(f"{boot.name}: shim ran, found no grubx64.efi, by {seconds:.1f} s")
    assert STARTED.search(log), log
    assert not REFUSED.search(log), log
