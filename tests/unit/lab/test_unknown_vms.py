"""The lab's unknown VMs (`lab up --unknown-nodes K`): machines nobody enrols, behind virtual
IPMI BMCs, each with a second NIC whose MAC is the same on all of them and which is on no
network; how `up` configures the service for them, and `lab power-on`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ironsight.common import config
from ironsight.lab import lifecycle, state
from ironsight.lab.lifecycle import power_on, service_config, status
from ironsight.lab.network import LabNetwork
from ironsight.lab.qemu import VmFiles, VmSpec, command_line
from ironsight.lab.state import (
    MAX_UNKNOWN,
    SHARED_EXTRA_MAC,
    STATE_FILE,
    UNKNOWN_DRIVER,
    Lab,
    LabError,
    LabOptions,
    LabVm,
    default_vms,
)


def unknown(vms: list[LabVm]) -> list[LabVm]:
    return [vm for vm in vms if vm.unknown]


def qemu_argv(vm: LabVm, tmp_path: Path, boot: str = "disk") -> list[str]:
    return command_line(vm.spec, VmFiles(tmp_path, vm.spec.name), boot)


def option(args: list[str], name: str) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args) if arg == name]


def nics(args: list[str]) -> list[str]:
    return [d for d in option(args, "-device") if d.startswith("virtio-net-pci,")]


# --- the VMs ----------------------------------------------------------------------------------

def test_there_are_no_unknown_vms_unless_asked() -> None:
    assert unknown(default_vms(3)) == []


def test_the_unknown_vms_come_after_the_enrolled_ones_named_unknown_1_to_k() -> None:
    vms = default_vms(2, unknown=3)
    assert [vm.spec.name for vm in vms] == ["lab-1", "lab-2", "unknown-1", "unknown-2",
                                            "unknown-3"]


def test_the_unknown_vms_are_not_enrolled() -> None:
    assert [vm.enroll for vm in default_vms(1, unknown=2)] == [True, False, False]


def test_the_unknown_vms_are_bios_vms_behind_virtual_ipmi_bmcs() -> None:
    for vm in unknown(default_vms(1, unknown=3)):
        assert (vm.driver, vm.under_libvirt, vm.spec.firmware) == (UNKNOWN_DRIVER, False,
                                                                   "bios")
    assert UNKNOWN_DRIVER == "pxe_ipmitool"


def test_the_unknown_vms_bmc_ports_follow_the_enrolled_ones() -> None:
    vms = default_vms(3, unknown=2, bmc_base_port=7000)
    assert [vm.bmc_port for vm in vms] == [7000, 7001, 7002, 7003, 7004]


def test_every_vm_has_a_mac_and_a_tap_of_its_own() -> None:
    vms = default_vms(50, unknown=MAX_UNKNOWN)
    macs = [vm.spec.mac for vm in vms]
    taps = [vm.spec.tap for vm in vms]
    assert len(set(macs)) == len(macs) == 70
    assert len(set(taps)) == len(taps)
    assert all(len(tap) <= 15 for tap in taps)  # an interface name's limit


def test_no_provisioning_mac_is_the_shared_extra_mac() -> None:
    assert SHARED_EXTRA_MAC not in {vm.spec.mac for vm in default_vms(50, unknown=MAX_UNKNOWN)}


def test_the_unknown_vms_serials_and_uuids_are_distinct_and_say_unknown() -> None:
    vms = default_vms(2, unknown=2)
    assert [vm.spec.system_serial for vm in vms] == ["LAB-lab-1", "LAB-lab-2",
                                                     "LAB-unknown-1", "LAB-unknown-2"]
    assert len({vm.spec.system_uuid for vm in vms}) == 4


def test_each_unknown_vm_has_the_shared_extra_mac_and_no_enrolled_vm_has_it() -> None:
    vms = default_vms(2, unknown=2)
    assert [vm.spec.isolated_macs for vm in vms] == [(), (), (SHARED_EXTRA_MAC,),
                                                     (SHARED_EXTRA_MAC,)]


@pytest.mark.parametrize("count", [-1, MAX_UNKNOWN + 1])
def test_an_unknown_vm_count_out_of_range_is_refused(count: int) -> None:
    with pytest.raises(LabError, match=f"from 0 to {MAX_UNKNOWN}"):
        default_vms(1, unknown=count)


def test_a_libvirt_vm_with_an_isolated_nic_is_refused() -> None:
    spec = VmSpec(name="lab-1", mac="52:54:00:1a:00:01", tap="tap1",
                  isolated_macs=(SHARED_EXTRA_MAC,))
    with pytest.raises(ValueError, match="behind a virtual IPMI BMC only"):
        LabVm(spec, "pxe_ssh", 6230)


def test_an_unknown_vm_survives_lab_json() -> None:
    vm = unknown(default_vms(1, unknown=1))[0]
    again = LabVm.from_dict(json.loads(json.dumps(vm.as_dict())))
    assert again.as_dict() == vm.as_dict()
    assert (again.unknown, again.spec.isolated_macs) == (True, (SHARED_EXTRA_MAC,))


def test_a_lab_json_of_before_isolated_nics_loads_without_them() -> None:
    data = default_vms(1)[0].spec.as_dict()
    del data["isolated_macs"]
    assert VmSpec.from_dict(data).isolated_macs == ()


# --- the QEMU command line --------------------------------------------------------------------

def test_an_unknown_vm_has_two_nics_the_provisioning_one_first(tmp_path: Path) -> None:
    vm = unknown(default_vms(1, unknown=1))[0]
    first, second = nics(qemu_argv(vm, tmp_path))
    assert f"mac={vm.spec.mac}" in first
    assert f"mac={SHARED_EXTRA_MAC}" in second


def test_the_shared_mac_nic_is_on_a_hub_of_its_own_not_the_bridges_tap(tmp_path: Path) -> None:
    vm = unknown(default_vms(1, unknown=1))[0]
    args = qemu_argv(vm, tmp_path)
    netdevs = option(args, "-netdev")
    assert netdevs == [f"tap,id=net0,ifname={vm.spec.tap},script=no,downscript=no",
                       "hubport,id=isolated1,hubid=1"]
    assert "netdev=isolated1," in nics(args)[1]


@pytest.mark.parametrize("boot", ["network", "disk"])
def test_only_the_provisioning_nic_has_a_boot_index(tmp_path: Path, boot: str) -> None:
    vm = unknown(default_vms(1, unknown=1))[0]
    first, second = nics(qemu_argv(vm, tmp_path, boot))
    assert "bootindex=" in first
    assert "bootindex=" not in second


def test_the_shared_mac_nic_has_no_option_rom(tmp_path: Path) -> None:
    vm = unknown(default_vms(1, unknown=1))[0]
    first, second = nics(qemu_argv(vm, tmp_path))
    assert second.endswith(",romfile=")
    assert "romfile" not in first  # SeaBIOS: QEMU's iPXE ROM boots it


def test_an_enrolled_vm_has_one_nic(tmp_path: Path) -> None:
    assert len(nics(qemu_argv(default_vms(1)[0], tmp_path))) == 1


def test_the_unknown_vms_taps_are_on_the_network(tmp_path: Path) -> None:
    """`up` creates a tap of the bridge for every VM of the options (network.create)."""
    options = LabOptions(state_dir=tmp_path, vms=default_vms(1, unknown=2))
    assert [vm.spec.tap for vm in options.vms] == ["tap1", "tapu1", "tapu2"]


# --- the service's configuration --------------------------------------------------------------

def load_conf(tmp_path: Path, driver: str | None) -> config.Config:
    path = tmp_path / "serve.conf"
    path.write_text(service_config(tmp_path, LabNetwork(), tmp_path / "ramdisk",
                                   discovery_driver=driver))
    return config.load(path)


def test_with_unknown_vms_the_service_discovers_them_with_their_driver(tmp_path: Path) -> None:
    text = service_config(tmp_path, LabNetwork(), tmp_path / "ramdisk",
                          discovery_driver=UNKNOWN_DRIVER)
    assert "[auto_discovery]\nenabled = true\ndriver = pxe_ipmitool\n" in text
    conf = load_conf(tmp_path, UNKNOWN_DRIVER)
    assert (conf.auto_discovery.enabled, conf.auto_discovery.driver) == (True, UNKNOWN_DRIVER)


def test_without_unknown_vms_the_service_discovers_nothing(tmp_path: Path) -> None:
    text = service_config(tmp_path, LabNetwork(), tmp_path / "ramdisk")
    assert "auto_discovery" not in text


# --- status -----------------------------------------------------------------------------------

def lab_dir(tmp_path: Path, vms: list[LabVm], **more: Any) -> Path:
    (tmp_path / STATE_FILE).write_text(json.dumps({
        "network": LabNetwork(namespace="isv-absent").__dict__, "bmc_user": "admin",
        "vms": [vm.as_dict() for vm in vms], "pids": {}, **more}))
    return tmp_path


def test_status_marks_the_unknown_vms_and_names_the_manifest(tmp_path: Path) -> None:
    manifest = str(tmp_path / "manifest.csv")
    info = status(lab_dir(tmp_path, default_vms(1, unknown=1), manifest=manifest))
    assert [(vm["name"], vm["unknown"]) for vm in info["vms"]] == [("lab-1", False),
                                                                    ("unknown-1", True)]
    assert info["manifest"] == manifest


# --- power on ---------------------------------------------------------------------------------

@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Each command the lab runs (argv and environment), answering as ipmitool does; the
    lab's daemon taken for running."""
    seen: list[dict[str, Any]] = []

    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen.append({"argv": argv, "env": kwargs.get("env")})
        return subprocess.CompletedProcess(argv, 0, "Chassis Power Control: Up/On\n", "")

    monkeypatch.setattr(state.subprocess, "run", run)
    monkeypatch.setattr(Lab, "process", lambda self, role: 4242 if role == "daemon" else None)
    return seen


def test_power_on_presses_the_unknown_vms_button_through_its_bmc_in_the_namespace(
        tmp_path: Path, ran: list[dict[str, Any]]) -> None:
    vms = default_vms(1, unknown=2)
    path = lab_dir(tmp_path, vms)
    assert "powered on through its BMC" in power_on(path, "unknown-2")
    (call,) = ran
    assert call["argv"] == [
        "ip", "netns", "exec", "isv-absent", "ipmitool", "-I", "lanplus", "-H", "127.0.0.1",
        "-p", str(vms[2].bmc_port), "-U", "admin", "-f", str(tmp_path / "bmc-password"),
        "chassis", "power", "on"]


def test_power_on_takes_an_enrolled_vm_too(tmp_path: Path, ran: list[dict[str, Any]]) -> None:
    vms = default_vms(2, unknown=1)
    power_on(lab_dir(tmp_path, vms), "lab-2")
    argv = ran[0]["argv"]
    assert argv[argv.index("-p") + 1] == str(vms[1].bmc_port)
    assert argv[-3:] == ["chassis", "power", "on"]


def test_power_on_never_puts_the_password_on_the_command_line(
        tmp_path: Path, ran: list[dict[str, Any]]) -> None:
    path = lab_dir(tmp_path, default_vms(1, unknown=1))
    Lab(path).write_password("s3cret-password")
    power_on(path, "unknown-1")
    assert not any("s3cret-password" in arg for arg in ran[0]["argv"])


def test_power_on_of_an_unknown_name_names_the_labs_vms(
        tmp_path: Path, ran: list[dict[str, Any]]) -> None:
    with pytest.raises(LabError, match=r"has no VM 'unknown-9' \(its VMs: lab-1, unknown-1, "
                                       r"unknown-2\)"):
        power_on(lab_dir(tmp_path, default_vms(1, unknown=2)), "unknown-9")
    assert ran == []


def test_power_on_without_a_lab_says_so(tmp_path: Path) -> None:
    with pytest.raises(LabError, match=r"no lab in .*: `ironsight lab up` first"):
        power_on(tmp_path, "unknown-1")


def test_power_on_when_the_lab_is_down_names_the_vm(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Lab, "process", lambda self, role: None)
    with pytest.raises(LabError, match=r"cannot power unknown-1 on: the lab in .* is not up"):
        power_on(lab_dir(tmp_path, default_vms(1, unknown=1)), "unknown-1")


def test_a_bmc_that_refuses_the_power_on_is_an_error_naming_the_vm(
        tmp_path: Path, ran: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 1, "", "Error: Unable to establish IPMI v2 "
                                           "/ RMCP+ session\n")

    monkeypatch.setattr(state.subprocess, "run", refused)
    with pytest.raises(LabError, match=r"cannot power unknown-1 on through its BMC .*Unable "
                                       "to establish"):
        power_on(lab_dir(tmp_path, default_vms(1, unknown=1)), "unknown-1")


def test_up_resets_a_previous_labs_manifest(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{}")
    (tmp_path / "manifest.csv").write_text("serial\nold\n")
    lifecycle._reset_state_dir(tmp_path)
    assert not (tmp_path / "manifest.csv").exists()
