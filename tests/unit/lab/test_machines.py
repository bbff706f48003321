"""Simulated machines: the boot firmware as the real agent reads it from the tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from ironsight.agent import document, system
from ironsight.lab.machines import SECURE_BOOT_VAR, MachineSpec, build_tree


def boot_of(tmp_path: Path, spec: MachineSpec) -> dict[str, object]:
    root = build_tree(tmp_path / spec.name, spec)
    inventory = document.build(str(root))["inventory"]
    assert isinstance(inventory, dict) and isinstance(inventory["boot"], dict)
    return inventory["boot"]


@pytest.mark.parametrize("secure_boot", [True, False])
def test_a_uefi_machine_reports_its_secure_boot_state(tmp_path: Path, secure_boot: bool) -> None:
    spec = MachineSpec("n1", uefi=True, secure_boot=secure_boot)
    assert boot_of(tmp_path, spec) == {"current_boot_mode": "uefi",
                                       "pxe_interface": spec.pxe_mac,
                                       "secure_boot": secure_boot}


def test_the_variable_is_written_as_efivarfs_shows_it(tmp_path: Path) -> None:
    root = build_tree(tmp_path / "n1", MachineSpec("n1", uefi=True, secure_boot=True))
    assert SECURE_BOOT_VAR == "sys/firmware/efi/efivars/" + system.SECURE_BOOT_VAR
    assert (root / SECURE_BOOT_VAR).read_bytes() == b"\x06\x00\x00\x00\x01"


def test_a_bios_machine_has_no_efi_tree_whatever_secure_boot_says(tmp_path: Path) -> None:
    spec = MachineSpec("n1", secure_boot=True)
    assert boot_of(tmp_path, spec)["current_boot_mode"] == "bios"
    assert boot_of(tmp_path, spec)["secure_boot"] is False
    assert not (tmp_path / "n1/sys/firmware/efi").exists()
