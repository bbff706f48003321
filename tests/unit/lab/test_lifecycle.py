"""The lab's service configuration: its chain of processing hooks turns the lab switch's
LLDP (lab/lldp.py) into each VM's port `local_link_connection`. (The whole path, with real
VMs, is tests/e2e/test_lab_inspection.py.)"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from ironsight.common import config
from ironsight.discoverd.plugins import base
from ironsight.discoverd.plugins.local_link_connection import link_of
from ironsight.lab import lldp
from ironsight.lab.lifecycle import LLDP_HOOKS, service_config
from ironsight.lab.network import LabNetwork

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
