"""`QemuMachine`: a virtual BMC's `Machine` that is a QEMU process.

Power on starts QEMU (inside the lab's network namespace, where its tap is), power off asks
it to quit over QMP (killing it when QMP does not answer), reset and soft power off are QMP
`system_reset` and `system_powerdown`; the power state is whether the process is alive. The
guest powering itself off ends the process, which reads as "off", as on a real machine.

Always TCG (`-accel tcg`): /dev/kvm on the CI machines is PVM, where stock kernels hang
rather than fail, so no fallback would trigger. No `-no-reboot`: a BMC reset must reboot
the VM, not end it. `-nographic` with the serial port in a file makes the firmware (SeaBIOS
and iPXE, or OVMF) print there too, so a failed PXE boot can be read afterwards.

The firmware is the spec's (`firmware.py`): SeaBIOS with QEMU's iPXE ROM on the NIC, or OVMF
with no ROM on the NIC, so that OVMF's own network stack PXE-boots as a real server's UEFI
does; with Secure Boot or without. A UEFI VM's variables (`VmFiles.nvram`) are its own copy
of the firmware's template, made at its first power on and kept across power cycles.

A one-time boot device (IPMI's default) applies to the next power on only, then the
machine boots from its default order again: disk, then network.

A VM's hardware can change while it is off, as a technician swaps parts: its memory and
extra disks come from its override file (`VmFiles.hardware`, `{"memory_mb": N,
"extra_disks_mb": [...]}`, either key optional; `ironsight lab hardware`, `hardware.py`) when
there is one, read again at every power on, else from its spec (`effective_spec`). Each
extra disk has a serial of its own (`extra_disk_serial`: the VM's and the disk's index), so
that inspection tells its disks apart by serial as on a real server, not by their names; an
extra disk whose size the override changed is a new, empty disk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ironsight.lab import firmware
from ironsight.lab.bmc import BootDevice, MachineError

LOG = logging.getLogger(__name__)

QEMU = "qemu-system-x86_64"
QEMU_IMG = "qemu-img"
QMP_TIMEOUT = 5.0
QUIT_WAIT = 5.0
UNIX_PATH_MAX = 107  # sun_path holds 108 bytes with the final NUL
NETWORK_BOOT = ("network",)  # boot devices that PXE-boot first
MiB = 1024 * 1024
# The bounds of a VM's hardware in its override file (`effective_spec`). Memory: the ramdisk's
# kernel has 218 MiB of it under SeaBIOS (state.SIZES' smallest is 256); a UEFI VM needs
# state.UEFI_MIN_MB (a unit test keeps the two equal); a TCG lab VM has no use for more
# than a few GiB.
MIN_MEMORY_MB = 256
UEFI_MIN_MEMORY_MB = 320
MAX_MEMORY_MB = 4096
# Extra disks: sparse qcow2 files, one virtio-blk PCI device each (a q35 machine's root bus
# has 32 slots, of which the NICs and the chipset take some)
MAX_EXTRA_DISKS = 16
MAX_EXTRA_DISK_MB = 65536
HARDWARE_KEYS = ("memory_mb", "extra_disks_mb")
VIRTIO_BLK_SERIAL_MAX = 20  # bytes: VIRTIO_BLK_ID_BYTES (QEMU cuts a longer one)
QCOW2_MAGIC = b"QFI\xfb"


@dataclass(frozen=True)
class VmSpec:
    """One VM's hardware: what inspection should find."""

    name: str
    mac: str
    tap: str
    cpus: int = 1
    memory_mb: int = 256
    disk_gb: int = 4  # 0: no disk
    extra_disks_mb: tuple[int, ...] = ()  # small extra disks (a bigger inventory)
    manufacturer: str = "ironsight-lab"
    product: str = "lab-vm"
    serial: str = ""
    uuid: str = ""
    firmware: str = firmware.BIOS  # a kind of firmware.KINDS
    # PXE over IPv6 only: OVMF offers no IPv4 boot, and the lab's bridge drops IPv4 and ARP
    # on this VM's tap (network.py)
    ipv6_only: bool = False
    # MACs of more NICs that lead nowhere: each on an empty QEMU hub of its own (no tap, not
    # on the lab's bridge), no option ROM and no boot index, so they may repeat across VMs
    # (a USB or BMC NIC's MAC that is not unique) and the VM still boots from `mac`'s NIC
    isolated_macs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        firmware.get(self.firmware)  # ValueError naming the choices

    @property
    def system_serial(self) -> str:
        return self.serial or f"LAB-{self.name}"

    @property
    def system_uuid(self) -> str:
        return self.uuid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"ironsight-lab:{self.name}"))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "mac": self.mac, "tap": self.tap, "cpus": self.cpus,
                "memory_mb": self.memory_mb, "disk_gb": self.disk_gb,
                "extra_disks_mb": list(self.extra_disks_mb),
                "manufacturer": self.manufacturer, "product": self.product,
                "serial": self.system_serial, "uuid": self.system_uuid,
                "firmware": self.firmware, "ipv6_only": self.ipv6_only,
                "isolated_macs": list(self.isolated_macs)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VmSpec:
        return cls(name=data["name"], mac=data["mac"], tap=data["tap"], cpus=data["cpus"],
                   memory_mb=data["memory_mb"], disk_gb=data["disk_gb"],
                   extra_disks_mb=tuple(data.get("extra_disks_mb") or ()),
                   manufacturer=data.get("manufacturer", "ironsight-lab"),
                   product=data.get("product", "lab-vm"), serial=data.get("serial", ""),
                   uuid=data.get("uuid", ""),
                   # a lab.json of before UEFI: SeaBIOS VMs
                   firmware=data.get("firmware", firmware.BIOS),
                   ipv6_only=bool(data.get("ipv6_only", False)),
                   isolated_macs=tuple(data.get("isolated_macs") or ()))


@dataclass(frozen=True)
class VmFiles:
    """Where one VM keeps its disks, logs and QMP socket."""

    run_dir: Path
    name: str

    @property
    def disk(self) -> Path:
        return self.run_dir / f"{self.name}.qcow2"

    def extra_disk(self, index: int) -> Path:
        return self.run_dir / f"{self.name}-extra{index}.qcow2"

    @property
    def hardware(self) -> Path:
        """The VM's hardware override: what its next power on boots with (`effective_spec`)."""
        return self.run_dir / f"{self.name}.hardware.json"

    @property
    def serial_log(self) -> Path:
        return self.run_dir / f"{self.name}.serial.log"

    @property
    def qemu_log(self) -> Path:
        return self.run_dir / f"{self.name}.qemu.log"

    @property
    def nvram(self) -> Path:
        """A UEFI VM's variables (boot entries, Secure Boot keys): its own writable flash."""
        return self.run_dir / f"{self.name}.vars.fd"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / f"{self.name}.pid"

    @property
    def qmp(self) -> Path:
        """The QMP socket; under /tmp when the run dir is too deep for a socket path."""
        path = self.run_dir / f"{self.name}.qmp"
        if len(os.fsencode(path)) <= UNIX_PATH_MAX:
            return path
        digest = hashlib.sha256(os.fsencode(self.run_dir)).hexdigest()[:12]
        return Path("/tmp") / f"ironsight-qmp-{digest}" / f"{self.name}.qmp"


# --- the hardware override ---------------------------------------------------------------------

class HardwareError(ValueError):
    """A VM's hardware override is not one the lab can boot; the message says why."""


def min_memory_mb(kind: str) -> int:
    """The least memory a VM of firmware `kind` boots the ramdisk with."""
    return UEFI_MIN_MEMORY_MB if firmware.get(kind).uefi else MIN_MEMORY_MB


def check_memory_mb(value: Any, kind: str = firmware.BIOS) -> int:
    """`value` if the lab boots a VM of firmware `kind` with that much memory (MiB)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise HardwareError(f"{value!r} is not a whole number of MiB")
    low = min_memory_mb(kind)
    if not low <= value <= MAX_MEMORY_MB:
        raise HardwareError(f"{value} MiB is out of the lab's bounds for a {kind} VM: "
                            f"{low} to {MAX_MEMORY_MB} MiB")
    return value


def check_extra_disks_mb(value: Any) -> tuple[int, ...]:
    """`value` as extra disks' sizes (MiB), if each is a positive whole number and they are
    not too many."""
    if not isinstance(value, list | tuple):
        raise HardwareError(f"{value!r} is not a list of disk sizes in MiB")
    if len(value) > MAX_EXTRA_DISKS:
        raise HardwareError(f"{len(value)} extra disks: {MAX_EXTRA_DISKS} at most")
    for size in value:
        if (not isinstance(size, int) or isinstance(size, bool)
                or not 1 <= size <= MAX_EXTRA_DISK_MB):
            raise HardwareError(f"{size!r} is not a disk size: a whole number of MiB from 1 "
                                f"to {MAX_EXTRA_DISK_MB}")
    return tuple(value)


def parse_hardware(data: Any, spec: VmSpec) -> dict[str, Any]:
    """An override file's content, checked for `spec`'s VM: the keys it has (of
    HARDWARE_KEYS), `extra_disks_mb` as a tuple. HardwareError names the key at fault."""
    if not isinstance(data, dict):
        raise HardwareError(f"not a JSON object but {type(data).__name__}")
    unknown = sorted(set(data) - set(HARDWARE_KEYS))
    if unknown:
        raise HardwareError(f"unknown key {', '.join(map(repr, unknown))} (the keys: "
                            f"{', '.join(HARDWARE_KEYS)})")
    checks: dict[str, Callable[[Any], Any]] = {
        "memory_mb": lambda value: check_memory_mb(value, spec.firmware),
        "extra_disks_mb": check_extra_disks_mb}
    found: dict[str, Any] = {}
    for key, check in checks.items():
        if key in data:
            try:
                found[key] = check(data[key])
            except HardwareError as exc:
                raise HardwareError(f"{key}: {exc}") from None
    return found


def read_hardware(spec: VmSpec, files: VmFiles) -> dict[str, Any]:
    """The VM's checked override (`parse_hardware`); {} when it has no override file.
    HardwareError naming the file when it cannot be read or is not a valid override."""
    path = files.hardware
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise HardwareError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise HardwareError(f"{path}: not JSON: {exc}") from None
    try:
        return parse_hardware(data, spec)
    except HardwareError as exc:
        raise HardwareError(f"{path}: {exc}") from None


def effective_spec(spec: VmSpec, files: VmFiles) -> VmSpec:
    """What the VM boots with: `spec` with its override file's hardware (`spec` itself when
    there is no such file); read again at each call. HardwareError on a bad file."""
    found = read_hardware(spec, files)
    return dataclasses.replace(spec, **found) if found else spec


def extra_disk_serial(spec: VmSpec, index: int) -> str:
    """The serial of the VM's extra disk `index`, the same at every boot: `<its system
    serial>-D<index>` (`LAB-lab-1-D0`), or where that passes virtio-blk's 20 bytes a digest
    of the system serial in its place (`LAB1A2B3C4D5E-D0`)."""
    serial = f"{spec.system_serial}-D{index}"
    if len(serial.encode()) <= VIRTIO_BLK_SERIAL_MAX:
        return serial
    digest = hashlib.sha256(spec.system_serial.encode()).hexdigest()[:10].upper()
    return f"LAB{digest}-D{index}"


# --- QMP ---------------------------------------------------------------------------------------

class QmpError(Exception):
    """QEMU's monitor did not answer, or answered with an error."""


def qmp_command(path: Path, command: str, arguments: dict[str, Any] | None = None,
                timeout: float = QMP_TIMEOUT) -> Any:
    """Run one QMP command on a fresh connection: greeting, capabilities, command. A socket
    that is not there yet (QEMU just started) is waited for up to `timeout`."""
    try:
        with _qmp_connect(path, timeout) as sock, sock.makefile("rwb") as stream:
            _qmp_read(stream)  # greeting
            _qmp_call(stream, "qmp_capabilities", None)
            try:
                return _qmp_call(stream, command, arguments)
            except EOFError:
                if command == "quit":  # QEMU may close before it answers
                    return {}
                raise
    except (OSError, EOFError, ValueError) as exc:
        raise QmpError(f"QMP {command} on {path}: {exc or type(exc).__name__}") from None


def _qmp_connect(path: Path, timeout: float) -> socket.socket:
    deadline = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
        except OSError:
            sock.close()
            raise


def _qmp_call(stream: Any, command: str, arguments: dict[str, Any] | None) -> Any:
    message: dict[str, Any] = {"execute": command}
    if arguments:
        message["arguments"] = arguments
    stream.write(json.dumps(message).encode() + b"\n")
    stream.flush()
    while True:
        reply = _qmp_read(stream)
        if "return" in reply:
            return reply["return"]
        if "error" in reply:
            raise QmpError(f"QMP {command}: {reply['error'].get('desc', reply['error'])}")
        # anything else is an asynchronous event: skip it


def _qmp_read(stream: Any) -> dict[str, Any]:
    line = stream.readline()
    if not line:
        raise EOFError("QEMU closed the QMP connection")
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError(f"unexpected QMP message {line!r}")
    return data


# --- the command line ------------------------------------------------------------------------

def command_line(spec: VmSpec, files: VmFiles, boot: str, *, qemu: str = QEMU) -> list[str]:
    """QEMU's argv for one power-on; `boot` is "network" or "disk" (first in the order).

    Both firmwares follow the devices' bootindex. A UEFI VM's NIC has no option ROM
    (`romfile=`): OVMF's own PXE boots it. SeaBIOS has no PXE of its own: a BIOS VM's NIC
    keeps QEMU's iPXE ROM. The spec's isolated NICs come after it (the guest's later NICs),
    each on a hub of its own with nothing else on it (QEMU warns in its log that the hub "is
    not connected to host network": that is the point), without a ROM or a boot index: no
    firmware boots from them."""
    network_first = boot == "network"
    nic_index, disk_index = (1, 2) if network_first else (2, 1)
    uefi = firmware.get(spec.firmware).uefi
    argv = [
        qemu, "-name", spec.name, "-accel", "tcg",
        *firmware.qemu_args(spec.firmware, files.nvram),
        "-smp", str(spec.cpus), "-m", str(spec.memory_mb),
        "-nographic", "-monitor", "none",
        "-chardev", f"file,id=serial0,path={files.serial_log},append=on",
        "-serial", "chardev:serial0",
        "-netdev", f"tap,id=net0,ifname={spec.tap},script=no,downscript=no",
        "-device", f"virtio-net-pci,netdev=net0,mac={spec.mac},bootindex={nic_index}"
        + (",romfile=" if uefi else ""),
    ]
    for index, mac in enumerate(spec.isolated_macs, start=1):
        argv += ["-netdev", f"hubport,id=isolated{index},hubid={index}",
                 "-device", f"virtio-net-pci,netdev=isolated{index},mac={mac},romfile="]
    for name, value in firmware.fw_cfg(spec.firmware, spec.ipv6_only).items():
        argv += ["-fw_cfg", f"name={name},string={value}"]
    if spec.disk_gb:
        argv += ["-drive", f"file={files.disk},if=none,id=disk0,format=qcow2",
                 "-device", f"virtio-blk-pci,drive=disk0,bootindex={disk_index}"]
    for index, _ in enumerate(spec.extra_disks_mb):
        argv += ["-drive", f"file={files.extra_disk(index)},if=none,id=extra{index},"
                 "format=qcow2",
                 "-device", f"virtio-blk-pci,drive=extra{index},"
                 f"serial={_smbios_value(extra_disk_serial(spec, index))}"]
    argv += [
        "-uuid", spec.system_uuid,
        "-smbios", "type=1," + ",".join(
            f"{key}={_smbios_value(value)}" for key, value in (
                ("manufacturer", spec.manufacturer), ("product", spec.product),
                ("serial", spec.system_serial))),
        "-boot", "n" if network_first else "c",
        "-qmp", f"unix:{files.qmp},server=on,wait=off",
        "-pidfile", str(files.pid_file),
    ]
    return argv


def _smbios_value(value: str) -> str:
    return value.replace(",", ",,")  # QEMU's option syntax escapes a comma by doubling it


def create_disk(path: Path, size: str, *, qemu_img: str = QEMU_IMG) -> None:
    """An empty qcow2 (sparse: costs nothing until written); kept when it already exists."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([qemu_img, "create", "-q", "-f", "qcow2", str(path), size],
                          capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise MachineError(f"qemu-img create {path} {size}: {proc.stderr.strip()}")


def qcow2_size(path: Path) -> int | None:
    """A qcow2 file's virtual size in bytes (from its header); None when it is missing or
    not a qcow2 file."""
    try:
        with open(path, "rb") as image:
            header = image.read(32)
    except OSError:
        return None
    if len(header) < 32 or header[:4] != QCOW2_MAGIC:
        return None
    return int.from_bytes(header[24:32], "big")


def ensure_disks(spec: VmSpec, files: VmFiles, *, qemu_img: str = QEMU_IMG) -> None:
    """The spec's disks, created when missing. An extra disk of another size than the
    spec's (its override changed it) is replaced by a new, empty one."""
    if spec.disk_gb:
        create_disk(files.disk, f"{spec.disk_gb}G", qemu_img=qemu_img)
    for index, size_mb in enumerate(spec.extra_disks_mb):
        path = files.extra_disk(index)
        size = qcow2_size(path)
        if size is not None and size != size_mb * MiB:
            path.unlink()
        create_disk(path, f"{size_mb}M", qemu_img=qemu_img)


def ensure_nvram(spec: VmSpec, files: VmFiles) -> None:
    """A UEFI VM's variables, copied from its firmware's template the first time; kept
    afterwards (what the VM's firmware wrote there survives its power cycles)."""
    template = firmware.get(spec.firmware).vars_template
    if template is None or files.nvram.exists():
        return
    files.nvram.parent.mkdir(parents=True, exist_ok=True)
    partial = files.nvram.with_name(f".{files.nvram.name}.tmp")  # never a half copy
    try:
        shutil.copyfile(template, partial)
    except OSError as exc:
        raise MachineError(f"cannot copy {template} to {files.nvram}: {exc}") from None
    os.replace(partial, files.nvram)


# --- the machine -------------------------------------------------------------------------------

class QemuMachine:
    """One VM behind a virtual BMC. Thread-safe: the BMC thread and the lab's clean-up both
    call it."""

    def __init__(self, spec: VmSpec, files: VmFiles, *, prefix: Sequence[str] = (),
                 qemu: str = QEMU, qemu_img: str = QEMU_IMG,
                 boot: BootDevice | None = None) -> None:
        """`prefix` runs QEMU elsewhere, e.g. `ip netns exec <ns>` (where the tap lives).
        `spec` is the VM's hardware unless its override file says otherwise
        (`effective_spec`, read at each power on)."""
        self.spec = spec
        self.files = files
        self.name = spec.name
        self.prefix = list(prefix)
        self.qemu = qemu
        self.qemu_img = qemu_img
        self._boot = boot or BootDevice()
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.RLock()
        self.history: list[tuple[float, str]] = []  # (time.time(), action)

    # --- Machine protocol ---------------------------------------------------------------------

    def is_powered_on(self) -> bool:
        with self._lock:
            return self._alive()

    def power_on(self) -> None:
        with self._lock:
            if self._alive():
                return
            if shutil.which(self.qemu) is None:
                raise MachineError(f"{self.qemu} is not installed")
            try:
                spec = effective_spec(self.spec, self.files)
            except HardwareError as exc:
                raise MachineError(f"{self.name}: {exc}") from None
            ensure_disks(spec, self.files, qemu_img=self.qemu_img)
            ensure_nvram(spec, self.files)
            first = "network" if self._boot.device in NETWORK_BOOT else "disk"
            if not self._boot.persistent:
                self._boot = BootDevice()  # a one-time override is used up by this boot
            argv = [*self.prefix, *command_line(spec, self.files, first, qemu=self.qemu)]
            self.files.qmp.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                self.files.qmp.unlink()
            with open(self.files.qemu_log, "ab") as log:
                log.write(f"--- {time.strftime('%F %T')} power on: {' '.join(argv)}\n"
                          .encode())
                log.flush()
                self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                              stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True)
            hardware = "" if spec is self.spec else (
                f", hardware override: {spec.memory_mb} MiB, extra disks "
                f"{list(spec.extra_disks_mb)} MiB")
            self._record(f"power on (boot {first}, pid {self._proc.pid}{hardware})")

    def power_off(self) -> None:
        with self._lock:
            if not self._alive():
                return
            proc = self._proc
            assert proc is not None
            try:
                qmp_command(self.files.qmp, "quit")
            except QmpError as exc:
                LOG.warning("%s: %s; killing QEMU", self.name, exc)
                proc.kill()
            try:
                proc.wait(QUIT_WAIT)
            except subprocess.TimeoutExpired:
                LOG.warning("%s: QEMU did not quit within %.0f s; killing it", self.name,
                            QUIT_WAIT)
                proc.kill()
                proc.wait()
            self._record("power off")

    def power_reset(self) -> None:
        self._qmp_while_on("system_reset", "reset")

    def power_shutdown(self) -> None:
        self._qmp_while_on("system_powerdown", "soft power off")

    def get_boot_device(self) -> BootDevice:
        with self._lock:
            return self._boot

    def set_boot_device(self, boot: BootDevice) -> None:
        with self._lock:
            self._boot = boot
            self._record(boot.describe())

    # --- more ---------------------------------------------------------------------------------

    def kill(self) -> None:
        """Immediate power loss (clean-up)."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()

    def _qmp_while_on(self, command: str, action: str) -> None:
        with self._lock:
            if not self._alive():
                raise MachineError(f"cannot {action} a machine that is off")
            try:
                qmp_command(self.files.qmp, command)
            except QmpError as exc:
                raise MachineError(str(exc)) from None
            self._record(action)

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _record(self, action: str) -> None:
        self.history.append((time.time(), action))
        LOG.info("%s: %s", self.name, action)
