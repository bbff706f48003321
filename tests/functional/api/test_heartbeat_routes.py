"""`POST /v1/heartbeat` routed as Ironic routes it: the node in the path or, as `node_ident`,
in the body; a node named by UUID looked up before the token is asked for."""

from __future__ import annotations

import httpx
import pytest

from .helpers import create_node, fault

pytestmark = pytest.mark.functional

BODY = {"callback_url": "http://192.0.2.10:9999", "agent_version": "9.0.0"}
TOKEN_REQUIRED = "Agent token is required for heartbeat processing."


async def test_the_node_may_be_named_in_the_body(api: httpx.AsyncClient) -> None:
    node = (await create_node(api))["uuid"]
    resp = await api.post("/v1/heartbeat", json={**BODY, "node_ident": node})
    assert resp.status_code == 400
    assert fault(resp) == TOKEN_REQUIRED


async def test_a_heartbeat_naming_no_node_is_refused(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/heartbeat", json=BODY)
    assert resp.status_code == 400
    assert fault(resp) == "Missing mandatory parameter: node_ident"


async def test_an_unknown_node_uuid_is_404_before_the_token(api: httpx.AsyncClient) -> None:
    missing = "11111111-2222-3333-4444-555555555555"
    resp = await api.post(f"/v1/heartbeat/{missing}", json=BODY)
    assert resp.status_code == 404
    assert fault(resp) == f"Node {missing} could not be found."


async def test_a_node_name_is_not_probed_without_a_token(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/heartbeat/no-such-name", json=BODY)
    assert resp.status_code == 400
    assert fault(resp) == TOKEN_REQUIRED
