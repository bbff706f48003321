"""The lab VMs' firmware kinds: what each needs from QEMU, and why one cannot run here."""

from __future__ import annotations

from pathlib import Path

import pytest

from ironsight.lab import firmware
from ironsight.lab.firmware import (
    BIOS,
    KINDS,
    UEFI,
    UEFI_HTTPBOOT,
    UEFI_SECUREBOOT,
    qemu_args,
    unavailable,
)

NVRAM = Path("/lab/vms/lab-1.vars.fd")


def test_the_kinds() -> None:
    assert KINDS == ("bios", "uefi", "uefi-secureboot", "uefi-httpboot")


def test_bios_is_seabios_on_q35_with_no_flash() -> None:
    assert qemu_args(BIOS, NVRAM) == ["-machine", "q35"]


def test_uefi_is_ovmf_read_only_and_the_vms_own_variables() -> None:
    assert qemu_args(UEFI, NVRAM) == [
        "-machine", "q35",
        "-drive", "if=pflash,format=raw,unit=0,file=/usr/share/OVMF/OVMF_CODE_4M.fd,"
        "readonly=on",
        "-drive", f"if=pflash,format=raw,unit=1,file={NVRAM}"]


def test_secure_boot_is_ovmfs_secure_build_with_smm_secure_flash_and_no_s3() -> None:
    assert qemu_args(UEFI_SECUREBOOT, NVRAM) == [
        "-machine", "q35,smm=on",
        "-global", "driver=cfi.pflash01,property=secure,value=on",
        "-global", "ICH9-LPC.disable_s3=1",
        "-drive", "if=pflash,format=raw,unit=0,file=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd,"
        "readonly=on",
        "-drive", f"if=pflash,format=raw,unit=1,file={NVRAM}"]


def test_secure_boot_variables_start_with_microsofts_keys_enrolled() -> None:
    assert firmware.get(UEFI_SECUREBOOT).vars_template == Path(
        "/usr/share/OVMF/OVMF_VARS_4M.ms.fd")
    assert firmware.get(UEFI).vars_template == Path("/usr/share/OVMF/OVMF_VARS_4M.fd")


def test_a_comma_in_the_variables_path_is_escaped_for_qemu() -> None:
    assert qemu_args(UEFI, Path("/a,b/vars.fd"))[-1].endswith("file=/a,,b/vars.fd")


def test_an_unknown_kind_names_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown firmware 'efi' \(choose from bios, uefi, "
                                         r"uefi-secureboot, uefi-httpboot\)"):
        firmware.get("efi")


def test_a_list_is_split_on_commas() -> None:
    assert firmware.parse_list("bios, uefi,uefi-secureboot") == [BIOS, UEFI, UEFI_SECUREBOOT]


def test_a_list_with_an_unknown_kind_names_it() -> None:
    with pytest.raises(ValueError, match="'uefi-sb'"):
        firmware.parse_list("uefi,uefi-sb")


# --- unavailable -----------------------------------------------------------------------------

@pytest.fixture
def everything_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """OVMF's files and QEMU's iPXE ROM, in a directory of the test's own."""
    for name in ("code.fd", "vars.fd", "code.secboot.fd", "vars.ms.fd", "efi-virtio.rom"):
        (tmp_path / name).touch()
    monkeypatch.setattr(firmware, "IPXE_ROM", tmp_path / "efi-virtio.rom")
    monkeypatch.setattr(firmware, "FIRMWARE", {
        BIOS: firmware.Firmware(BIOS),
        UEFI: firmware.Firmware(UEFI, tmp_path / "code.fd", tmp_path / "vars.fd"),
        UEFI_SECUREBOOT: firmware.Firmware(UEFI_SECUREBOOT, tmp_path / "code.secboot.fd",
                                           tmp_path / "vars.ms.fd", secure_boot=True),
        UEFI_HTTPBOOT: firmware.Firmware(UEFI_HTTPBOOT, tmp_path / "code.fd",
                                         tmp_path / "vars.fd", http_boot=True)})
    return tmp_path


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_can_run_when_its_files_are_there(everything_there: Path,
                                                     kind: str) -> None:
    assert unavailable(kind) is None


@pytest.mark.parametrize(("kind", "missing"), [(UEFI, "code.fd"), (UEFI, "vars.fd"),
                                               (UEFI_SECUREBOOT, "code.secboot.fd"),
                                               (UEFI_SECUREBOOT, "vars.ms.fd")])
def test_a_missing_ovmf_file_is_named_with_its_package(everything_there: Path, kind: str,
                                                       missing: str) -> None:
    (everything_there / missing).unlink()
    reason = unavailable(kind) or ""
    assert str(everything_there / missing) in reason and "ovmf" in reason


def test_bios_needs_qemus_ipxe_rom(everything_there: Path) -> None:
    (everything_there / "efi-virtio.rom").unlink()
    assert "ipxe-qemu" in (unavailable(BIOS) or "")


def test_uefi_does_not_need_the_ipxe_rom(everything_there: Path) -> None:
    (everything_there / "efi-virtio.rom").unlink()
    assert unavailable(UEFI) is None


def test_httpboot_turns_off_both_pxe_options_so_ovmf_http_boots_first() -> None:
    assert firmware.fw_cfg(UEFI_HTTPBOOT, False) == {firmware.IPV4_PXE_SUPPORT: "no",
                                                     firmware.IPV6_PXE_SUPPORT: "no"}


def test_ipv6_only_turns_off_pxe_over_ipv4_on_uefi_only() -> None:
    assert firmware.fw_cfg(UEFI, True) == {firmware.IPV4_PXE_SUPPORT: "no"}
    assert firmware.fw_cfg(UEFI, False) == {}
    assert firmware.fw_cfg(BIOS, True) == {}
