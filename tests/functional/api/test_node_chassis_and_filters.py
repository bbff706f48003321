"""A node's chassis (`chassis_uuid`) and the node list's filters beyond the plain fields:
chassis_uuid, description_contains, project, fault, sharded, conductor."""

from __future__ import annotations

import asyncio

import httpx

from .helpers import create_node, fault

MISSING = "0b751d19-92e0-41ae-9a37-99bfd7c5121a"


async def make_chassis(api: httpx.AsyncClient) -> str:
    resp = await api.post("/v1/chassis", json={})
    assert resp.status_code == 201, resp.text
    return str(resp.json()["uuid"])


async def node_names(api: httpx.AsyncClient, query: str) -> list[str]:
    resp = await api.get(f"/v1/nodes?{query}")
    assert resp.status_code == 200, resp.text
    return sorted(n["name"] for n in resp.json()["nodes"])


def at(version: str) -> dict[str, str]:
    return {"X-OpenStack-Ironic-API-Version": version}


async def test_node_created_in_a_chassis_shows_its_uuid(api: httpx.AsyncClient) -> None:
    chassis = await make_chassis(api)
    made = await create_node(api, name="n1", chassis_uuid=chassis.upper())
    assert made["chassis_uuid"] == chassis
    assert (await api.get("/v1/nodes/n1")).json()["chassis_uuid"] == chassis
    listed = (await api.get("/v1/nodes/detail")).json()["nodes"]
    assert [n["chassis_uuid"] for n in listed] == [chassis]
    members = (await api.get(f"/v1/chassis/{chassis}/nodes")).json()["nodes"]
    assert [n["uuid"] for n in members] == [made["uuid"]]


async def test_node_without_a_chassis_shows_null(api: httpx.AsyncClient) -> None:
    await create_node(api, name="n1")
    assert (await api.get("/v1/nodes/n1?fields=chassis_uuid")).json()["chassis_uuid"] is None


async def test_node_create_in_a_missing_chassis_is_400_and_creates_nothing(
        api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake", "name": "n1",
                                             "chassis_uuid": MISSING})
    assert resp.status_code == 400
    assert fault(resp) == f"Chassis {MISSING} could not be found."
    assert (await api.get("/v1/nodes/n1")).status_code == 404


async def test_node_create_with_a_chassis_uuid_that_is_no_uuid_is_400_naming_it(
        api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake", "chassis_uuid": "rack-4"})
    assert resp.status_code == 400
    assert "chassis_uuid" in fault(resp)


async def test_node_patch_moves_it_to_another_chassis(api: httpx.AsyncClient) -> None:
    first, second = await make_chassis(api), await make_chassis(api)
    await create_node(api, name="n1", chassis_uuid=first)
    resp = await api.patch("/v1/nodes/n1", json=[
        {"op": "replace", "path": "/chassis_uuid", "value": second}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["chassis_uuid"] == second
    assert (await api.get(f"/v1/chassis/{first}/nodes")).json()["nodes"] == []
    assert len((await api.get(f"/v1/chassis/{second}/nodes")).json()["nodes"]) == 1
    events = [e["event"] for e in (await api.get("/v1/nodes/n1/history")).json()["history"]]
    assert "Node updated: chassis_uuid" in events


async def test_node_patch_into_a_missing_chassis_is_400_and_changes_nothing(
        api: httpx.AsyncClient) -> None:
    chassis = await make_chassis(api)
    await create_node(api, name="n1", chassis_uuid=chassis)
    resp = await api.patch("/v1/nodes/n1", json=[
        {"op": "replace", "path": "/chassis_uuid", "value": MISSING},
        {"op": "replace", "path": "/description", "value": "moved"}])
    assert resp.status_code == 400
    assert fault(resp) == f"Chassis {MISSING} could not be found."
    node = (await api.get("/v1/nodes/n1")).json()
    assert (node["chassis_uuid"], node["description"]) == (chassis, None)


async def test_node_leaves_its_chassis_by_removing_chassis_uuid(api: httpx.AsyncClient) -> None:
    chassis = await make_chassis(api)
    await create_node(api, name="n1", chassis_uuid=chassis)
    resp = await api.patch("/v1/nodes/n1", json=[{"op": "remove", "path": "/chassis_uuid"}],
                           headers=at("1.25"))
    assert resp.status_code == 200, resp.text
    assert resp.json()["chassis_uuid"] is None
    assert (await api.get(f"/v1/chassis/{chassis}/nodes")).json()["nodes"] == []


async def test_removing_chassis_uuid_before_1_25_is_406(api: httpx.AsyncClient) -> None:
    chassis = await make_chassis(api)
    await create_node(api, name="n1", chassis_uuid=chassis)
    resp = await api.patch("/v1/nodes/n1", json=[{"op": "remove", "path": "/chassis_uuid"}],
                           headers=at("1.24"))
    assert resp.status_code == 406
    assert (await api.get("/v1/nodes/n1")).json()["chassis_uuid"] == chassis


async def test_chassis_with_a_node_cannot_be_deleted(api: httpx.AsyncClient) -> None:
    chassis = await make_chassis(api)
    await create_node(api, name="n1", chassis_uuid=chassis)
    resp = await api.delete(f"/v1/chassis/{chassis}")
    assert resp.status_code == 400
    assert fault(resp) == f"Chassis {chassis} contains nodes."
    assert (await api.get(f"/v1/chassis/{chassis}")).status_code == 200


async def test_chassis_can_be_deleted_once_its_node_is_gone(api: httpx.AsyncClient) -> None:
    chassis = await make_chassis(api)
    await create_node(api, name="n1", chassis_uuid=chassis)
    assert (await api.delete("/v1/nodes/n1")).status_code == 204
    assert (await api.delete(f"/v1/chassis/{chassis}")).status_code == 204


async def test_a_chassis_deleted_while_a_node_joins_it_never_leaves_the_node_dangling(
        api: httpx.AsyncClient) -> None:
    """Delete and join race: exactly one wins each round, and a node that got in has a
    chassis that still exists."""
    for round_ in range(15):
        chassis = await make_chassis(api)
        delete, join = await asyncio.gather(
            api.delete(f"/v1/chassis/{chassis}"),
            api.post("/v1/nodes", json={"driver": "fake", "name": f"n{round_}",
                                        "chassis_uuid": chassis}))
        assert sorted([delete.status_code, join.status_code]) in ([201, 400], [204, 400]), (
            delete.text, join.text)
        if join.status_code == 201:
            assert (await api.get(f"/v1/chassis/{chassis}")).status_code == 200


async def test_node_list_filters_by_chassis(api: httpx.AsyncClient) -> None:
    first, second = await make_chassis(api), await make_chassis(api)
    await create_node(api, name="a", chassis_uuid=first)
    await create_node(api, name="b", chassis_uuid=second)
    await create_node(api, name="c")
    assert await node_names(api, f"chassis_uuid={first.upper()}") == ["a"]
    assert await node_names(api, f"chassis_uuid={MISSING}") == []


async def test_node_list_chassis_filter_that_is_no_uuid_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes?chassis_uuid=rack-4")
    assert resp.status_code == 400
    assert fault(resp) == "Expected UUID for chassis_uuid: rack-4"


async def test_node_list_filters_by_a_part_of_the_description(api: httpx.AsyncClient) -> None:
    await create_node(api, name="a", description="rack 4, slot 10%")
    await create_node(api, name="b", description="rack 14")
    await create_node(api, name="c")
    assert await node_names(api, "description_contains=rack") == ["a", "b"]
    assert await node_names(api, "description_contains=10%25") == ["a"]
    assert await node_names(api, "description_contains=_") == []  # no wildcard


async def test_node_list_filters_by_project_as_owner_or_lessee(api: httpx.AsyncClient) -> None:
    await create_node(api, name="a", owner="p1")
    await create_node(api, name="b", lessee="p1")
    await create_node(api, name="c", owner="p2")
    assert await node_names(api, "project=p1") == ["a", "b"]


async def test_node_list_fault_filter_finds_no_node(api: httpx.AsyncClient) -> None:
    await create_node(api, name="a")
    assert await node_names(api, "fault=power%20failure") == []


async def test_node_list_unknown_fault_is_400_naming_it(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes?fault=on%20fire")
    assert resp.status_code == 400
    assert "Unknown fault: 'on fire'" in fault(resp)


async def test_node_list_filters_by_having_a_shard(api: httpx.AsyncClient) -> None:
    await create_node(api, name="a", shard="s1")
    await create_node(api, name="b")
    assert await node_names(api, "sharded=true") == ["a"]
    assert await node_names(api, "sharded=false") == ["b"]


async def conductor_host(api: httpx.AsyncClient) -> str:
    return str((await api.get("/v1/conductors")).json()["conductors"][0]["hostname"])


async def test_node_list_filters_by_the_conductor_serving_the_nodes(
        api: httpx.AsyncClient) -> None:
    for name in ("a", "b", "c"):
        await create_node(api, name=name)
    host = await conductor_host(api)
    assert await node_names(api, f"conductor={host}") == ["a", "b", "c"]
    assert await node_names(api, "conductor=another-host") == []


async def test_node_list_by_conductor_pages_with_next(api: httpx.AsyncClient) -> None:
    for name in ("a", "b", "c"):
        await create_node(api, name=name)
    host = await conductor_host(api)
    first = (await api.get(f"/v1/nodes?conductor={host}&limit=2&sort_key=name")).json()
    assert [n["name"] for n in first["nodes"]] == ["a", "b"]
    assert "conductor=" in first["next"]
    rest = (await api.get(first["next"].removeprefix("http://bm.test"))).json()
    assert [n["name"] for n in rest["nodes"]] == ["c"]


async def test_node_list_conductor_filter_before_1_49_is_406(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes?conductor=h", headers=at("1.48"))
    assert resp.status_code == 406
