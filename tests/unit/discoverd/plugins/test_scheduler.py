"""`scheduler`: the four scheduling properties, as integers (and cpu_arch)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ironsight.discoverd.plugins.base import HookError, ProcessingContext
from ironsight.discoverd.plugins.facts import ROOT_DISK, SCHEDULING, RootDisk, Scheduling
from ironsight.discoverd.plugins.scheduler import Scheduler

from ..helpers import agent_report, context, legacy_report


def ready(report: dict[str, Any], *, local_gb: int = 99, properties: dict[str, Any] | None = None,
          **processing: str) -> ProcessingContext:
    """The context as the scheduler finds it: root_disk_selection has run."""
    ctx = context(report, node={"properties": properties or {}}, processing=processing)
    ctx.set(ROOT_DISK, RootDisk(None, local_gb))
    return ctx


def update(report: dict[str, Any], **kwargs: Any) -> ProcessingContext:
    ctx = ready(report, **kwargs)
    Scheduler(ctx.conf).before_update(ctx)
    return ctx


def check(report: dict[str, Any]) -> None:
    ctx = context(report)
    Scheduler(ctx.conf).before_processing(ctx)


def test_requires_the_root_disk_and_provides_scheduling() -> None:
    assert (Scheduler.requires, Scheduler.provides) == ((ROOT_DISK,), (SCHEDULING,))


def test_sets_the_four_properties_local_gb_from_the_root_disk() -> None:
    ctx = update(agent_report(cpus=8, arch="aarch64", memory_mb=16384), local_gb=77)
    assert ctx.changes.properties == {"cpus": 8, "cpu_arch": "aarch64", "memory_mb": 16384,
                                      "local_gb": 77}


def test_numbers_sent_as_strings_are_set_as_integers() -> None:
    ctx = update(agent_report(cpus="8", memory_mb="2048"))
    assert (ctx.changes.properties["cpus"], ctx.changes.properties["memory_mb"]) == (8, 2048)


def test_memory_comes_from_the_total_bytes_without_physical_mb() -> None:
    report = agent_report()
    report["inventory"]["memory"] = {"total": 4 * 1024**3}
    assert update(report).changes.properties["memory_mb"] == 4096


def test_legacy_report_fields_are_read_from_its_inventory() -> None:
    ctx = update(legacy_report(cpus=2, cpu_arch="x86_64", memory_mb=4096), local_gb=40)
    assert ctx.changes.properties == {"cpus": 2, "cpu_arch": "x86_64", "memory_mb": 4096,
                                      "local_gb": 40}


def test_existing_properties_are_kept() -> None:
    ctx = update(agent_report(cpus=8), properties={"cpus": 2, "cpu_arch": ""})
    assert "cpus" not in ctx.changes.properties
    assert ctx.changes.properties["cpu_arch"] == "x86_64"  # empty counts as missing


def test_overwrite_existing_replaces_them() -> None:
    ctx = update(agent_report(cpus=8), properties={"cpus": 2}, overwrite_existing="true")
    assert ctx.changes.properties["cpus"] == 8


def test_a_property_that_already_has_the_value_is_not_changed() -> None:
    ctx = update(agent_report(cpus=8), properties={"cpus": 8}, overwrite_existing="true")
    assert "cpus" not in ctx.changes.properties


def test_processed_data_shows_the_four_values() -> None:
    data = update(agent_report(cpus=8), local_gb=50).processed_data()
    assert (data["cpus"], data["cpu_arch"], data["memory_mb"], data["local_gb"]) == (
        8, "x86_64", 8192, 50)


def test_the_fact_holds_what_was_found_even_when_properties_are_kept() -> None:
    ctx = update(agent_report(cpus=8), properties={"cpus": 2})
    assert ctx.get(SCHEDULING) == Scheduling(cpus=8, cpu_arch="x86_64", memory_mb=8192,
                                             local_gb=99)


@pytest.mark.parametrize(("edit", "field"), [
    ({"cpus": None}, "inventory.cpu.count"),
    ({"arch": ""}, "inventory.cpu.architecture"),
    ({"memory_mb": None}, "inventory.memory.physical_mb"),
])
def test_a_missing_field_is_refused_before_the_lookup_naming_it(edit: dict[str, Any],
                                                                field: str) -> None:
    with pytest.raises(HookError, match=f"^The ramdisk data lacks {re.escape(field)}$"):
        check(agent_report(**edit))


def test_every_missing_field_is_named_at_once() -> None:
    with pytest.raises(HookError) as raised:
        check(agent_report(cpus=None, arch=None))
    assert str(raised.value) == ("The ramdisk data lacks inventory.cpu.count, "
                                 "inventory.cpu.architecture")


def test_a_report_of_a_ramdisk_error_is_left_to_ramdisk_error() -> None:
    check(agent_report(cpus=None, error="disk on fire"))  # does not raise


def test_a_reapplied_report_is_checked_again() -> None:
    with pytest.raises(HookError, match=r"lacks inventory\.cpu\.count"):
        update(agent_report(cpus=None))
