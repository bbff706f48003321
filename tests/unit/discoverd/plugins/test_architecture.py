"""`architecture`: cpu_arch from the inventory."""

from __future__ import annotations

import pytest

from ironsight.discoverd.plugins.architecture import Architecture
from ironsight.discoverd.plugins.base import HookError

from ..helpers import agent_report, context


def test_cpu_arch_is_the_architecture() -> None:
    ctx = context(agent_report(arch="aarch64"))
    Architecture(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {"cpu_arch": "aarch64"}


def test_a_report_without_it_is_refused_in_the_first_step() -> None:
    ctx = context(agent_report(arch=None))
    with pytest.raises(HookError, match=r"lacks inventory\.cpu\.architecture"):
        Architecture(ctx.conf).before_processing(ctx)


def test_a_ramdisks_error_report_is_left_to_ramdisk_error() -> None:
    ctx = context(agent_report(arch=None, error="no disks"))
    Architecture(ctx.conf).before_processing(ctx)  # does not raise
