"""The lab's service configuration: its chain of processing hooks turns the lab switch's
LLDP (lab/lldp.py) into each VM's port `local_link_connection`; and what `up` refuses to
start with. (The whole path, with real VMs, is tests/e2e/test_lab_inspection.py.)"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from ironsight.common import config
from ironsight.discoverd.plugins import base
from ironsight.discoverd.plugins.local_link_connection import link_of
from ironsight.lab import firmware, lifecycle, lldp
from ironsight.lab.lifecycle import LLDP_HOOKS, service_config
from ironsight.lab.network import LabNetwork
from ironsight.lab.state import LabError, LabOptions, LabVm, default_vms

from ..discoverd.declared_hooks import with_declared
from ..discoverd.lldp_frames import reported

ETHERNET_HEADER = 14


def lab_conf(tmp_path: Path) -> config.Config:
    path = tmp_path / "serve.conf"
    path.write_text(service_config(tmp_path, LabNetwork(), tmp_path / "ramdisk"))
    return config.load(path)


def test_the_lab_runs_the_lldp_hooks_after_the_default_chain(tmp_path: Path) -> None:
    hooks = lab_conf(tmp_path).processing.processing_hooks
    assert hooks == [*config.ProcessingSection().processing_hooks, *LLDP_HOOKS]


def test_the_labs_chain_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # this tree's hooks, which an older install of the package lacks (declared_hooks.py)
    monkeypatch.setattr(base, "entry_points", with_declared(importlib.metadata.entry_points))
    assert [h.name for h in base.load_hooks(lab_conf(tmp_path))][-2:] == list(LLDP_HOOKS)


def test_the_lab_switchs_frame_gives_a_vm_port_its_link() -> None:
    bridge = LabNetwork().bridge_mac
    frame = lldp.frame(lldp.Port(bridge, "tap2"))
    assert link_of(reported(frame[ETHERNET_HEADER:])) == (
        {"switch_id": bridge, "port_id": "tap2", "switch_info": lldp.SYSTEM_NAME}, [])


# --- what `up` refuses before it creates anything -------------------------------------------

@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A root machine with every program; `unavailable[kind]` makes a firmware kind
    unavailable for that reason."""
    unavailable: dict[str, str] = {}
    monkeypatch.setattr(lifecycle.os, "geteuid", lambda: 0)
    monkeypatch.setattr(lifecycle.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(firmware, "unavailable", lambda kind: unavailable.get(kind))
    return unavailable


def up_with(tmp_path: Path, vms: list[LabVm]) -> None:
    lifecycle.up(LabOptions(state_dir=tmp_path / "lab", vms=vms), log=lambda _: None)


def test_an_unavailable_firmware_stops_up_before_anything_is_created(
        host: dict[str, str], tmp_path: Path) -> None:
    host["uefi-secureboot"] = "OVMF's /usr/share/OVMF/OVMF_CODE_4M.secboot.fd is missing"
    with pytest.raises(LabError, match=r"the uefi-secureboot VMs cannot run here: OVMF's "
                                       r"/usr/share/OVMF/OVMF_CODE_4M.secboot.fd is missing"):
        up_with(tmp_path, default_vms(2, firmware=["bios", "uefi-secureboot"]))
    assert not (tmp_path / "lab").exists()


def test_an_unavailable_firmware_no_vm_uses_is_no_obstacle(
        host: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host["bios"] = "QEMU's iPXE ROM is missing"
    # the next check after the host's: a lab already up stops `up` there
    monkeypatch.setattr(lifecycle.network, "exists", lambda net: True)
    with pytest.raises(LabError, match="a lab is already up"):
        up_with(tmp_path, default_vms(2, firmware=["uefi"]))


def test_ipv6_only_vms_without_nft_stop_up(host: dict[str, str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle.network, "nft_unavailable",
                        lambda: "nft is not installed (apt-get install nftables)")
    with pytest.raises(LabError, match=r"the IPv6-only VMs cannot run here: nft is not "
                                       r"installed \(apt-get install nftables\)"):
        up_with(tmp_path, default_vms(1, firmware=["uefi"], ipv6_only=1))
