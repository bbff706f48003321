"""The lab's faults as nft rules (lab/faults.py), and which VM may take which fault; the
rules' effect on real traffic is tests/functional/test_lab_faults.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from ironsight.lab import faults
from ironsight.lab import firmware as fw
from ironsight.lab.state import STATE_FILE, Lab, LabError, default_vms, write_json

MAC = "52:54:00:AA:00:01"


def test_no_dhcp_drops_dhcp_and_dhcpv6_from_the_vms_mac() -> None:
    assert faults.rule("no-dhcp", MAC, 5051) == (
        "ether saddr 52:54:00:aa:00:01 udp dport { 67, 547 } drop")


def test_a_request_line_longer_than_one_match_is_matched_in_pieces() -> None:
    rule = faults.rule("no-ramdisk", MAC, 5051)
    first, rest = b"GET /pxe/initram".hex(), b"fs ".hex()
    assert f"tcp dport 5051 @ih,0,128 0x{first} @ih,128,24 0x{rest} drop" in rule


def test_no_kernel_matches_the_kernels_request_line_with_its_space() -> None:
    assert f"@ih,0,128 0x{b'GET /pxe/vmlinuz'.hex()} @ih,128,8 0x20 drop" in faults.rule(
        "no-kernel", MAC, 5051)


def test_no_agent_drops_and_wrong_callback_resets_the_ramdisks_calls() -> None:
    calls = f"tcp dport 5051 @ih,0,72 0x{b'POST /v1/'.hex()}"
    assert faults.rule("no-agent", MAC, 5051).endswith(f"{calls} drop")
    assert faults.rule("wrong-callback", MAC, 5051).endswith(f"{calls} reject with tcp reset")


def test_the_ruleset_replaces_the_whole_table() -> None:
    script = faults.ruleset({MAC: "no-dhcp"}, 5051)
    assert script.startswith("table inet ironsight_lab_faults\n"
                             "delete table inet ironsight_lab_faults\n")
    assert script.count("drop") == 1
    assert "drop" not in faults.ruleset({}, 5051)


def test_an_unknown_fault_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault 'no-disk'"):
        faults.rule("no-disk", MAC, 5051)


def lab_with(tmp_path: Path, **kinds: str) -> Lab:
    vms = default_vms(2, firmware=(fw.BIOS, fw.UEFI))
    write_json(tmp_path / STATE_FILE, {"network": {"namespace": "t"},
                                       "vms": [vm.as_dict() for vm in vms],
                                       "faults": dict(kinds)})
    return Lab(tmp_path)


def test_inject_names_the_vms_when_the_vm_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(LabError, match=r"no VM named 'lab-9' in the lab \(lab-1, lab-2\)"):
        faults.inject(lab_with(tmp_path), "lab-9", "no-dhcp")


def test_inject_refuses_boot_file_faults_for_a_tftp_boot(tmp_path: Path) -> None:
    with pytest.raises(LabError, match="lab-2 fetches its kernel and initramfs over TFTP"):
        faults.inject(lab_with(tmp_path), "lab-2", "no-kernel")


def test_inject_keeps_the_other_vms_faults_and_clear_removes_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    applied: list[dict[str, str]] = []
    monkeypatch.setattr(faults, "apply", lambda net, found, port: applied.append(dict(found)))
    lab = lab_with(tmp_path, **{"lab-2": "no-agent"})
    assert faults.inject(lab, "lab-1", "no-kernel") == {"lab-1": "no-kernel",
                                                         "lab-2": "no-agent"}
    assert faults.inject(lab, "lab-2", "clear") == {"lab-1": "no-kernel"}
    assert applied[-1] == {lab.vm("lab-1").spec.mac: "no-kernel"}
    assert Lab(tmp_path).state["faults"] == {"lab-1": "no-kernel"}  # saved
