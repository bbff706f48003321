"""A lab VM's hardware override (`qemu.effective_spec`, `lab/hardware.py`, `ironsight lab
hardware`): what its next power on boots with, and the refusals of what it cannot boot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ironsight.cli.lab import lab_group
from ironsight.lab import hardware, qemu
from ironsight.lab.bmc import MachineError
from ironsight.lab.network import LabNetwork
from ironsight.lab.qemu import (
    HardwareError,
    QemuMachine,
    VmFiles,
    VmSpec,
    command_line,
    effective_spec,
    extra_disk_serial,
)
from ironsight.lab.state import (
    SIZES,
    SSH_DRIVER,
    STATE_FILE,
    UEFI_MIN_MB,
    VMS_DIR,
    Lab,
    LabError,
    LabVm,
    default_vms,
)

SPEC = VmSpec(name="lab-1", mac="52:54:00:1a:00:01", tap="tap1", memory_mb=320, disk_gb=4,
              extra_disks_mb=(64, 64))


def files(tmp_path: Path) -> VmFiles:
    return VmFiles(tmp_path, SPEC.name)


def override(tmp_path: Path, data: Any) -> None:
    files(tmp_path).hardware.write_text(data if isinstance(data, str) else json.dumps(data))


def option(args: list[str], name: str) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args) if arg == name]


# --- the effective spec -----------------------------------------------------------------------

def test_without_an_override_file_the_vm_boots_its_spec(tmp_path: Path) -> None:
    assert effective_spec(SPEC, files(tmp_path)) is SPEC


def test_the_override_replaces_what_it_names_and_keeps_the_rest(tmp_path: Path) -> None:
    override(tmp_path, {"memory_mb": 384})
    assert effective_spec(SPEC, files(tmp_path)) == VmSpec(
        name="lab-1", mac=SPEC.mac, tap="tap1", memory_mb=384, disk_gb=4,
        extra_disks_mb=(64, 64))
    override(tmp_path, {"extra_disks_mb": [64]})
    spec = effective_spec(SPEC, files(tmp_path))
    assert (spec.memory_mb, spec.extra_disks_mb) == (320, (64,))
    assert SPEC.memory_mb == 320 and SPEC.extra_disks_mb == (64, 64)  # the spec is untouched


def test_an_empty_disk_list_is_no_extra_disk(tmp_path: Path) -> None:
    override(tmp_path, {"memory_mb": 256, "extra_disks_mb": []})
    spec = effective_spec(SPEC, files(tmp_path))
    assert (spec.memory_mb, spec.extra_disks_mb) == (256, ())


@pytest.mark.parametrize(("data", "message"), [
    ("{not json", "not JSON"),
    ([384], "not a JSON object but list"),
    ({"memory": 384}, "unknown key 'memory' (the keys: memory_mb, extra_disks_mb)"),
    ({"memory_mb": 128}, "memory_mb: 128 MiB is out of the lab's bounds for a bios VM: "
                         "256 to 4096 MiB"),
    ({"memory_mb": 1 << 20}, "memory_mb: 1048576 MiB is out of the lab's bounds"),
    ({"memory_mb": "384"}, "memory_mb: '384' is not a whole number of MiB"),
    ({"memory_mb": True}, "memory_mb: True is not a whole number of MiB"),
    ({"extra_disks_mb": 64}, "extra_disks_mb: 64 is not a list of disk sizes in MiB"),
    ({"extra_disks_mb": [64, 0]}, "extra_disks_mb: 0 is not a disk size"),
    ({"extra_disks_mb": [-64]}, "extra_disks_mb: -64 is not a disk size"),
    ({"extra_disks_mb": [6.5]}, "extra_disks_mb: 6.5 is not a disk size"),
    ({"extra_disks_mb": [16] * 17}, "extra_disks_mb: 17 extra disks: 16 at most"),
])
def test_a_bad_override_file_is_refused_naming_the_file_and_what_is_wrong(
        tmp_path: Path, data: Any, message: str) -> None:
    override(tmp_path, data)
    with pytest.raises(HardwareError) as caught:
        effective_spec(SPEC, files(tmp_path))
    assert str(caught.value).startswith(f"{files(tmp_path).hardware}: ")
    assert message in str(caught.value)


def test_a_uefi_vm_is_not_given_less_than_the_lab_gives_uefi_vms(tmp_path: Path) -> None:
    uefi = VmSpec(name="lab-1", mac=SPEC.mac, tap="tap1", memory_mb=320, firmware="uefi")
    override(tmp_path, {"memory_mb": 288})
    with pytest.raises(HardwareError, match="288 MiB is out of the lab's bounds for a uefi "
                                            "VM: 320 to 4096 MiB"):
        effective_spec(uefi, files(tmp_path))


def test_the_bounds_are_the_labs() -> None:
    assert qemu.UEFI_MIN_MEMORY_MB == UEFI_MIN_MB
    assert min(memory for _, memory, _ in SIZES) >= qemu.MIN_MEMORY_MB


# --- the extra disks' serials -----------------------------------------------------------------

def test_each_extra_disk_has_a_serial_of_its_vm_and_index(tmp_path: Path) -> None:
    devices = [d for d in option(command_line(SPEC, files(tmp_path), "network"), "-device")
               if d.startswith("virtio-blk-pci,drive=extra")]
    assert devices == ["virtio-blk-pci,drive=extra0,serial=LAB-lab-1-D0",
                       "virtio-blk-pci,drive=extra1,serial=LAB-lab-1-D1"]
    root = [d for d in option(command_line(SPEC, files(tmp_path), "network"), "-device")
            if "drive=disk0" in d]
    assert root == ["virtio-blk-pci,drive=disk0,bootindex=2"]  # the root disk as before


def test_a_serial_too_long_for_virtio_blk_is_a_digest_still_the_vms_own() -> None:
    long = VmSpec(name="a-very-long-lab-vm-name", mac=SPEC.mac, tap="tap1")
    other = VmSpec(name="a-very-long-lab-vm-name-2", mac=SPEC.mac, tap="tap1")
    serials = [extra_disk_serial(long, 0), extra_disk_serial(long, 1),
               extra_disk_serial(other, 0)]
    assert all(len(s) <= qemu.VIRTIO_BLK_SERIAL_MAX for s in serials)
    assert len(set(serials)) == 3 and serials[0] == extra_disk_serial(long, 0)


# --- power on reads it ------------------------------------------------------------------------

class Started:
    """A QEMU that exits at once: the next power on starts another."""

    argvs: list[list[str]] = []

    def __init__(self, argv: list[str], **kwargs: object) -> None:
        self.pid = 4242
        Started.argvs.append(argv)

    def poll(self) -> int:
        return 0


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    Started.argvs = []
    monkeypatch.setattr(qemu.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(qemu, "ensure_disks", lambda *args, **kwargs: None)
    monkeypatch.setattr(qemu.subprocess, "Popen", Started)
    return Started.argvs


def test_each_power_on_reads_the_override_again(tmp_path: Path,
                                                 started: list[list[str]]) -> None:
    machine = QemuMachine(SPEC, files(tmp_path))
    machine.power_on()
    override(tmp_path, {"memory_mb": 384, "extra_disks_mb": [64]})
    machine.power_on()
    files(tmp_path).hardware.unlink()
    machine.power_on()
    assert [option(argv, "-m") for argv in started] == [["320"], ["384"], ["320"]]
    assert [sum("drive=extra" in d for d in option(argv, "-device")) for argv in started] == [
        2, 1, 2]
    assert machine.spec is SPEC
    assert "hardware override: 384 MiB, extra disks [64] MiB" in machine.history[1][1]


def test_a_bad_override_fails_the_power_on_and_starts_nothing(
        tmp_path: Path, started: list[list[str]]) -> None:
    override(tmp_path, {"memory_mb": 64})
    with pytest.raises(MachineError, match=r"lab-1: .*lab-1\.hardware\.json: memory_mb: 64 "):
        QemuMachine(SPEC, files(tmp_path)).power_on()
    assert started == []


def _qcow2(path: Path, size_mb: int) -> None:
    path.write_bytes(qemu.QCOW2_MAGIC + bytes(20) + (size_mb * qemu.MiB).to_bytes(8, "big"))


def test_an_extra_disk_whose_size_changed_is_a_new_one(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[tuple[str, str]] = []

    def create(path: Path, size: str, **kwargs: object) -> None:
        if not path.exists():
            created.append((path.name, size))
            _qcow2(path, int(size.rstrip("M")))

    monkeypatch.setattr(qemu, "create_disk", create)
    vm = VmSpec(name="lab-1", mac=SPEC.mac, tap="tap1", disk_gb=0, extra_disks_mb=(64, 64))
    qemu.ensure_disks(vm, files(tmp_path))
    assert qemu.qcow2_size(files(tmp_path).extra_disk(1)) == 64 * qemu.MiB
    qemu.ensure_disks(VmSpec(name="lab-1", mac=SPEC.mac, tap="tap1", disk_gb=0,
                             extra_disks_mb=(64, 128)), files(tmp_path))
    assert created == [("lab-1-extra0.qcow2", "64M"), ("lab-1-extra1.qcow2", "64M"),
                       ("lab-1-extra1.qcow2", "128M")]
    assert qemu.qcow2_size(tmp_path / "missing.qcow2") is None


# --- the lab's helper -------------------------------------------------------------------------

def write_lab(path: Path, vms: list[LabVm]) -> Lab:
    (path / STATE_FILE).write_text(json.dumps({
        "network": LabNetwork(namespace="isv-absent").__dict__,
        "vms": [vm.as_dict() for vm in vms], "pids": {}}))
    return Lab(path)


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return write_lab(tmp_path, [LabVm(SPEC, "pxe_ipmitool", 6230),
                                LabVm(VmSpec(name="lab-2", mac="52:54:00:1a:00:02", tap="tap2"),
                                      SSH_DRIVER, 6231)])


def stored(lab: Lab) -> dict[str, Any]:
    return dict(json.loads(lab.files("lab-1").hardware.read_text()))


def test_change_merges_into_the_override_and_keeps_only_what_differs(lab: Lab) -> None:
    spec = hardware.change(lab, "lab-1", memory_mb=384)
    assert (spec.memory_mb, spec.extra_disks_mb) == (384, (64, 64))
    assert lab.files("lab-1").hardware == lab.state_dir / VMS_DIR / "lab-1.hardware.json"
    spec = hardware.change(lab, "lab-1", extra_disks_mb=[64])
    assert (spec.memory_mb, spec.extra_disks_mb) == (384, (64,))
    assert stored(lab) == {"memory_mb": 384, "extra_disks_mb": [64]}
    hardware.change(lab, "lab-1", memory_mb=320)  # the spec's again
    assert stored(lab) == {"extra_disks_mb": [64]}
    assert hardware.current(lab, "lab-1").extra_disks_mb == (64,)


def test_reset_goes_back_to_the_spec_and_removes_the_file(lab: Lab) -> None:
    hardware.change(lab, "lab-1", memory_mb=384, extra_disks_mb=[])
    assert hardware.change(lab, "lab-1", reset=True) == lab.vm("lab-1").spec
    assert not lab.files("lab-1").hardware.exists()
    spec = hardware.change(lab, "lab-1", memory_mb=288, reset=True)
    assert stored(lab) == {"memory_mb": 288} and spec.extra_disks_mb == (64, 64)


def test_reset_replaces_a_bad_override_the_vm_could_not_boot(lab: Lab) -> None:
    lab.files("lab-1").hardware.parent.mkdir(parents=True)
    lab.files("lab-1").hardware.write_text('{"memory_mb": 1}')
    with pytest.raises(HardwareError, match="memory_mb: 1 MiB"):
        hardware.change(lab, "lab-1", memory_mb=384)
    assert hardware.change(lab, "lab-1", memory_mb=384, reset=True).memory_mb == 384


def test_change_refuses_values_out_of_bounds_and_writes_nothing(lab: Lab) -> None:
    with pytest.raises(HardwareError, match="memory_mb: 100000 MiB"):
        hardware.change(lab, "lab-1", memory_mb=100000)
    with pytest.raises(HardwareError, match="extra_disks_mb: 0 is not a disk size"):
        hardware.change(lab, "lab-1", extra_disks_mb=[0])
    assert not lab.files("lab-1").hardware.exists()


def test_libvirt_vms_and_other_names_are_refused(lab: Lab, tmp_path: Path) -> None:
    with pytest.raises(LabError, match="lab-2 is a libvirt domain"):
        hardware.change(lab, "lab-2", memory_mb=384)
    with pytest.raises(LabError, match=r"no VM 'lab-9' in the lab \(its VMs: lab-1, lab-2\)"):
        hardware.change(lab, "lab-9", memory_mb=384)
    with pytest.raises(LabError, match="no lab in"):
        hardware.change(Lab(tmp_path / "none"), "lab-1", memory_mb=384)


def test_describe() -> None:
    assert hardware.describe(SPEC) == "320 MiB, 2 extra disks (64, 64 MiB)"
    assert hardware.describe(default_vms(1)[0].spec) == "256 MiB, no extra disk"


# --- `ironsight lab hardware` -----------------------------------------------------------------

def run(lab: Lab, *args: str) -> Result:
    return CliRunner().invoke(lab_group, ["hardware", "lab-1", "--state-dir",
                                          str(lab.state_dir), *args])


def test_the_command_says_what_the_vm_will_boot_with(lab: Lab) -> None:
    result = run(lab, "--memory-mb", "384", "--extra-disks-mb", "64")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("lab-1 boots with 384 MiB, 1 extra disk (64 MiB) at its "
                                    "next power on (its spec: 320 MiB, 2 extra disks (64, 64 "
                                    "MiB); override ")
    assert stored(lab) == {"memory_mb": 384, "extra_disks_mb": [64]}
    assert run(lab).output.startswith("lab-1 boots with 384 MiB, 1 extra disk")  # a look
    result = run(lab, "--no-extra-disks")
    assert "boots with 384 MiB, no extra disk" in result.output
    result = run(lab, "--reset")
    assert result.output == "lab-1 boots with 320 MiB, 2 extra disks (64, 64 MiB) at its " \
                            "next power on (its spec)\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--memory-mb", "100"], "Invalid value for '--memory-mb': 100 MiB is out of the lab's "
                             "bounds for a bios VM: 256 to 4096 MiB"),
    (["--memory-mb", "lots"], "Invalid value for '--memory-mb': 'lots' is not a valid integer"),
    (["--extra-disks-mb", "64,x"], "Invalid value for '--extra-disks-mb': '64,x' is not a "
                                   "comma-separated list of disk sizes in MiB"),
    (["--extra-disks-mb", "-64"], "Invalid value for '--extra-disks-mb': '-64' is not a "
                                  "comma-separated list"),
    (["--extra-disks-mb", "64,0"], "Invalid value for '--extra-disks-mb': 0 is not a disk "
                                   "size"),
    (["--extra-disks-mb", "64", "--no-extra-disks"], "--extra-disks-mb and --no-extra-disks "
                                                     "exclude each other"),
])
def test_the_command_refuses_bad_values_naming_the_option(lab: Lab, args: list[str],
                                                         message: str) -> None:
    result = run(lab, *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()), result.output
    assert not lab.files("lab-1").hardware.exists()


def test_the_command_refuses_a_libvirt_vm_and_a_missing_lab(lab: Lab, tmp_path: Path) -> None:
    result = CliRunner().invoke(lab_group, ["hardware", "lab-2", "--state-dir",
                                            str(lab.state_dir), "--memory-mb", "384"])
    assert result.exit_code == 1 and "lab-2 is a libvirt domain" in result.output
    result = CliRunner().invoke(lab_group, ["hardware", "lab-1", "--state-dir",
                                            str(tmp_path / "none")])
    assert result.exit_code == 1 and "no lab in" in result.output
