"""The lab VMs' firmware: which kinds there are, what QEMU needs for each, whether one can run.

- `bios`: SeaBIOS, with QEMU's iPXE option ROM on the NIC. SeaBIOS has no network stack of its
  own, so iPXE does the PXE step (the lab's first VMs, and still the default).
- `uefi`: Debian's OVMF, and NO option ROM on the NIC: OVMF's own network stack (its PXE, as
  a real server's UEFI) does the PXE step.
- `uefi-httpboot`: `uefi` whose network boot is UEFI HTTP boot (OVMF's PXE options off), as
  a server set to HTTP boot: discoverd's DHCP gives it a URL (iPXE's).
- `uefi-secureboot`: `uefi` with Secure Boot enforced as on a stock server: OVMF's secure
  build (SMM, so that only the firmware writes its variables) and variables with Microsoft's
  keys enrolled (the `.ms` template), so that only what Microsoft's UEFI CA signed (shim)
  runs. tests/e2e/test_secure_boot.py checks that an unsigned program is refused.

Each UEFI VM has its own copy of a variables template: its NVRAM (boot entries, Secure Boot
state), made at its first power on and kept across power cycles, as a server's flash is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

BIOS = "bios"
UEFI = "uefi"
UEFI_SECUREBOOT = "uefi-secureboot"
UEFI_HTTPBOOT = "uefi-httpboot"
KINDS = (BIOS, UEFI, UEFI_SECUREBOOT, UEFI_HTTPBOOT)

OVMF_DIR = Path("/usr/share/OVMF")  # Debian's ovmf package
OVMF_CODE = OVMF_DIR / "OVMF_CODE_4M.fd"
OVMF_VARS = OVMF_DIR / "OVMF_VARS_4M.fd"
OVMF_CODE_SECBOOT = OVMF_DIR / "OVMF_CODE_4M.secboot.fd"  # needs SMM
OVMF_VARS_MS = OVMF_DIR / "OVMF_VARS_4M.ms.fd"  # Microsoft's keys enrolled, Secure Boot on
IPXE_ROM = Path("/usr/lib/ipxe/qemu/efi-virtio.rom")  # QEMU's default ROM for virtio-net
# OVMF reads them from fw_cfg: "no" leaves out its PXE boot options over IPv4 (IPv6-only VMs),
# over IPv6; with both, its first network boot option is UEFI HTTP boot over IPv4
IPV4_PXE_SUPPORT = "opt/org.tianocore/IPv4PXESupport"
IPV6_PXE_SUPPORT = "opt/org.tianocore/IPv6PXESupport"


@dataclass(frozen=True)
class Firmware:
    kind: str
    code: Path | None = None  # OVMF's code (read-only flash); None: SeaBIOS, QEMU's default
    vars_template: Path | None = None  # what a VM's NVRAM starts as
    secure_boot: bool = False
    http_boot: bool = False  # network boot by UEFI HTTP boot, not PXE

    @property
    def uefi(self) -> bool:
        return self.code is not None

    @property
    def machine(self) -> str:
        """QEMU's -machine: OVMF's secure build runs only with SMM."""
        return "q35,smm=on" if self.secure_boot else "q35"


FIRMWARE = {
    BIOS: Firmware(BIOS),
    UEFI: Firmware(UEFI, OVMF_CODE, OVMF_VARS),
    UEFI_SECUREBOOT: Firmware(UEFI_SECUREBOOT, OVMF_CODE_SECBOOT, OVMF_VARS_MS,
                              secure_boot=True),
    UEFI_HTTPBOOT: Firmware(UEFI_HTTPBOOT, OVMF_CODE, OVMF_VARS, http_boot=True),
}


def fw_cfg(kind: str, ipv6_only: bool) -> dict[str, str]:
    """What OVMF is told through fw_cfg: which network boot options it leaves out."""
    fw = get(kind)
    if not fw.uefi:
        return {}
    off = [IPV4_PXE_SUPPORT, IPV6_PXE_SUPPORT] if fw.http_boot else (
        [IPV4_PXE_SUPPORT] if ipv6_only else [])
    return {name: "no" for name in off}


def get(kind: str) -> Firmware:
    try:
        return FIRMWARE[kind]
    except KeyError:
        raise ValueError(f"unknown firmware {kind!r} (choose from "
                         f"{', '.join(KINDS)})") from None


def parse_list(text: str) -> list[str]:
    """`--firmware`'s value: kinds separated by commas; ValueError naming a bad one."""
    kinds = [word.strip() for word in text.split(",")]
    for kind in kinds:
        get(kind)
    return kinds


def unavailable(kind: str) -> str | None:
    """Why VMs of this kind cannot run on this machine (what to install), or None."""
    fw = get(kind)
    if not fw.uefi:
        if not IPXE_ROM.exists():
            return f"QEMU's iPXE ROM {IPXE_ROM} is missing (apt-get install ipxe-qemu)"
        return None
    for path in (fw.code, fw.vars_template):
        assert path is not None
        if not path.exists():
            return f"OVMF's {path} is missing (install the ovmf package: apt-get install ovmf)"
    return None


def qemu_args(kind: str, nvram: Path) -> list[str]:
    """The firmware's part of QEMU's command line: the machine and, for UEFI, the flash
    (OVMF's code read-only, `nvram` the VM's own writable variables)."""
    fw = get(kind)
    argv = ["-machine", fw.machine]
    if fw.code is None:
        return argv
    if fw.secure_boot:
        # the variables' flash answers only in SMM (otherwise the OS could rewrite the keys);
        # S3 off, as OVMF's README asks of SMM builds (its S3 resume is not what we test)
        argv += ["-global", "driver=cfi.pflash01,property=secure,value=on",
                 "-global", "ICH9-LPC.disable_s3=1"]
    return [*argv,
            "-drive", f"if=pflash,format=raw,unit=0,file={option_value(str(fw.code))},"
            "readonly=on",
            "-drive", f"if=pflash,format=raw,unit=1,file={option_value(str(nvram))}"]


def option_value(value: str) -> str:
    """QEMU's option syntax escapes a comma by doubling it."""
    return value.replace(",", ",,")
