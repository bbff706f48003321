"""`cpus`: the cpus property from the inventory's CPU count."""

from __future__ import annotations

from ironsight.discoverd.plugins.cpus import Cpus

from ..helpers import agent_report, context


def test_cpus_is_the_cpu_count() -> None:
    ctx = context(agent_report(cpus=48))
    Cpus(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {"cpus": 48}


def test_no_cpu_count_changes_nothing() -> None:
    ctx = context(agent_report(cpus=None))
    Cpus(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {}


def test_a_count_of_zero_changes_nothing() -> None:
    ctx = context(agent_report(cpus=0))
    Cpus(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {}
