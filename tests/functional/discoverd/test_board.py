"""`GET /v1/board` with the real services: the running attempts by the step each waits
for, the quiet the longest first, against the learned deadlines (board.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ironsight.discoverd.service import DiscoverdService

from .conftest import BOTH_DBS
from .helpers import make_node, start
from .test_deadlines import FAST, fleet, stalled


async def board(di: httpx.AsyncClient, **params: str) -> dict[str, Any]:
    resp = await di.get("/v1/board", params=params)
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


async def test_no_running_attempt_is_an_empty_board(di: httpx.AsyncClient) -> None:
    assert await board(di) == {"running": 0, "steps": [], "attempts": []}


@BOTH_DBS
@FAST
async def test_the_board_counts_each_step_and_lists_the_quiet_the_longest_first(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    await fleet(bm, di, di_service)  # deadlines of 2 s per step
    at_loader = await stalled(bm, di, di_service, ("dhcp_request", "dhcp_lease"), ago=60)
    at_kernel = await stalled(bm, di, di_service,
                              ("dhcp_request", "dhcp_lease", "loader_fetched",
                               "script_fetched"), ago=1)
    found = await board(di)
    assert found["running"] == 2
    assert found["steps"] == [{"step": "loader_fetched", "count": 1, "overdue": 1},
                              {"step": "kernel_fetched", "count": 1, "overdue": 0}]
    first, second = found["attempts"]  # the quiet the longest first
    assert (first["uuid"], first["step"], first["overdue"]) == (at_loader.uuid,
                                                               "loader_fetched", True)
    assert first["quiet_seconds"] >= 60 and first["deadline_seconds"] == 2.0
    assert (second["uuid"], second["step"], second["overdue"]) == (at_kernel.uuid,
                                                                  "kernel_fetched", False)


async def test_an_attempt_waiting_for_no_boot_step_is_counted_by_its_state(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": "false"})
    assert resp.status_code == 202, resp.text
    found = await board(di)
    assert found["steps"] == [{"step": "waiting", "count": 1, "overdue": 0}]
    [attempt] = found["attempts"]
    assert (attempt["uuid"], attempt["deadline_seconds"]) == (m.uuid, None)


async def test_the_limit_cuts_the_list_not_the_counts(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    for _ in range(3):
        await start(di, (await make_node(bm)).uuid)
    found = await board(di, limit="1")
    assert found["running"] == 3 and len(found["attempts"]) == 1
    assert sum(s["count"] for s in found["steps"]) == 3


@pytest.mark.parametrize("limit", ["0", "x", "1001"])
async def test_a_bad_limit_is_400_naming_it(di: httpx.AsyncClient, limit: str) -> None:
    resp = await di.get("/v1/board", params={"limit": limit})
    assert resp.status_code == 400
    assert "limit" in resp.text
