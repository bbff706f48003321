"""Fleet hardware with the real services (fleet/, api/fleet.py, component_events.py): CEL
queries over every node's document, kept current as nodes and reports change; drift within
a model; each inspection's component change events, in the node's history and the API."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import httpx
import pytest

from .conftest import BOTH_DBS
from .helpers import Machine, introspect, ipa_payload, make_node


async def inspected(bm: httpx.AsyncClient, di: httpx.AsyncClient, *, memory_mb: int = 16384,
                    **extra: Any) -> tuple[Machine, dict[str, Any]]:
    m = await make_node(bm)
    payload = ipa_payload(m, memory_mb=memory_mb, **extra)
    assert (await introspect(di, m, payload))["error"] is None
    return m, payload


async def query(di: httpx.AsyncClient, where: str, **params: Any) -> dict[str, Any]:
    resp = await di.get("/v1/fleet/nodes", params={"where": where, **params})
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


async def uuids(di: httpx.AsyncClient, where: str) -> set[str]:
    return {n["uuid"] for n in (await query(di, where))["nodes"]}


async def events(di: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    resp = await di.get("/v1/fleet/events", params=params)
    assert resp.status_code == 200, resp.text
    return list(resp.json()["events"])


async def reinspect(di: httpx.AsyncClient, m: Machine, payload: dict[str, Any]) -> None:
    assert (await introspect(di, m, payload))["error"] is None


@BOTH_DBS
async def test_a_query_answers_exactly_the_matching_nodes(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    big, _ = await inspected(bm, di, memory_mb=524288)
    await inspected(bm, di, memory_mb=16384)
    assert await uuids(di, "hardware.memory_gib >= 512.0") == {big.uuid}
    assert await uuids(di, "inventory.memory.physical_mb >= 524288") == {big.uuid}


async def test_a_pci_vendor_is_found_in_the_collected_devices(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    gpu = [{"vendor_id": "10de", "product_id": "2330", "class": "030200",
            "bus": "0000:17:00.0"}]
    with_gpu, _ = await inspected(bm, di, pci_devices=gpu)
    await inspected(bm, di, pci_devices=[])
    assert await uuids(di, 'inventory.pci_devices.exists(d, d.vendor_id == "10de")') == {
        with_gpu.uuid}
    assert await uuids(di, "hardware.gpu_count == 1") == {with_gpu.uuid}


async def test_each_matching_node_shows_at_least_its_uuid_and_name(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, _ = await inspected(bm, di)
    (shown,) = (await query(di, "true"))["nodes"]
    assert (shown["uuid"], shown["name"]) == (m.uuid, m.name)
    (picked,) = (await query(di, "true", fields="name,hardware.cpu_count"))["nodes"]
    assert picked == {"uuid": m.uuid, "name": m.name, "hardware.cpu_count": 8}


async def test_pages_follow_the_marker_until_every_match_is_listed(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    made = {(await make_node(bm, managed=False)).uuid for _ in range(5)}
    seen: list[str] = []
    marker = None
    while True:
        page = await query(di, "provision_state == 'enroll'", limit=2,
                           **({"marker": marker} if marker else {}))
        assert page["matched"] == 5
        seen += [n["uuid"] for n in page["nodes"]]
        marker = page["next_marker"]
        if marker is None:
            break
    assert seen == sorted(made)


async def test_a_sorted_answer_is_paged_by_offset_with_nulls_last(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    small, _ = await inspected(bm, di, memory_mb=4096)
    big, _ = await inspected(bm, di, memory_mb=65536)
    never = await make_node(bm)
    where = " || ".join(f'uuid == "{m.uuid}"' for m in (small, big, never))
    first = await query(di, where, sort="-hardware.memory_gib", limit=2, fields="name")
    assert [n["uuid"] for n in first["nodes"]] == [big.uuid, small.uuid]
    assert first["matched"] == 3 and first["offset"] == 0
    rest = await query(di, where, sort="-hardware.memory_gib", limit=2, offset=2)
    assert [n["uuid"] for n in rest["nodes"]] == [never.uuid]
    ascending = await query(di, where, sort="hardware.memory_gib")
    assert [n["uuid"] for n in ascending["nodes"]] == [small.uuid, big.uuid, never.uuid]


@pytest.mark.parametrize(("params", "named"), [
    ({"sort": "hardware..x"}, "sort"), ({"sort": "-"}, "sort"),
    ({"sort": "name", "offset": "-1"}, "offset"), ({"sort": "name", "offset": "x"}, "offset"),
    ({"sort": "name", "marker": "abc"}, "marker and sort")])
async def test_a_bad_sort_or_offset_is_a_400_naming_it(di: httpx.AsyncClient,
                                                       params: dict[str, str],
                                                       named: str) -> None:
    resp = await di.get("/v1/fleet/nodes", params={"where": "true", **params})
    assert resp.status_code == 400, resp.text
    assert named in resp.json()["error"]["message"]


async def test_the_post_form_takes_long_expressions_in_its_body(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, _ = await inspected(bm, di)
    where = " || ".join(f'name == "nobody-{i}"' for i in range(150)) + f' || name == "{m.name}"'
    resp = await di.post("/v1/fleet/query", json={"where": where})
    assert resp.status_code == 200, resp.text
    assert [n["uuid"] for n in resp.json()["nodes"]] == [m.uuid]


async def test_a_bad_expression_is_a_400_naming_its_position(di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1/fleet/nodes", params={"where": "hardware.memory_gib >= && 1"})
    assert resp.status_code == 400
    message = resp.json()["error"]["message"]
    assert "where" in message and "column 24" in message


async def test_a_missing_where_and_bad_paging_are_400s_naming_the_parameter(
        di: httpx.AsyncClient) -> None:
    for params, name in (({}, "where"), ({"where": "true", "limit": "0"}, "limit"),
                         ({"where": "true", "fields": "a b"}, "fields")):
        resp = await di.get("/v1/fleet/nodes", params=params)
        assert resp.status_code == 400, resp.text
        assert name in resp.json()["error"]["message"]
    resp = await di.post("/v1/fleet/query", json={"where": "true", "limit": 5000})
    assert resp.status_code == 400 and "limit" in resp.text


async def test_a_node_the_expression_fails_on_does_not_match_and_is_counted(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, _ = await inspected(bm, di)
    never = await make_node(bm, managed=False)
    page = await query(di, "inventory.memory.physical_mb > 0")
    assert [n["uuid"] for n in page["nodes"]] == [m.uuid]
    assert page["errors"]["count"] == 1
    assert page["errors"]["examples"][0]["uuid"] == never.uuid


async def test_traits_and_states_changed_through_the_api_are_seen_by_the_next_query(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, _ = await inspected(bm, di)
    assert await uuids(di, '"CUSTOM_GPU" in traits') == set()
    resp = await bm.put(f"/v1/nodes/{m.uuid}/traits", json={"traits": ["CUSTOM_GPU"]})
    assert resp.status_code == 204, resp.text
    assert await uuids(di, '"CUSTOM_GPU" in traits') == {m.uuid}


async def test_a_deleted_node_is_gone_from_the_next_query(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, managed=False)
    assert await uuids(di, "true") == {m.uuid}
    assert (await bm.delete(f"/v1/nodes/{m.uuid}")).status_code == 204
    assert await uuids(di, "true") == set()


async def test_a_new_report_is_seen_by_the_next_query(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, payload = await inspected(bm, di, memory_mb=16384)
    assert await uuids(di, "hardware.memory_gib == 16.0") == {m.uuid}
    payload["inventory"]["memory"]["physical_mb"] = 32768
    await reinspect(di, m, payload)
    assert await uuids(di, "hardware.memory_gib == 32.0") == {m.uuid}


async def test_one_nodes_document_is_shown_by_name(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, _ = await inspected(bm, di)
    resp = await di.get(f"/v1/fleet/nodes/{m.name}")
    assert resp.status_code == 200, resp.text
    doc = resp.json()
    assert doc["uuid"] == m.uuid and doc["inventory"]["cpu"]["count"] == 8
    assert doc["hardware"]["disk_count"] == 2 and doc["inspected"] is True
    assert (await di.get("/v1/fleet/nodes/nope")).status_code == 404


async def test_drift_flags_the_one_node_that_differs_from_its_model(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    machines = [(await inspected(bm, di, disks_gib=(500, 1000) if i != 2 else (500,)))[0]
                for i in range(4)]
    resp = await di.get("/v1/fleet/drift")
    assert resp.status_code == 200, resp.text
    (group,) = resp.json()["groups"]
    assert (group["vendor"], group["product"], group["nodes"]) == ("ACME", "Test", 4)
    assert [n["uuid"] for n in group["drifted"]] == [machines[2].uuid]
    assert [d["field"] for d in group["drifted"][0]["differences"]] == ["disks"]


@BOTH_DBS
async def test_a_removed_disk_and_changed_memory_are_exactly_the_events(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, payload = await inspected(bm, di, memory_mb=16384, disks_gib=(500, 1000))
    assert await events(di, node=m.uuid) == []  # a first inspection changes nothing
    changed = copy.deepcopy(payload)
    changed["inventory"]["memory"]["physical_mb"] = 8192
    del changed["inventory"]["disks"][1]
    await reinspect(di, m, changed)
    found = await events(di, node=m.uuid)
    assert sorted((e["component"], e["change"]) for e in found) == [
        ("disk", "removed"), ("memory", "changed")]
    assert {e["severity"] for e in found} == {"critical"}
    history = (await bm.get(f"/v1/nodes/{m.uuid}/history")).json()["history"]
    (told,) = [h for h in history if "Hardware changed" in h["event"]]
    assert told["severity"] == "ERROR"


async def test_twenty_identical_reinspections_emit_no_event(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, _ = await inspected(bm, di)
    for n in range(20):
        again = ipa_payload(m, ips={0: f"10.9.0.{n + 1}"})  # a new lease each boot
        again["inventory"]["interfaces"][1]["has_carrier"] = n % 2 == 0
        await reinspect(di, m, again)
    assert await events(di, node=m.uuid) == []


async def test_events_are_filtered_by_severity_component_and_change(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, payload = await inspected(bm, di, disks_gib=(500,))
    bigger = copy.deepcopy(payload)
    bigger["inventory"]["disks"].append({"name": "/dev/sdb", "model": "NEW", "serial": "N1",
                                         "size": 2**40, "vendor": "ACME"})
    await reinspect(di, m, bigger)
    (added,) = await events(di, component="disk", change="added")
    assert added["severity"] == "info" and added["node_uuid"] == m.uuid
    assert await events(di, severity="critical") == []
    assert await events(di, since="1d") == [added]
    for params in ({"severity": "bad"}, {"change": "moved"}, {"since": "yesterday"},
                   {"marker": "x"}):
        resp = await di.get("/v1/fleet/events", params=params)
        assert resp.status_code == 400 and next(iter(params)) in resp.text


@pytest.mark.parametrize("where", ["inventory.memory.physical_mb >= 16384",
                                   "hardware.memory_gib >= 16.0 && size(inventory.disks) == 2"])
async def test_a_cel_rule_condition_decides_on_the_report_being_processed(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, where: str) -> None:
    rule = {"description": "big", "conditions": [{"op": "cel", "args": {"expression": where}}],
            "actions": [{"op": "set-attribute", "args": {"path": "/extra/big",
                                                         "value": "yes"}}]}
    resp = await di.post("/v1/inspection_rules", json=rule)
    assert resp.status_code == 201, resp.text
    m, _ = await inspected(bm, di, memory_mb=16384)
    small, _ = await inspected(bm, di, memory_mb=8192)
    assert (await bm.get(f"/v1/nodes/{m.uuid}")).json()["extra"].get("big") == "yes"
    assert (await bm.get(f"/v1/nodes/{small.uuid}")).json()["extra"].get("big") is None


async def test_a_cel_rule_condition_that_does_not_compile_is_refused(
        di: httpx.AsyncClient) -> None:
    rule = {"conditions": [{"op": "cel", "args": {"expression": "a &&"}}],
            "actions": [{"op": "set-attribute", "args": {"path": "/extra/x", "value": 1}}]}
    resp = await di.post("/v1/inspection_rules", json=rule)
    assert resp.status_code == 400
    assert "conditions[0].args.expression" in resp.text and "column" in resp.text


async def test_the_bare_metal_stamps_answer_the_nodes_changed_since_a_time(
        bm: httpx.AsyncClient) -> None:
    old = await make_node(bm, managed=False)
    everything = (await bm.get("/v1/fleet/stamps")).json()
    assert old.uuid in dict(everything["nodes"]) and everything["count"] == 1
    new = await make_node(bm, managed=False)
    since = (await bm.get("/v1/fleet/stamps", params={"since": everything["now"]})).json()
    assert new.uuid in dict(since["nodes"]) and since["count"] == 2
    resp = await bm.get("/v1/fleet/stamps", params={"since": "yesterday"})
    assert resp.status_code == 400 and "since" in resp.text


async def until_indexed(svc: Any, count: int, timeout: float = 10) -> int:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(svc.fleet) != count and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return len(svc.fleet)


@pytest.mark.discoverd_conf(fleet={"warm_at_start": "true"})
async def test_with_warm_at_start_the_index_is_built_before_any_query(
        bm: httpx.AsyncClient, discoverds: Any) -> None:
    for _ in range(3):
        await make_node(bm)
    svc = await discoverds.start()
    assert await until_indexed(svc, 3) == 3


async def test_by_default_the_index_waits_for_the_first_query(
        bm: httpx.AsyncClient, discoverds: Any) -> None:
    await make_node(bm)
    svc = await discoverds.start()
    await asyncio.sleep(0.5)
    assert len(svc.fleet) == 0
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=svc.app),
                                 base_url="http://di.test") as di:
        assert len(await uuids(di, "true")) == 1
    assert len(svc.fleet) == 1
