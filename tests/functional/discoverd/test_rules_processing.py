"""Inspection rules in real processing: a ramdisk report processed by discoverd, whose rules'
changes reach the real bare-metal service over HTTP (node fields, traits through the traits
API, capabilities, port attributes), with traces in the processed data and one event in the
node's history; reapply runs the rules again; `api-call` reaches a real HTTP server."""

from __future__ import annotations

import socket
from typing import Any

import httpx
from aiohttp import web

from .conftest import BOTH_DBS
from .helpers import introspect, ipa_payload, make_node, node, ports, wait_finished

RULES = "/v1/inspection_rules"
SCHEDULING_RULE = {
    "description": "large nodes",
    "conditions": [{"op": "ge", "args": {"values": ["{inventory[memory][physical_mb]}",
                                                    16384]}},
                   {"op": "eq", "args": {"values": ["{inventory[cpu][count]}", 8]}}],
    "actions": [
        {"op": "set-attribute", "args": {"path": "/resource_class", "value": "large"}},
        {"op": "add-trait", "args": {"name": "CUSTOM_LARGE"}},
        {"op": "set-capability", "args": {"name": "memory_class", "value": "large"}},
        {"op": "set-port-attribute", "args": {
            "port_id": "{inventory[interfaces][0][mac_address]}",
            "path": "/physical_network", "value": "physnet1"}}]}


async def add(di: httpx.AsyncClient, body: dict[str, Any], dialect: str = RULES
              ) -> dict[str, Any]:
    resp = await di.post(dialect, json=body)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


async def history(bm: httpx.AsyncClient, uuid: str) -> list[dict[str, Any]]:
    resp = await bm.get(f"/v1/nodes/{uuid}/history", params={"detail": "true"})
    assert resp.status_code == 200, resp.text
    return list(resp.json()["history"])


@BOTH_DBS
async def test_a_rule_sets_resource_class_trait_capability_and_port(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    await add(di, SCHEDULING_RULE)
    m = await make_node(bm)
    status = await introspect(di, m, ipa_payload(m, cpus=8, memory_mb=16384))
    assert status["state"] == "finished", status
    doc = await node(bm, m.uuid)
    assert doc["resource_class"] == "large"
    assert doc["traits"] == ["CUSTOM_LARGE"]
    assert "memory_class:large" in doc["properties"]["capabilities"].split(",")
    assert doc["properties"]["cpus"] == 8  # the hooks' changes too
    resp = await bm.get("/v1/ports/detail", params={"node": m.uuid})
    by_mac = {p["address"]: p for p in resp.json()["ports"]}
    assert by_mac[m.macs[0]]["physical_network"] == "physnet1"
    assert by_mac[m.macs[1]]["physical_network"] is None
    assert set(await ports(bm, m.uuid)) == set(m.macs)


async def test_a_rule_that_does_not_match_changes_nothing(bm: httpx.AsyncClient,
                                                          di: httpx.AsyncClient) -> None:
    await add(di, SCHEDULING_RULE)
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, cpus=4, memory_mb=16384))
    doc = await node(bm, m.uuid)
    assert doc["resource_class"] is None and doc["traits"] == []


async def test_traces_are_in_the_processed_data(bm: httpx.AsyncClient,
                                                di: httpx.AsyncClient) -> None:
    rule = await add(di, SCHEDULING_RULE)
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, cpus=8, memory_mb=16384))
    data = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    [trace] = data["rules"]
    assert trace["uuid"] == rule["uuid"] and trace["matched"] is True
    assert [c["result"] for c in trace["conditions"]] == [True, True]
    assert [a["op"] for a in trace["actions"]] == [a["op"] for a in SCHEDULING_RULE["actions"]]
    assert all(a["changes"] for a in trace["actions"])


async def test_the_history_names_the_rules_and_their_changes(bm: httpx.AsyncClient,
                                                             di: httpx.AsyncClient) -> None:
    rule = await add(di, SCHEDULING_RULE)
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, cpus=8, memory_mb=16384))
    events = [e for e in await history(bm, m.uuid) if e["event_type"] == "inspection"]
    [event] = events
    assert rule["uuid"] in event["event"] and "'large nodes'" in event["event"]
    assert "add trait CUSTOM_LARGE" in event["event"] and "resource_class" in event["event"]


async def test_sensitive_rules_are_masked_in_traces_and_history(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    secret = "pw-9c1e77"
    await add(di, {"sensitive": True, "description": "credentials", "actions": [
        {"op": "set-attribute", "args": {"path": "/driver_info/ipmi_password",
                                         "value": secret}}]})
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    data = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    assert data["rules"][0]["matched"] is True
    assert secret not in repr(data) and secret not in repr(await history(bm, m.uuid))
    listed = (await di.get(RULES, params={"detail": "true"})).json()
    assert secret not in repr(listed)


async def test_reapply_runs_the_rules_again(bm: httpx.AsyncClient,
                                            di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, cpus=8, memory_mb=16384))
    assert (await node(bm, m.uuid))["traits"] == []
    await add(di, SCHEDULING_RULE)
    resp = await di.post(f"/v1/introspection/{m.uuid}/data/unprocessed")
    assert resp.status_code == 202, resp.text
    assert (await wait_finished(di, m.uuid))["state"] == "finished"
    assert (await node(bm, m.uuid))["traits"] == ["CUSTOM_LARGE"]


async def test_a_fail_action_ends_the_introspection_in_error_naming_the_rule(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    rule = await add(di, {"description": "refuse small nodes", "conditions": [
        {"op": "lt", "args": {"values": ["{inventory[memory][physical_mb]}", 32768]}}],
        "actions": [{"op": "fail", "args": {"msg": "needs 32 GiB"}}]})
    m = await make_node(bm)
    status = await introspect(di, m, ipa_payload(m, memory_mb=16384))
    assert status["state"] == "error"
    assert "refuse small nodes" in status["error"] and rule["uuid"] in status["error"]
    assert "needs 32 GiB" in status["error"]
    assert "cpus" not in (await node(bm, m.uuid))["properties"]


async def test_inspector_dialect_rules_apply_too(bm: httpx.AsyncClient,
                                                 di: httpx.AsyncClient) -> None:
    await add(di, {"description": "inspector", "conditions": [
        {"op": "ge", "field": "memory_mb", "value": 1024}],
        "actions": [{"action": "set-attribute", "path": "/extra/by", "value": "inspector"}]},
        "/v1/rules")
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, memory_mb=16384))
    assert (await node(bm, m.uuid))["extra"] == {"by": "inspector"}


async def test_an_api_call_action_gets_its_url_during_processing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    seen: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(request.path_qs)
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    await web.SockSite(runner, sock).start()
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/inspected?node={{node.uuid}}"
        await add(di, {"actions": [{"op": "api-call", "args": {"url": url}}]})
        m = await make_node(bm)
        assert (await introspect(di, m, ipa_payload(m)))["state"] == "finished"
    finally:
        await runner.cleanup()
    assert seen == [f"/inspected?node={m.uuid}"]
