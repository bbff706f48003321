"""A late `error` report (a second ramdisk, a retry of one that had already been answered)
that arrives while the accepted report is being processed: refused with 400, recorded in the
log, and the introspection ends as the accepted report says, with its data."""

from __future__ import annotations

import httpx
import pytest

from .conftest import BOTH_DBS
from .helpers import (
    error_message,
    ipa_payload,
    make_node,
    node,
    settled_power,
    start,
    wait_finished,
)


@BOTH_DBS
async def test_a_late_error_report_is_refused_and_the_accepted_one_finishes(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    good = await di.post("/v1/continue", json=ipa_payload(m, cpus=16))
    late = await di.post("/v1/continue", json={**ipa_payload(m, cpus=2),
                                                "error": "the ramdisk broke"})
    assert good.status_code == 200
    assert late.status_code == 400
    assert "it does not accept ramdisk data now" in error_message(late)
    doc = await wait_finished(di, m.uuid)
    assert (doc["state"], doc["error"]) == ("finished", None)
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 16
    assert f"Node {m.uuid}: ramdisk report ignored" in caplog.text
