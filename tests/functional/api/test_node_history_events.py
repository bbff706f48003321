"""`POST /v1/nodes/{node}/history` (ironsight only, admin): another service's event in the
node's history, as discoverd records which inspection rules matched and what they changed."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ironsight.baremetal.api.app import ACCESS
from ironsight.common.auth.identity import Role

from .helpers import create_node


async def test_an_event_posted_is_in_the_nodes_history(api: httpx.AsyncClient) -> None:
    node = await create_node(api, name="hist-1")
    resp = await api.post(f"/v1/nodes/{node['uuid']}/history", json={
        "event": "Inspection rules matched: r1: add trait CUSTOM_X", "severity": "INFO",
        "event_type": "inspection"})
    assert resp.status_code == 201, resp.text
    events = (await api.get("/v1/nodes/hist-1/history",
                            params={"detail": "true"})).json()["history"]
    assert [(e["event"], e["event_type"], e["severity"]) for e in events][-1] == (
        "Inspection rules matched: r1: add trait CUSTOM_X", "inspection", "INFO")


@pytest.mark.parametrize(("body", "field"), [
    ({"event": ""}, "event"), ({"event": 3}, "event"), ({"event": "x" * 16385}, "event"),
    ({"event": "e", "severity": "LOUD"}, "severity"),
    ({"event": "e", "event_type": "x" * 33}, "event_type"),
    ({"event": "e", "user": "someone"}, "user"), ([], "body")])
async def test_a_bad_event_is_400_and_not_recorded(api: httpx.AsyncClient, body: Any,
                                                   field: str) -> None:
    node = await create_node(api)
    before = (await api.get(f"/v1/nodes/{node['uuid']}/history")).json()["history"]
    resp = await api.post(f"/v1/nodes/{node['uuid']}/history", json=body)
    assert resp.status_code == 400
    assert field in resp.json()["error_message"]
    assert (await api.get(f"/v1/nodes/{node['uuid']}/history")).json()["history"] == before


async def test_an_event_for_an_unknown_node_is_404(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes/no-such-node/history", json={"event": "e"})
    assert resp.status_code == 404


def test_posting_history_needs_an_admin() -> None:
    assert ACCESS.required("POST", "/v1/nodes/n1/history") is Role.ADMIN
    assert ACCESS.required("GET", "/v1/nodes/n1/history") is Role.READER
