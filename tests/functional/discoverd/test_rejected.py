"""Refused callbacks are kept and listed (`GET /v1/rejected`), with the real services: a
report or hello that matched no introspection, came in the wrong state, or had a bad or
missing token, each stored with its MACs, BMC address, source and reason."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from ironsight.discoverd.callback_token import HEADER
from ironsight.discoverd.service import DiscoverdService

from .helpers import introspect, ipa_payload, issued_token, make_node, start

STRICT = pytest.mark.discoverd_conf(introspection={"allow_tokenless_reports": "false"})


async def rejected(di: httpx.AsyncClient, **params: str) -> list[dict[str, object]]:
    """The records, once the background writes are in (within 2 s)."""
    for _ in range(200):
        resp = await di.get("/v1/rejected", params=params)
        assert resp.status_code == 200, resp.text
        found = list(resp.json()["rejected"])
        if found:
            return found
        await asyncio.sleep(0.01)
    return []


async def test_a_report_of_no_introspection_is_kept_with_its_macs_bmc_and_source(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)  # never introspected
    resp = await di.post("/v1/continue", json=ipa_payload(m))
    assert resp.status_code == 404
    (record,) = await rejected(di)
    assert (record["kind"], record["reason"], record["uuid"]) == ("report", "lookup_failed",
                                                                  None)
    assert set(m.macs) <= set(record["macs"])  # type: ignore[arg-type]
    assert record["bmc_address"] == m.bmc
    assert record["source_address"] == "127.0.0.1"


@STRICT
async def test_a_report_with_a_wrong_token_is_kept_naming_its_node(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await issued_token(di_service, m.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m), headers={HEADER: "wrong"})
    assert resp.status_code == 403
    (record,) = await rejected(di)
    assert (record["reason"], record["uuid"]) == ("bad_token", m.uuid)
    assert "wrong" not in str(record)  # the token itself is never kept


@STRICT
async def test_a_report_without_a_token_is_kept_as_missing_token(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post("/v1/continue", json=ipa_payload(m))).status_code == 403
    assert (await rejected(di))[0]["reason"] == "missing_token"


async def test_a_late_report_is_kept_as_wrong_state(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    assert (await di.post(f"/v1/introspection/{m.uuid}/abort")).status_code == 202
    for _ in range(200):
        if (await di.get(f"/v1/introspection/{m.uuid}")).json()["finished"]:
            break
        await asyncio.sleep(0.01)
    # the attributes are gone with the end: a late report no longer finds the node
    resp = await di.post("/v1/continue", json=ipa_payload(m))
    assert resp.status_code == 404
    assert (await rejected(di))[0]["reason"] == "lookup_failed"


async def test_the_list_is_newest_first_and_filtered_by_reason_and_mac(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    first, second = await make_node(bm), await make_node(bm)
    await di.post("/v1/hello", json={"macs": [first.macs[0]]})
    await di.post("/v1/hello", json={"macs": [second.macs[0]]})
    await introspect(di, second, ipa_payload(second))
    for _ in range(200):
        if len(await rejected(di)) == 2:
            break
        await asyncio.sleep(0.01)
    found = await rejected(di)
    assert [r["macs"] for r in found] == [[second.macs[0]], [first.macs[0]]]
    assert [r["macs"] for r in await rejected(di, mac=first.macs[0].upper())] == [
        [first.macs[0]]]
    assert await rejected(di, reason="ambiguous") == []
    assert len(await rejected(di, limit="1")) == 1


@pytest.mark.parametrize(("params", "field"), [
    ({"limit": "0"}, "limit"), ({"limit": "1001"}, "limit"), ({"limit": "x"}, "limit"),
    ({"reason": "bored"}, "reason"), ({"mac": "nope"}, "mac"), ({"other": "1"}, "other")])
async def test_bad_parameters_are_400_naming_them(di: httpx.AsyncClient,
                                                  params: dict[str, str], field: str) -> None:
    resp = await di.get("/v1/rejected", params=params)
    assert resp.status_code == 400
    assert field in resp.text


async def test_only_the_newest_are_kept(di_service: DiscoverdService) -> None:
    store = di_service.processor.rejections
    store.keep = 3
    for i in range(5):
        store.note("hello", "lookup_failed", f"n{i}", macs=[f"52:54:00:00:10:0{i}"])
    await store.drain()
    await store.prune()
    assert [r["message"] for r in await store.list()] == ["n4", "n3", "n2"]
