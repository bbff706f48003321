"""`raid-device`: a root device hint for the one disk new since the previous inspection."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import ProcessingContext
from ironsight.discoverd.plugins.raid_device import RaidDevice, RaidDeviceInspector

from ..helpers import agent_report, context


def report(*serials: str) -> dict[str, Any]:
    data = agent_report(disks_gib=tuple(100 for _ in serials))
    for disk, serial in zip(data["inventory"]["disks"], serials, strict=True):
        disk["serial"] = serial
    return data


def run(current: dict[str, Any], previous: dict[str, Any] | None,
        properties: dict[str, Any] | None = None) -> ProcessingContext:
    ctx = context(current, node={"uuid": "n1", "properties": dict(properties or {})})
    ctx.previous = previous
    RaidDevice(ctx.conf).before_update(ctx)
    return ctx


def test_asks_for_the_previous_report() -> None:
    assert RaidDevice.uses_previous_report is True


def test_the_one_new_disk_becomes_the_root_device_hint() -> None:
    ctx = run(report("SDA", "SDB", "RAID1"), report("SDA", "SDB"))
    assert ctx.changes.properties == {"root_device": {"serial": "RAID1"}}


def test_several_new_disks_change_nothing() -> None:
    assert run(report("SDA", "R1", "R2"), report("SDA")).changes.properties == {}


def test_no_new_disk_changes_nothing() -> None:
    assert run(report("SDA", "SDB"), report("SDA", "SDB")).changes.properties == {}


def test_without_a_previous_report_nothing_changes() -> None:
    assert run(report("SDA"), None).changes.properties == {}


def test_a_previous_report_without_disks_makes_every_disk_new() -> None:
    previous = report()
    assert run(report("R1"), previous).changes.properties == {"root_device": {"serial": "R1"}}


def test_a_node_with_a_root_device_hint_is_left_alone() -> None:
    ctx = run(report("SDA", "R1"), report("SDA"), {"root_device": {"name": "/dev/sda"}})
    assert ctx.changes.properties == {}


def test_disks_without_a_serial_are_not_counted() -> None:
    current = report("SDA", "R1")
    current["inventory"]["disks"].append({"name": "/dev/sdz", "size": 1})
    assert run(current, report("SDA")).changes.properties == {"root_device": {"serial": "R1"}}


def test_inspector_era_name_does_the_same() -> None:
    ctx = context(report("SDA", "R1"), node={"properties": {}})
    ctx.previous = report("SDA")
    RaidDeviceInspector(ctx.conf).before_update(ctx)
    assert RaidDeviceInspector.name == "raid_device"
    assert ctx.changes.properties == {"root_device": {"serial": "R1"}}
