"""Reapply: `POST /v1/introspection/{node}/data/unprocessed` runs the hooks again on stored
(or posted) raw data."""

from __future__ import annotations

import httpx
import pytest

from .helpers import (
    error_message,
    introspect,
    ipa_payload,
    make_node,
    node,
    settled_power,
    start,
    status,
    wait_finished,
    when,
)

OVERWRITE = pytest.mark.discoverd_conf(processing={"overwrite_existing": "true"})


async def _reapply(di: httpx.AsyncClient, ident: str, **kwargs: object) -> httpx.Response:
    return await di.post(f"/v1/introspection/{ident}/data/unprocessed", **kwargs)  # type: ignore[arg-type]


@OVERWRITE
async def test_reapply_stored_data_sets_properties_again(bm: httpx.AsyncClient,
                                                         di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    first = await introspect(di, m, ipa_payload(m, cpus=8))
    resp = await bm.patch(f"/v1/nodes/{m.uuid}", json=[
        {"op": "replace", "path": "/properties/cpus", "value": 1}])
    assert resp.status_code == 200, resp.text
    resp = await _reapply(di, m.uuid)
    assert resp.status_code == 202
    assert resp.json() == {}
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "finished" and doc["error"] is None
    assert when(doc, "finished_at") >= when(first, "finished_at")
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 8
    await settled_power(bm, m.uuid, "power off")  # no power action


@OVERWRITE
async def test_reapply_with_new_data_in_the_body(bm: httpx.AsyncClient,
                                                 di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, cpus=8))
    new = ipa_payload(m, cpus=16, memory_mb=32768)
    resp = await _reapply(di, m.uuid, json=new)
    assert resp.status_code == 202, resp.text
    assert (await wait_finished(di, m.uuid))["state"] == "finished"
    props = (await node(bm, m.uuid))["properties"]
    assert props["cpus"] == 16 and props["memory_mb"] == 32768
    assert (await di.get(f"/v1/introspection/{m.uuid}/data/unprocessed")).json() == new
    assert (await di.get(f"/v1/introspection/{m.uuid}/data")).json()["cpus"] == 16


async def test_reapply_after_an_error_can_finish(bm: httpx.AsyncClient,
                                                 di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"root_device": {"serial": "NOPE"}})
    await start(di, m.uuid)
    # accepted: the node's hints are applied (and fail) after the answer
    assert (await di.post("/v1/continue", json=ipa_payload(m))).status_code == 200
    assert (await wait_finished(di, m.uuid))["state"] == "error"
    resp = await bm.patch(f"/v1/nodes/{m.uuid}", json=[
        {"op": "remove", "path": "/properties/root_device"}])
    assert resp.status_code == 200, resp.text
    assert (await _reapply(di, m.uuid)).status_code == 202
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "finished" and doc["error"] is None
    assert (await node(bm, m.uuid))["properties"]["local_gb"] == 499


async def test_reapply_that_fails_ends_in_error(bm: httpx.AsyncClient,
                                                di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    resp = await bm.patch(f"/v1/nodes/{m.uuid}", json=[
        {"op": "add", "path": "/properties/root_device", "value": {"serial": "NOPE"}}])
    assert resp.status_code == 200
    assert (await _reapply(di, m.uuid)).status_code == 202
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error"
    assert doc["error"].startswith("Reapply failed") and "root device hints" in doc["error"]


async def test_reapply_with_invalid_body_is_400_and_changes_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    doc = await introspect(di, m, ipa_payload(m))
    payload = ipa_payload(m)
    payload["inventory"]["interfaces"] = []
    resp = await _reapply(di, m.uuid, json=payload)
    assert resp.status_code == 400
    assert "inventory.interfaces" in error_message(resp)
    resp = await _reapply(di, m.uuid, content=b"{not json")
    assert resp.status_code == 400
    assert await status(di, m.uuid) == doc


async def test_reapply_with_body_at_the_oldest_version(bm: httpx.AsyncClient,
                                                       di: httpx.AsyncClient) -> None:
    """As upstream's server: versions are only range-checked (upstream added reapply in 1.4
    and its body in 1.15; the inspector client sends 1.0 by default)."""
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    resp = await _reapply(di, m.uuid, json=ipa_payload(m, cpus=6), headers={
        "X-OpenStack-Ironic-Inspector-API-Version": "1.0"})
    assert resp.status_code == 202, resp.text
    await wait_finished(di, m.uuid)
    assert (await di.get(f"/v1/introspection/{m.uuid}/data")).json()["cpus"] == 6


async def test_reapply_on_waiting_node_with_body_is_400(bm: httpx.AsyncClient,
                                                        di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await _reapply(di, m.uuid, json=ipa_payload(m))
    assert resp.status_code == 400
    assert '"waiting"' in error_message(resp)
    assert (await status(di, m.uuid))["state"] == "waiting"
    assert (await di.get(f"/v1/introspection/{m.uuid}/data/unprocessed")).status_code == 404


async def test_reapply_on_waiting_node_is_400(bm: httpx.AsyncClient,
                                              di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await _reapply(di, m.uuid)
    assert resp.status_code == 400, resp.text
    assert '"waiting"' in error_message(resp)


@pytest.mark.discoverd_conf(processing={"store_data": "false"})
async def test_reapply_without_stored_data_needs_a_body(bm: httpx.AsyncClient,
                                                        di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    resp = await _reapply(di, m.uuid)
    assert resp.status_code == 400
    assert "store_data" in error_message(resp)
    resp = await _reapply(di, m.uuid, json=ipa_payload(m))
    assert resp.status_code == 202
    assert (await wait_finished(di, m.uuid))["state"] == "finished"


async def test_reapply_that_crashes_ends_in_error_not_stuck(bm: httpx.AsyncClient,
                                                            di: httpx.AsyncClient) -> None:
    # a root device hint that is not a number makes the root_disk hook raise ValueError;
    # in a background step that ends the introspection with the reason
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    resp = await bm.patch(f"/v1/nodes/{m.uuid}", json=[
        {"op": "add", "path": "/properties/root_device", "value": {"size": "big"}}])
    assert resp.status_code == 200
    assert (await _reapply(di, m.uuid)).status_code == 202
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error"
    assert "big" in doc["error"]


@pytest.mark.discoverd_conf(processing={"store_data": "false"})
async def test_reapply_with_body_keeps_no_data_when_store_data_is_off(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    assert (await _reapply(di, m.uuid, json=ipa_payload(m))).status_code == 202
    assert (await wait_finished(di, m.uuid))["state"] == "finished"
    for path in ("data", "data/unprocessed"):
        resp = await di.get(f"/v1/introspection/{m.uuid}/{path}")
        assert resp.status_code == 404, (path, resp.text[:200])
