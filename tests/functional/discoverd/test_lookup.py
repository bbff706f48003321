"""Finding the node a ramdisk report belongs to: only among introspections, by MAC and BMC
address; no match or a tie changes nothing."""

from __future__ import annotations

import httpx

from .conftest import BOTH_DBS
from .helpers import (
    error_message,
    ipa_payload,
    mac,
    make_node,
    node,
    snapshot,
    start,
    status,
    wait_finished,
)


@BOTH_DBS
async def test_lookup_by_mac_only(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, bmc=False)
    other = await make_node(bm)
    await start(di, m.uuid)
    await start(di, other.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(m, bmc=None))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"uuid": m.uuid}
    assert (await wait_finished(di, m.uuid))["state"] == "finished"
    assert (await status(di, other.uuid))["state"] == "waiting"


@BOTH_DBS
async def test_lookup_by_bmc_address_only(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, ports=0)
    other = await make_node(bm)
    await start(di, m.uuid)
    await start(di, other.uuid)
    # the ramdisk sees NICs discoverd never heard of
    resp = await di.post("/v1/continue", json=ipa_payload(m, macs=[mac(9000, 0), mac(9000, 1)]))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"uuid": m.uuid}
    assert (await wait_finished(di, m.uuid))["state"] == "finished"
    assert (await status(di, other.uuid))["state"] == "waiting"


async def test_lookup_by_bmc_v6_address(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1, ports=0, bmc=False,
                        driver_info={"ipmi_address": "2001:db8::15"})
    await start(di, m.uuid)
    payload = ipa_payload(m, bmc=None, macs=[mac(9001, 0)])
    payload["inventory"]["bmc_v6address"] = "2001:db8::15"
    resp = await di.post("/v1/continue", json=payload)
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, m.uuid))["state"] == "finished"


@BOTH_DBS
async def test_lookup_not_found_is_404_and_changes_nothing(bm: httpx.AsyncClient,
                                                           di: httpx.AsyncClient) -> None:
    waiting = await make_node(bm)
    idle = await make_node(bm)
    await start(di, waiting.uuid)
    before = await snapshot(bm, waiting, idle)
    stranger = await make_node(bm, managed=False)  # never introspected
    resp = await di.post("/v1/continue", json=ipa_payload(stranger))
    assert resp.status_code == 404
    assert "Could not find a node" in error_message(resp)
    # nodes that are not under introspection are never found, even with matching ports
    resp = await di.post("/v1/continue", json=ipa_payload(idle))
    assert resp.status_code == 404
    assert await snapshot(bm, waiting, idle) == before
    assert (await status(di, waiting.uuid))["state"] == "waiting"
    assert (await di.get(f"/v1/introspection/{idle.uuid}")).status_code == 404


async def test_lookup_without_any_address_is_404(bm: httpx.AsyncClient,
                                                 di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    payload = ipa_payload(m, bmc=None)
    payload["inventory"]["bmc_v6address"] = None
    payload["inventory"]["interfaces"] = [{"name": "eno1", "mac_address": "not-a-mac"}]
    resp = await di.post("/v1/continue", json=payload)
    assert resp.status_code == 404
    assert (await status(di, m.uuid))["state"] == "waiting"


async def test_lookup_tie_is_400_and_changes_nothing(bm: httpx.AsyncClient,
                                                     di: httpx.AsyncClient) -> None:
    by_mac = await make_node(bm, nics=1, bmc=False)
    by_bmc = await make_node(bm, nics=1, ports=0)
    await start(di, by_mac.uuid)
    await start(di, by_bmc.uuid)
    before = await snapshot(bm, by_mac, by_bmc)
    # one attribute each: by_mac's MAC, by_bmc's BMC address
    resp = await di.post("/v1/continue", json=ipa_payload(by_mac, bmc=by_bmc.bmc))
    assert resp.status_code == 400
    message = error_message(resp)
    assert "Multiple nodes match" in message
    assert by_mac.uuid in message and by_bmc.uuid in message
    assert await snapshot(bm, by_mac, by_bmc) == before
    for m in (by_mac, by_bmc):
        doc = await status(di, m.uuid)
        assert doc["state"] == "waiting" and doc["error"] is None
    # still findable afterwards
    resp = await di.post("/v1/continue", json=ipa_payload(by_bmc, macs=[mac(9002, 0)]))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"uuid": by_bmc.uuid}


async def test_lookup_more_matching_attributes_win(bm: httpx.AsyncClient,
                                                   di: httpx.AsyncClient) -> None:
    two_macs = await make_node(bm, nics=2, bmc=False)
    by_bmc = await make_node(bm, nics=1, ports=0)
    await start(di, two_macs.uuid)
    await start(di, by_bmc.uuid)
    resp = await di.post("/v1/continue", json=ipa_payload(two_macs, bmc=by_bmc.bmc))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"uuid": two_macs.uuid}
    await wait_finished(di, two_macs.uuid)
    assert (await status(di, by_bmc.uuid))["state"] == "waiting"


@BOTH_DBS
async def test_finished_node_is_not_found_again(bm: httpx.AsyncClient,
                                                di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    payload = ipa_payload(m)
    assert (await di.post("/v1/continue", json=payload)).status_code == 200
    doc = await wait_finished(di, m.uuid)
    props = (await node(bm, m.uuid))["properties"]
    resp = await di.post("/v1/continue", json=ipa_payload(m, cpus=99))
    assert resp.status_code == 404
    assert await status(di, m.uuid) == doc
    assert (await node(bm, m.uuid))["properties"] == props
