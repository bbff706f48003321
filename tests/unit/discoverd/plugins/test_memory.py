"""`memory`: memory_mb from the inventory's physical_mb."""

from __future__ import annotations

import pytest

from ironsight.discoverd.plugins.base import HookError
from ironsight.discoverd.plugins.memory import Memory

from ..helpers import agent_report, context


def test_memory_mb_is_the_physical_memory() -> None:
    ctx = context(agent_report(memory_mb=24576))
    Memory(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {"memory_mb": 24576}


def test_a_report_without_physical_mb_is_refused_in_the_first_step() -> None:
    report = agent_report()
    del report["inventory"]["memory"]["physical_mb"]
    ctx = context(report)
    with pytest.raises(HookError, match=r"lacks inventory\.memory\.physical_mb"):
        Memory(ctx.conf).before_processing(ctx)


def test_a_ramdisks_error_report_is_left_to_ramdisk_error() -> None:
    report = agent_report(error="disk on fire")
    del report["inventory"]["memory"]["physical_mb"]
    ctx = context(report)
    Memory(ctx.conf).before_processing(ctx)  # does not raise


def test_a_node_that_has_memory_mb_keeps_it() -> None:
    ctx = context(agent_report(memory_mb=2048), node={"properties": {"memory_mb": 1024}})
    Memory(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {}


def test_overwrite_existing_replaces_memory_mb() -> None:
    ctx = context(agent_report(memory_mb=2048), node={"properties": {"memory_mb": 1024}},
                  processing={"overwrite_existing": "true"})
    Memory(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {"memory_mb": 2048}
