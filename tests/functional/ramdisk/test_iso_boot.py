"""The virtual-media ISO, built for real, patched per node and booted in QEMU.

The ramdisk is built into the cache shared with tests/e2e/test_ramdisk_boot.py
(`$IRONSIGHT_STATE_DIR/ramdisk`, else `.state/ramdisk-cache`), the ISO into a temporary
directory. Each VM gets the shared image with its own parameter block swapped in by
`patched_range` (written to a file: QEMU reads a CD from a file) and boots it from a CD
on q35's AHCI controller, as a BMC's virtual media appears, without a network:

- `bios`: SeaBIOS -> El Torito's GRUB i386-pc image;
- `uefi`: OVMF -> shim -> Debian's CD GRUB (gcdx64);
- `uefi-secureboot`: the same with Secure Boot enforced and Microsoft's keys enrolled, so
  every link of shim -> signed GRUB -> signed kernel is checked;
- `second-block`: `bios` again with another node's block patched into the same (cached)
  image: each node sees only its own parameters.

A VM passes when the kernel's command line is exactly `BOOT_IMAGE=/vmlinuz <its args>` and
/init reports the boot mode it found; it is killed then. The four VMs start together
(QEMU's TCG only: `-accel tcg`), each bounded by TIMEOUT from its start.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ironsight.lab import firmware
from ironsight.lab.firmware import BIOS, UEFI, UEFI_SECUREBOOT
from ironsight.lab.qemu import QEMU, VmFiles, VmSpec, ensure_nvram
from ironsight.ramdisk import RamdiskError, build, iso

REPO = Path(__file__).resolve().parents[3]
TIMEOUT = 180.0  # seconds from QEMU's start; ~15-40 s each when four run on 2 cores
POLL = 0.5
MEMORY_MB = 512
GRUB_ECHO = "ironsight: booting the discovery ramdisk from virtual media"
COMMAND_LINE = re.compile(r"\] Command line: (.*?)\r?$", re.MULTILINE)
# what /init logs once it knows how the machine booted (after "init started")
BOOT_MODE = {BIOS: "boot: bios", UEFI: "boot: uefi, secure boot off",
             UEFI_SECUREBOOT: "boot: uefi, secure boot on"}
VMS = {"bios": BIOS, "uefi": UEFI, "uefi-secureboot": UEFI_SECUREBOOT, "second-block": BIOS}


def _cache_dir() -> Path:
    """The ramdisk cache of tests/e2e/test_ramdisk_boot.py."""
    state = os.environ.get("IRONSIGHT_STATE_DIR")
    return Path(state) / "ramdisk" if state else REPO / ".state" / "ramdisk-cache"


def _missing() -> str | None:
    if shutil.which(QEMU) is None:
        return f"{QEMU} is not installed (apt-get install qemu-system-x86)"
    for kind in (UEFI, UEFI_SECUREBOOT):  # BIOS: SeaBIOS comes with QEMU; no NIC, no ROM
        why = firmware.unavailable(kind)
        if why:
            return why
    try:
        iso.boot_files()
    except RamdiskError as exc:
        return str(exc)
    return None


@dataclass
class Boot:
    """One VM booting its copy of the ISO; its serial console in a file."""

    name: str
    kind: str
    args: str
    proc: subprocess.Popen[bytes]
    serial: Path
    started: float

    def log(self) -> str:
        try:
            return self.serial.read_text(errors="replace")
        except OSError:
            return "(no serial log)"

    def wait_for(self, text: str) -> float:
        """Seconds from QEMU's start until `text` is in the serial log; the test fails
        (serial log shown) when QEMU ends first or TIMEOUT passes."""
        while time.monotonic() < self.started + TIMEOUT:
            if text in self.log():
                return time.monotonic() - self.started
            if self.proc.poll() is not None:
                self.fail(f"QEMU exited with {self.proc.returncode} before {text!r}")
            time.sleep(POLL)
        self.fail(f"no {text!r} within {TIMEOUT:.0f} s")
        raise AssertionError("unreachable")

    def command_line(self) -> str:
        found = COMMAND_LINE.search(self.log())
        if not found:
            self.fail("the kernel printed no command line")
        assert found
        return found.group(1)

    def fail(self, why: str) -> None:
        self.stop()
        pytest.fail(f"{self.name}: {why}\n--- serial log ({self.serial}) ---\n{self.log()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def node_args() -> str:
    """A node's kernel parameters, with a marker no other VM has."""
    return (f"console=ttyS0,115200 ironsight.test_marker={secrets.token_hex(8)} "
            "ironsight.poweroff=1")


def write_node_iso(boot_iso: iso.BootIso, args: str, dest: Path) -> Path:
    """The shared image as the server would stream it to this node, into a file."""
    with dest.open("wb") as f:
        for chunk in iso.patched_range(boot_iso, iso.params_block(args), 0,
                                       boot_iso.path.stat().st_size):
            f.write(chunk)
    return dest


def start(name: str, kind: str, cdrom: Path, args: str, tmp: Path) -> Boot:
    spec = VmSpec(name=name, mac="52:54:00:5b:00:02", tap="", disk_gb=0, firmware=kind,
                  memory_mb=MEMORY_MB)
    files = VmFiles(tmp, name)
    ensure_nvram(spec, files)
    argv = [QEMU, "-name", name, "-accel", "tcg", *firmware.qemu_args(kind, files.nvram),
            "-smp", str(spec.cpus), "-m", str(spec.memory_mb),
            "-display", "none", "-monitor", "none", "-serial", f"file:{files.serial_log}",
            "-drive", f"file={firmware.option_value(str(cdrom))},media=cdrom,if=none,"
            "id=cd0,readonly=on",
            "-device", "ide-cd,drive=cd0,bus=ide.0,bootindex=1",
            "-nic", "none", "-no-reboot"]
    with open(files.qemu_log, "wb") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT)
    return Boot(name, kind, args, proc, files.serial_log, time.monotonic())


@pytest.fixture(scope="module")
def boot_iso(tmp_path_factory: pytest.TempPathFactory) -> iso.BootIso:
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    ramdisk = build.build(_cache_dir(), log=print)
    started = time.monotonic()
    result = iso.build_iso(ramdisk.out_dir, tmp_path_factory.mktemp("iso"), log=print)
    print(f"ISO: {result.path.stat().st_size} bytes, built in "
          f"{time.monotonic() - started:.1f} s, parameters at {result.params_offset}")
    return result


@pytest.fixture(scope="module")
def boots(boot_iso: iso.BootIso,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Boot]]:
    tmp = tmp_path_factory.mktemp("iso-boot")
    started: dict[str, Boot] = {}
    try:
        for name, kind in VMS.items():
            args = node_args()
            cdrom = write_node_iso(boot_iso, args, tmp / f"{name}.iso")
            started[name] = start(name, kind, cdrom, args, tmp)
        yield started
    finally:
        for boot in started.values():
            boot.stop()


def _check(boot: Boot) -> float:
    """The VM got exactly its own parameters, and its ramdisk ran: seconds it took."""
    seconds = boot.wait_for(BOOT_MODE[boot.kind])
    boot.stop()
    assert boot.command_line() == f"BOOT_IMAGE=/vmlinuz {boot.args}", boot.log()
    assert "init started" in boot.log(), boot.log()
    print(f"{boot.name}: kernel command line and /init's {BOOT_MODE[boot.kind]!r} "
          f"by {seconds:.1f} s")
    return seconds


@pytest.mark.parametrize("name", ["bios", "uefi", "uefi-secureboot"])
def test_each_firmware_boots_the_iso_with_the_nodes_own_kernel_parameters(
        boots: dict[str, Boot], name: str) -> None:
    boot = boots[name]
    _check(boot)
    log = boot.log()
    assert GRUB_ECHO in log, log  # BIOS: GRUB's serial terminal; UEFI: OVMF's console
    if boot.kind == UEFI_SECUREBOOT:
        assert "secureboot: Secure boot enabled" in log, log  # the kernel's own word
        assert "Kernel is locked down from EFI Secure Boot" in log, log


def test_another_block_patched_into_the_same_cached_iso_boots_with_its_own_parameters(
        boots: dict[str, Boot], boot_iso: iso.BootIso) -> None:
    first, second = boots["bios"], boots["second-block"]
    _check(second)
    assert second.args != first.args
    assert first.args.split()[1] not in second.log()  # the other node's marker
    # one image per ramdisk version: asking again (verifying its sha256) rebuilds nothing
    before = boot_iso.path.stat()
    again = iso.build_iso(build.build(_cache_dir(), log=print).out_dir,
                          boot_iso.path.parent, verify=True, log=print)
    after = boot_iso.path.stat()
    assert again == boot_iso
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
