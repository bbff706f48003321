"""discoverd's API basics: version documents, version negotiation, error bodies."""

from __future__ import annotations

import uuid

import httpx
import pytest

from .helpers import error_message

X_VERSION = "X-OpenStack-Ironic-Inspector-API-Version"
STD_VERSION = "OpenStack-API-Version"


async def test_root_lists_one_current_version(di: httpx.AsyncClient) -> None:
    resp = await di.get("/")
    assert resp.status_code == 200
    assert resp.json() == {"versions": [{
        "id": "1.18", "status": "CURRENT",
        "links": [{"rel": "self", "href": "http://di.test/v1"}]}]}
    assert resp.headers["X-OpenStack-Ironic-Inspector-API-Minimum-Version"] == "1.0"
    assert resp.headers["X-OpenStack-Ironic-Inspector-API-Maximum-Version"] == "1.18"


async def test_v1_lists_introspection_and_continue_resources(di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1")
    assert resp.status_code == 200
    assert resp.json() == {"resources": [
        {"name": "introspection",
         "links": [{"rel": "self", "href": "http://di.test/v1/introspection"}]},
        {"name": "continue", "links": [{"rel": "self", "href": "http://di.test/v1/continue"}]},
    ]}


async def test_no_version_header_means_latest(di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1")
    assert resp.headers[X_VERSION] == "1.18"
    assert resp.headers[STD_VERSION] == "baremetal-introspection 1.18"


@pytest.mark.parametrize("headers", [
    {X_VERSION: "1.2"},
    {STD_VERSION: "baremetal-introspection 1.2"},
    {STD_VERSION: "compute 2.1, baremetal-introspection 1.2"},
], ids=["x-header", "standard-header", "standard-header-in-a-list"])
async def test_requested_version_is_honoured(di: httpx.AsyncClient,
                                             headers: dict[str, str]) -> None:
    resp = await di.get("/v1", headers=headers)
    assert resp.status_code == 200
    assert resp.headers[X_VERSION] == "1.2"
    assert resp.headers[STD_VERSION] == "baremetal-introspection 1.2"
    # and, as upstream's server, only range-checked: abort (1.3) is reached at 1.2
    resp = await di.post(f"/v1/introspection/{uuid.uuid4()}/abort", headers=headers)
    assert resp.status_code == 404, resp.text


@pytest.mark.parametrize("version", ["1.19", "2.0", "0.9", "1.100"])
@pytest.mark.parametrize("header", [X_VERSION, STD_VERSION])
async def test_version_out_of_range_is_406(di: httpx.AsyncClient, header: str,
                                           version: str) -> None:
    value = version if header == X_VERSION else f"baremetal-introspection {version}"
    resp = await di.get("/v1", headers={header: value})
    assert resp.status_code == 406
    assert "1.0 to 1.18" in error_message(resp)
    assert resp.headers["X-OpenStack-Ironic-Inspector-API-Maximum-Version"] == "1.18"


@pytest.mark.parametrize("version", ["abc", "1", "1.x", "1.2.3", "", " .1"])
async def test_malformed_version_is_400(di: httpx.AsyncClient, version: str) -> None:
    resp = await di.get("/v1", headers={X_VERSION: version})
    assert resp.status_code == 400
    assert "Malformed API version" in error_message(resp)


async def test_unknown_introspection_is_404_with_error_body(di: httpx.AsyncClient) -> None:
    node = str(uuid.uuid4())
    resp = await di.get(f"/v1/introspection/{node}")
    assert resp.status_code == 404
    assert error_message(resp) == f"Could not find node {node} in cache"


async def test_unknown_node_name_is_404(di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1/introspection/no-such-node")
    assert resp.status_code == 404
    assert "no-such-node" in error_message(resp)


async def test_unknown_path_and_wrong_method_use_the_error_body(di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1/nothing-here")
    assert resp.status_code == 404
    assert "/v1/nothing-here" in error_message(resp)
    resp = await di.delete("/v1/continue")
    assert resp.status_code == 405
    assert "DELETE" in error_message(resp)


async def test_members_lists_this_replica_alive_and_not_serving_pxe(
        di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1/members")
    assert resp.status_code == 200
    (member,) = resp.json()["members"]
    assert member["alive"] is True
    assert member["pxe"] is None
    assert member["name"] == f"{member['hostname']}:{member['pid']}"
