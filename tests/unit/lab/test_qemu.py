"""A lab VM's QEMU command line for each firmware, and its NVRAM (a UEFI VM's variables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ironsight.lab import firmware, qemu
from ironsight.lab.qemu import VmFiles, VmSpec, command_line, ensure_nvram

SPEC = VmSpec(name="lab-1", mac="52:54:00:1a:00:01", tap="tap1", disk_gb=4)


def spec(kind: str, *, ipv6_only: bool = False) -> VmSpec:
    return VmSpec(name=SPEC.name, mac=SPEC.mac, tap=SPEC.tap, disk_gb=4, firmware=kind,
                  ipv6_only=ipv6_only)


def argv(vm: VmSpec, tmp_path: Path, boot: str = "network") -> list[str]:
    return command_line(vm, VmFiles(tmp_path, vm.name), boot)


def option(args: list[str], name: str) -> list[str]:
    """Every value of a repeated option."""
    return [args[i + 1] for i, arg in enumerate(args) if arg == name]


def nic(args: list[str]) -> str:
    (device,) = [d for d in option(args, "-device") if d.startswith("virtio-net-pci,")]
    return device


# --- the firmware's part of the command line --------------------------------------------------

def test_a_bios_vm_is_seabios_with_qemus_ipxe_rom_on_its_nic(tmp_path: Path) -> None:
    args = argv(spec("bios"), tmp_path)
    assert option(args, "-machine") == ["q35"]
    assert not any(d.startswith("if=pflash") for d in option(args, "-drive"))
    assert "romfile" not in nic(args)


def test_a_vm_without_firmware_in_its_spec_boots_bios(tmp_path: Path) -> None:
    assert argv(SPEC, tmp_path) == argv(spec("bios"), tmp_path)


@pytest.mark.parametrize("kind", ["uefi", "uefi-secureboot"])
def test_a_uefi_vm_runs_its_firmwares_arguments_with_its_own_variables(tmp_path: Path,
                                                                     kind: str) -> None:
    args = argv(spec(kind), tmp_path)
    expected = firmware.qemu_args(kind, VmFiles(tmp_path, SPEC.name).nvram)
    assert args[args.index("-machine"):args.index("-machine") + len(expected)] == expected


@pytest.mark.parametrize("kind", ["uefi", "uefi-secureboot"])
def test_a_uefi_vms_nic_has_no_option_rom(tmp_path: Path, kind: str) -> None:
    assert nic(argv(spec(kind), tmp_path)).endswith(",romfile=")


def test_a_secure_boot_vm_has_smm_secure_flash_and_no_s3(tmp_path: Path) -> None:
    args = argv(spec("uefi-secureboot"), tmp_path)
    assert option(args, "-machine") == ["q35,smm=on"]
    assert option(args, "-global") == ["driver=cfi.pflash01,property=secure,value=on",
                                       "ICH9-LPC.disable_s3=1"]


def test_a_plain_uefi_vm_has_no_smm(tmp_path: Path) -> None:
    args = argv(spec("uefi"), tmp_path)
    assert option(args, "-machine") == ["q35"]
    assert option(args, "-global") == []


@pytest.mark.parametrize(("boot", "nic_index", "disk_index"), [("network", 1, 2),
                                                               ("disk", 2, 1)])
def test_a_uefi_vm_boots_in_the_bootindex_order(tmp_path: Path, boot: str, nic_index: int,
                                                disk_index: int) -> None:
    args = argv(spec("uefi"), tmp_path, boot)
    assert f"bootindex={nic_index}" in nic(args)
    assert f"virtio-blk-pci,drive=disk0,bootindex={disk_index}" in option(args, "-device")


def test_an_ipv6_only_uefi_vm_offers_no_pxe_over_ipv4(tmp_path: Path) -> None:
    args = argv(spec("uefi", ipv6_only=True), tmp_path)
    assert option(args, "-fw_cfg") == ["name=opt/org.tianocore/IPv4PXESupport,string=no"]


def test_a_dual_stack_uefi_vm_offers_pxe_over_both(tmp_path: Path) -> None:
    assert option(argv(spec("uefi"), tmp_path), "-fw_cfg") == []


def test_an_unknown_firmware_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="choose from bios, uefi, uefi-secureboot, uefi-httpboot"):
        spec("coreboot")


# --- the spec in lab.json ---------------------------------------------------------------------

def test_the_firmware_and_ipv6_only_survive_lab_json() -> None:
    vm = VmSpec.from_dict(spec("uefi-secureboot", ipv6_only=True).as_dict())
    assert (vm.firmware, vm.ipv6_only) == ("uefi-secureboot", True)


def test_a_lab_json_of_before_uefi_loads_as_bios_dual_stack_vms() -> None:
    old = {key: value for key, value in SPEC.as_dict().items()
           if key not in ("firmware", "ipv6_only")}
    vm = VmSpec.from_dict(old)
    assert (vm.firmware, vm.ipv6_only) == ("bios", False)


# --- the NVRAM --------------------------------------------------------------------------------

@pytest.fixture
def template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "OVMF_VARS.template"
    path.write_bytes(b"template variables")
    monkeypatch.setattr(firmware, "FIRMWARE", {
        **firmware.FIRMWARE,
        "uefi": firmware.Firmware("uefi", tmp_path / "code", path)})
    return path


def test_the_nvram_is_the_vms_own_file(tmp_path: Path) -> None:
    assert VmFiles(tmp_path, "lab-1").nvram == tmp_path / "lab-1.vars.fd"


def test_the_first_power_on_copies_the_template(tmp_path: Path, template: Path) -> None:
    files = VmFiles(tmp_path / "vms", "lab-1")
    ensure_nvram(spec("uefi"), files)
    assert files.nvram.read_bytes() == b"template variables"


def test_what_the_firmware_wrote_survives_the_next_power_on(tmp_path: Path,
                                                            template: Path) -> None:
    files = VmFiles(tmp_path, "lab-1")
    ensure_nvram(spec("uefi"), files)
    files.nvram.write_bytes(b"Boot0001 written by OVMF")
    ensure_nvram(spec("uefi"), files)
    assert files.nvram.read_bytes() == b"Boot0001 written by OVMF"


def test_a_bios_vm_has_no_nvram(tmp_path: Path) -> None:
    files = VmFiles(tmp_path, "lab-1")
    ensure_nvram(spec("bios"), files)
    assert not files.nvram.exists()


def test_power_on_makes_the_nvram_before_qemu_starts(tmp_path: Path, template: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    files = VmFiles(tmp_path, "lab-1")
    seen: list[bool] = []

    class Started:
        pid = 4242

        def __init__(self, *args: object, **kwargs: object) -> None:
            seen.append(files.nvram.exists())

    monkeypatch.setattr(qemu.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(qemu, "ensure_disks", lambda *args, **kwargs: None)
    monkeypatch.setattr(qemu.subprocess, "Popen", Started)
    qemu.QemuMachine(spec("uefi"), files).power_on()
    assert seen == [True]
