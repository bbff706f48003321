"""`root_disk_selection`: the root disk (root device hints first) and `local_gb` from it."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.discoverd.plugins.base import HookError, ProcessingContext
from ironsight.discoverd.plugins.facts import ROOT_DISK, RootDisk
from ironsight.discoverd.plugins.root_disk import RootDiskSelection

from ..helpers import GIB, agent_report, context, legacy_report

# sda: 100 GiB SSD (SER0, MODEL0); sdb: 200 GiB rotational (SER1); sdc: 300 GiB rotational
DISKS = (100, 200, 300)


def run(report: dict[str, Any], hints: Any = None, **processing: str) -> ProcessingContext:
    node = {"properties": {"root_device": hints} if hints is not None else {}}
    ctx = context(report, node=node, processing=processing)
    RootDiskSelection(ctx.conf).before_update(ctx)
    return ctx


def root(report: dict[str, Any], hints: Any = None, **processing: str) -> RootDisk:
    return run(report, hints, **processing).get(ROOT_DISK)


def test_the_ramdisk_root_disk_is_used_without_hints() -> None:
    report = agent_report(disks_gib=DISKS)
    report["root_disk"] = report["inventory"]["disks"][1]
    assert root(report).disk == report["inventory"]["disks"][1]


def test_local_gb_is_the_size_in_gib_minus_one() -> None:
    assert root(agent_report(disks_gib=(20,))).local_gb == 19


def test_local_gb_is_the_whole_size_without_partitioning_spacing() -> None:
    assert root(agent_report(disks_gib=(20,)), disk_partitioning_spacing="false").local_gb == 20


def test_disk_under_a_gib_gives_zero_not_less() -> None:
    report = agent_report()
    report["root_disk"] = {"name": "/dev/tiny", "size": GIB // 2}
    assert root(report).local_gb == 0


def test_no_root_disk_is_diskless() -> None:
    assert root(agent_report(disks_gib=())) == RootDisk(None, 0)


@pytest.mark.parametrize("hints", [
    {"name": "/dev/sdb"},
    {"serial": "ser1"},
    {"size": 200},
    {"size": "200"},
    {"rotational": "true", "vendor": "acme", "model": "MODEL1"},
    {"serial": "SER1", "unknown_hint": "ignored"},
], ids=["name", "serial-any-case", "size", "size-as-string", "several", "unknown-ignored"])
def test_root_device_hints_pick_the_first_disk_matching_them_all(hints: dict[str, Any]) -> None:
    assert root(agent_report(disks_gib=DISKS), hints).disk["name"] == "/dev/sdb"  # type: ignore[index]


def test_rotational_false_hint_picks_a_solid_state_disk() -> None:
    report = agent_report(disks_gib=DISKS)
    report["root_disk"] = report["inventory"]["disks"][2]
    assert root(report, {"rotational": False}).disk["name"] == "/dev/sda"  # type: ignore[index]


def test_hints_win_over_the_ramdisk_root_disk() -> None:
    report = agent_report(disks_gib=DISKS)  # root_disk: sda
    assert root(report, {"size": 300}).local_gb == 299


def test_hints_matching_no_disk_are_an_error_naming_them() -> None:
    with pytest.raises(HookError, match=r"No disks satisfied root device hints \{'serial': 'NOPE'"):
        run(agent_report(disks_gib=DISKS), {"serial": "NOPE"})


def test_hints_that_are_not_an_object_are_an_error() -> None:
    with pytest.raises(HookError, match="Root device hints must be an object"):
        run(agent_report(disks_gib=DISKS), "/dev/sda")


def test_size_hint_that_is_not_a_number_is_an_error() -> None:
    with pytest.raises(HookError, match="Root device hint 'size' must be a whole number of GiB"):
        run(agent_report(disks_gib=DISKS), {"size": "big"})


def test_legacy_report_keeps_its_own_local_gb_whatever_the_hints() -> None:
    assert root(legacy_report(local_gb=42), {"serial": "NOPE"}) == RootDisk(None, 42)


def test_legacy_report_with_a_null_local_gb_is_diskless() -> None:
    assert root(legacy_report(local_gb=None)) == RootDisk(None, 0)


def test_processed_data_shows_the_root_disk_and_local_gb() -> None:
    report = agent_report(disks_gib=(20,))
    data = run(report).processed_data()
    assert (data["root_disk"], data["local_gb"]) == (report["root_disk"], 19)


def test_processed_data_of_a_diskless_node_has_no_root_disk() -> None:
    data = run(agent_report(disks_gib=())).processed_data()
    assert (data["root_disk"], data["local_gb"]) == (None, 0)  # the report's own null
