"""`ironsight lab up --firmware ... --ipv6-only-nodes ... --unknown-nodes ...` and what `lab
status` shows of it (the lab itself is not brought up: `up` is replaced by a recorder), and
`lab power-on`'s errors."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ironsight.cli.lab import lab_group
from ironsight.lab import lifecycle
from ironsight.lab.network import LabNetwork
from ironsight.lab.state import STATE_FILE, LabOptions, default_vms


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[LabOptions]:
    """The options each `lab up` would bring a lab up with."""
    seen: list[LabOptions] = []

    def up(options: LabOptions, log: Any = print) -> SimpleNamespace:
        seen.append(options)
        return SimpleNamespace(api_url="http://127.0.0.1:6385",
                               discoverd_url="http://127.0.0.1:5050", vms=options.vms,
                               manifest_file=options.state_dir / "manifest.csv")

    monkeypatch.setattr(lifecycle, "up", up)
    return seen


def lab(*args: str) -> Result:
    return CliRunner().invoke(lab_group, list(args))


def test_the_vms_boot_bios_by_default(asked: list[LabOptions], tmp_path: Path) -> None:
    assert lab("up", "--state-dir", str(tmp_path)).exit_code == 0
    assert {vm.spec.firmware for vm in asked[0].vms} == {"bios"}


def test_the_firmware_list_is_cycled_over_the_vms(asked: list[LabOptions],
                                                  tmp_path: Path) -> None:
    result = lab("up", "--state-dir", str(tmp_path), "--nodes", "3",
                 "--firmware", "uefi-secureboot,uefi")
    assert result.exit_code == 0, result.output
    assert [vm.spec.firmware for vm in asked[0].vms] == ["uefi-secureboot", "uefi",
                                                         "uefi-secureboot"]


def test_the_ipv6_only_vms_are_the_last_uefi_ones_and_their_taps_filtered(
        asked: list[LabOptions], tmp_path: Path) -> None:
    result = lab("up", "--state-dir", str(tmp_path), "--nodes", "4", "--firmware",
                 "uefi,bios", "--ipv6-only-nodes", "1")
    assert result.exit_code == 0, result.output
    assert [vm.spec.ipv6_only for vm in asked[0].vms] == [False, False, True, False]
    assert asked[0].network.ipv6_only_taps == ("tap3",)


def test_an_unknown_firmware_is_a_usage_error_naming_it_and_the_choices(
        asked: list[LabOptions]) -> None:
    result = lab("up", "--firmware", "uefi,bioss")
    assert result.exit_code == 2
    assert "Invalid value for '--firmware': unknown firmware 'bioss' (choose from bios, uefi, " \
           "uefi-secureboot, uefi-httpboot)" in result.output
    assert asked == []


def test_more_ipv6_only_vms_than_uefi_ones_is_a_usage_error(asked: list[LabOptions]) -> None:
    result = lab("up", "--nodes", "3", "--firmware", "bios,uefi", "--ipv6-only-nodes", "2")
    assert result.exit_code == 2
    assert "--ipv6-only-nodes" in result.output
    assert "only 1 of the 3 VMs boot UEFI" in result.output
    assert asked == []


def test_status_shows_each_vms_firmware_and_ipv6_only(tmp_path: Path) -> None:
    vms = default_vms(3, firmware=["bios", "uefi", "uefi-secureboot"], ipv6_only=1)
    (tmp_path / STATE_FILE).write_text(json.dumps({
        "network": LabNetwork(namespace="isv-absent").__dict__,
        "vms": [vm.as_dict() for vm in vms], "pids": {}}))
    result = lab("status", "--state-dir", str(tmp_path))
    rows = {line.split()[1]: line for line in result.output.splitlines()
            if line.startswith("│ lab-")}
    assert "bios" in rows["lab-1"] and "IPv6-only" not in rows["lab-1"]
    assert "uefi " in rows["lab-2"] and "IPv6-only" not in rows["lab-2"]
    assert "uefi-secureboot IPv6-only" in rows["lab-3"]


def test_status_json_carries_the_firmware(tmp_path: Path) -> None:
    vms = default_vms(1, firmware=["uefi"], ipv6_only=1)
    (tmp_path / STATE_FILE).write_text(json.dumps({
        "network": LabNetwork(namespace="isv-absent").__dict__,
        "vms": [vm.as_dict() for vm in vms], "pids": {}}))
    (vm,) = json.loads(lab("status", "--state-dir", str(tmp_path), "--json").output)["vms"]
    assert (vm["firmware"], vm["ipv6_only"]) == ("uefi", True)


# --- unknown VMs ------------------------------------------------------------------------------

def test_there_are_no_unknown_vms_by_default(asked: list[LabOptions], tmp_path: Path) -> None:
    assert lab("up", "--state-dir", str(tmp_path)).exit_code == 0
    assert not any(vm.unknown for vm in asked[0].vms)


def test_unknown_nodes_adds_that_many_unknown_vms(asked: list[LabOptions],
                                                  tmp_path: Path) -> None:
    result = lab("up", "--state-dir", str(tmp_path), "--nodes", "1", "--unknown-nodes", "2")
    assert result.exit_code == 0, result.output
    assert [(vm.spec.name, vm.unknown) for vm in asked[0].vms] == [
        ("lab-1", False), ("unknown-1", True), ("unknown-2", True)]


@pytest.mark.parametrize("count", ["21", "-1"])
def test_unknown_nodes_out_of_0_to_20_is_a_usage_error(asked: list[LabOptions],
                                                      count: str) -> None:
    result = lab("up", "--unknown-nodes", count)
    assert result.exit_code == 2
    assert "Invalid value for '--unknown-nodes'" in result.output
    assert asked == []


def test_up_names_the_unknown_vms_and_the_manifest(asked: list[LabOptions],
                                                   tmp_path: Path) -> None:
    result = lab("up", "--state-dir", str(tmp_path), "--nodes", "2", "--unknown-nodes", "2")
    assert "unknown VMs (not enrolled, off): unknown-1, unknown-2" in result.output
    assert f"delivery manifest: {tmp_path / 'manifest.csv'}" in result.output
    assert f"ironsight lab power-on unknown-1 --state-dir {tmp_path}" in result.output


def test_up_suggests_inspecting_the_enrolled_vms_only(asked: list[LabOptions],
                                                      tmp_path: Path) -> None:
    result = lab("up", "--state-dir", str(tmp_path), "--nodes", "2", "--unknown-nodes", "1")
    assert "ironsight node inspect lab-1 lab-2 --wait 300" in result.output


def test_up_without_unknown_vms_mentions_no_manifest(asked: list[LabOptions],
                                                     tmp_path: Path) -> None:
    assert "manifest" not in lab("up", "--state-dir", str(tmp_path)).output


def write_lab(path: Path, vms: list[Any], **more: Any) -> None:
    (path / STATE_FILE).write_text(json.dumps({
        "network": LabNetwork(namespace="isv-absent").__dict__,
        "vms": [vm.as_dict() for vm in vms], "pids": {}, **more}))


def test_status_lists_the_unknown_vms_and_the_manifest(tmp_path: Path) -> None:
    write_lab(tmp_path, default_vms(1, unknown=2), manifest=str(tmp_path / "manifest.csv"))
    result = lab("status", "--state-dir", str(tmp_path))
    assert "unknown VMs (not enrolled; `ironsight lab power-on NAME`): unknown-1, " \
           f"unknown-2; delivery manifest {tmp_path / 'manifest.csv'}" in result.output
    assert "unknown-2" in {line.split()[1] for line in result.output.splitlines()
                           if line.startswith("│ ")}


def test_power_on_of_an_unknown_name_is_an_error_listing_the_vms(tmp_path: Path) -> None:
    write_lab(tmp_path, default_vms(1, unknown=1))
    result = lab("power-on", "unknown-7", "--state-dir", str(tmp_path))
    assert result.exit_code == 1
    assert "has no VM 'unknown-7' (its VMs: lab-1, unknown-1)" in result.output


def test_power_on_without_a_lab_is_an_error(tmp_path: Path) -> None:
    result = lab("power-on", "unknown-1", "--state-dir", str(tmp_path))
    assert result.exit_code == 1
    assert f"no lab in {tmp_path}" in result.output


def test_power_on_of_a_lab_that_is_down_names_the_vm(tmp_path: Path) -> None:
    write_lab(tmp_path, default_vms(1, unknown=1))
    result = lab("power-on", "unknown-1", "--state-dir", str(tmp_path))
    assert result.exit_code == 1
    assert "cannot power unknown-1 on: the lab in" in result.output
    assert "is not up" in result.output


def test_status_shows_hardware_changed_by_lab_hardware_and_what_it_boots_with(
        tmp_path: Path) -> None:
    vms = default_vms(2)
    (tmp_path / STATE_FILE).write_text(json.dumps({
        "network": LabNetwork(namespace="isv-absent").__dict__,
        "vms": [vm.as_dict() for vm in vms], "pids": {}}))
    changed = lab("hardware", vms[1].spec.name, "--state-dir", str(tmp_path),
                  "--memory-mb", str(vms[1].spec.memory_mb + 128), "--no-extra-disks")
    assert changed.exit_code == 0, changed.output
    info = json.loads(lab("status", "--state-dir", str(tmp_path), "--json").output)
    first, second = info["vms"]
    assert (first["hardware_changed"], second["hardware_changed"]) == (False, True)
    assert (second["memory_mb"], second["extra_disks_mb"]) == (vms[1].spec.memory_mb + 128, [])
    shown = lab("status", "--state-dir", str(tmp_path)).output
    assert f"{vms[1].spec.memory_mb + 128}*" in shown
    assert (f"hardware changed by `ironsight lab hardware` (from the next power on; "
            f"`--reset` undoes it): {vms[1].spec.name} ({vms[1].spec.memory_mb + 128} MiB, "
            "no extra disk)") in " ".join(shown.split())


def test_status_names_a_hardware_override_it_cannot_read(tmp_path: Path) -> None:
    vms = default_vms(1)
    (tmp_path / STATE_FILE).write_text(json.dumps({
        "network": LabNetwork(namespace="isv-absent").__dict__,
        "vms": [vm.as_dict() for vm in vms], "pids": {}}))
    (tmp_path / "vms").mkdir(exist_ok=True)
    (tmp_path / "vms" / f"{vms[0].spec.name}.hardware.json").write_text('{"memory_mb": -1}')
    (vm,) = json.loads(lab("status", "--state-dir", str(tmp_path), "--json").output)["vms"]
    assert "memory_mb" in vm["hardware_error"]
    assert vm["memory_mb"] == vms[0].spec.memory_mb


def test_up_prints_the_web_consoles_url(asked: list[LabOptions], tmp_path: Path) -> None:
    assert "web console: http://127.0.0.1:6385/ui/" in lab("up", "--state-dir",
                                                           str(tmp_path)).output


def test_status_prints_the_web_consoles_url(tmp_path: Path) -> None:
    write_lab(tmp_path, default_vms(1), api_url="http://127.0.0.1:16385")
    assert "web console http://127.0.0.1:16385/ui/" in lab("status", "--state-dir",
                                                           str(tmp_path)).output
