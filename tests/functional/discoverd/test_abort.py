"""Aborting an introspection."""

from __future__ import annotations

import uuid

import httpx

from .helpers import (
    error_message,
    introspect,
    ipa_payload,
    make_node,
    settled_power,
    start,
    status,
    wait_finished,
)


async def test_abort_ends_with_canceled_by_operator_and_powers_off(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    resp = await di.post(f"/v1/introspection/{m.uuid}/abort")
    assert resp.status_code == 202
    assert resp.json() == {}
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error"
    assert doc["error"] == "Canceled by operator"
    await settled_power(bm, m.uuid, "power off")
    # and the ramdisk can no longer report
    assert (await di.post("/v1/continue", json=ipa_payload(m))).status_code == 404


async def test_abort_by_name(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post(f"/v1/introspection/{m.name}/abort")).status_code == 202
    assert (await wait_finished(di, m.uuid))["error"] == "Canceled by operator"


async def test_abort_of_finished_introspection_is_400(bm: httpx.AsyncClient,
                                                      di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    doc = await introspect(di, m, ipa_payload(m))
    resp = await di.post(f"/v1/introspection/{m.uuid}/abort")
    assert resp.status_code == 400
    assert '"finished"' in error_message(resp)
    assert await status(di, m.uuid) == doc


async def test_abort_twice_is_400_the_second_time(bm: httpx.AsyncClient,
                                                  di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post(f"/v1/introspection/{m.uuid}/abort")).status_code == 202
    await wait_finished(di, m.uuid)
    resp = await di.post(f"/v1/introspection/{m.uuid}/abort")
    assert resp.status_code == 400
    assert (await status(di, m.uuid))["error"] == "Canceled by operator"


async def test_abort_unknown_is_404(di: httpx.AsyncClient) -> None:
    resp = await di.post(f"/v1/introspection/{uuid.uuid4()}/abort")
    assert resp.status_code == 404


async def test_abort_at_the_oldest_version(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    """As upstream's server: only range-checked (abort came in 1.3; the inspector client
    sends 1.0 by default)."""
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await di.post(f"/v1/introspection/{m.uuid}/abort",
                         headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.0"})
    assert resp.status_code == 202, resp.text
    assert (await wait_finished(di, m.uuid))["error"] == "Canceled by operator"


async def test_introspection_can_start_again_after_abort(bm: httpx.AsyncClient,
                                                         di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post(f"/v1/introspection/{m.uuid}/abort")).status_code == 202
    await wait_finished(di, m.uuid)
    doc = await introspect(di, m, ipa_payload(m))
    assert doc["state"] == "finished" and doc["error"] is None
