"""`ramdisk_error`: a ramdisk that reports an error ends the introspection with it."""

from __future__ import annotations

import pytest

from ironsight.discoverd.plugins.base import ReportedError
from ironsight.discoverd.plugins.ramdisk_error import RamdiskError

from ..helpers import agent_report, context, legacy_report


def run(report: dict[str, object]) -> None:
    ctx = context(report)
    RamdiskError(ctx.conf).before_processing(ctx)


def test_reported_error_is_refused_with_its_message_alone() -> None:
    with pytest.raises(ReportedError) as raised:
        run(agent_report(error="disk on fire"))
    assert str(raised.value) == "Ramdisk reported error: disk on fire"


def test_legacy_reported_error_is_refused_too() -> None:
    with pytest.raises(ReportedError, match="Ramdisk reported error: no IPMI"):
        run(legacy_report(error="no IPMI"))


@pytest.mark.parametrize("error", [None, ""])
def test_report_without_an_error_passes(error: str | None) -> None:
    ctx = context(agent_report(error=error))
    RamdiskError(ctx.conf).before_processing(ctx)
    assert ctx.changes.properties == {} and ctx.processed_data() == ctx.data
