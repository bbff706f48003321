"""Allocations (`/v1/allocations`, 1.52): a node picked by resource class, traits and
candidates, claimed so that concurrent allocations never share one, freed on delete."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from tests.functional.api.helpers import create_node, fault, manage, wait_for

pytestmark = pytest.mark.functional


async def available(api: httpx.AsyncClient, resource_class: str = "gold",
                    traits: tuple[str, ...] = (), **fields: Any) -> dict[str, Any]:
    """A fake-hardware node, available with a known power state (what allocations take)."""
    node = (await create_node(api, driver="fake-hardware", resource_class=resource_class,
                              **fields))["uuid"]
    if traits:
        resp = await api.put(f"/v1/nodes/{node}/traits", json={"traits": list(traits)})
        assert resp.status_code == 204, resp.text
    await manage(api, node)
    resp = await api.put(f"/v1/nodes/{node}/states/provision", json={"target": "provide"})
    assert resp.status_code == 202, resp.text
    return await wait_for(api, node, provision="available")


async def allocate(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    """Create an allocation and wait until it is processed."""
    resp = await api.post("/v1/allocations", json=body)
    assert resp.status_code == 201, resp.text
    return await settled(api, resp.json()["uuid"])


async def settled(api: httpx.AsyncClient, uuid: str, timeout: float = 10) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = dict((await api.get(f"/v1/allocations/{uuid}")).json())
        if doc["state"] != "allocating":
            return doc
        assert asyncio.get_running_loop().time() < deadline, doc
        await asyncio.sleep(0.02)


async def test_create_answers_allocating_with_its_location(api: httpx.AsyncClient) -> None:
    await available(api)
    resp = await api.post("/v1/allocations", json={"resource_class": "gold"})
    assert resp.status_code == 201, resp.text
    doc = resp.json()
    assert (doc["state"], doc["node_uuid"], doc["last_error"]) == ("allocating", None, None)
    assert resp.headers["Location"].endswith(f"/v1/allocations/{doc['uuid']}")


async def test_allocation_takes_a_node_of_its_resource_class(api: httpx.AsyncClient) -> None:
    await available(api, "silver")
    gold = await available(api, "gold")
    doc = await allocate(api, resource_class="gold")
    assert (doc["state"], doc["node_uuid"], doc["last_error"]) == ("active", gold["uuid"], None)


async def test_allocated_node_shows_the_allocation_and_its_instance(
        api: httpx.AsyncClient) -> None:
    node = await available(api)
    doc = await allocate(api, resource_class="gold")
    shown = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert shown["allocation_uuid"] == doc["uuid"]
    assert shown["instance_uuid"] == doc["uuid"]


async def test_allocation_needs_every_requested_trait(api: httpx.AsyncClient) -> None:
    await available(api, traits=("CUSTOM_A",))
    both = await available(api, traits=("CUSTOM_A", "CUSTOM_B"))
    doc = await allocate(api, resource_class="gold", traits=["CUSTOM_A", "CUSTOM_B"])
    assert doc["node_uuid"] == both["uuid"]
    node = (await api.get(f"/v1/nodes/{both['uuid']}")).json()
    assert node["instance_info"]["traits"] == ["CUSTOM_A", "CUSTOM_B"]


async def test_allocation_picks_among_its_candidate_nodes_by_name(
        api: httpx.AsyncClient) -> None:
    await available(api, name="first")
    second = await available(api, name="second")
    doc = await allocate(api, resource_class="gold", candidate_nodes=["second"])
    assert doc["node_uuid"] == second["uuid"]
    assert doc["candidate_nodes"] == [second["uuid"]]


async def test_allocation_skips_nodes_in_maintenance_or_not_available(
        api: httpx.AsyncClient) -> None:
    resting = await available(api)
    await api.put(f"/v1/nodes/{resting['uuid']}/maintenance", json={})
    await create_node(api, driver="fake-hardware", resource_class="gold")  # enroll
    doc = await allocate(api, resource_class="gold")
    assert (doc["state"], doc["node_uuid"]) == ("error", None)


async def test_no_matching_node_is_an_error_naming_the_resource_class(
        api: httpx.AsyncClient) -> None:
    await available(api, "gold")
    doc = await allocate(api, resource_class="bronze")
    assert (doc["state"], doc["node_uuid"]) == ("error", None)
    assert doc["last_error"] == (f"Failed to process allocation {doc['uuid']}: no available "
                                 "nodes match the resource class bronze.")


async def test_no_node_with_the_traits_is_an_error_naming_them(api: httpx.AsyncClient) -> None:
    await available(api, traits=("CUSTOM_A",))
    doc = await allocate(api, resource_class="gold", traits=["CUSTOM_Z"])
    assert doc["state"] == "error"
    assert "no suitable nodes have the requested traits CUSTOM_Z" in doc["last_error"]


async def test_concurrent_allocations_never_share_a_node(api: httpx.AsyncClient) -> None:
    nodes = [await available(api) for _ in range(5)]
    made = await asyncio.gather(*(api.post("/v1/allocations", json={"resource_class": "gold"})
                                  for _ in range(10)))
    assert [r.status_code for r in made] == [201] * 10
    docs = [await settled(api, r.json()["uuid"], timeout=30) for r in made]
    active = [d for d in docs if d["state"] == "active"]
    assert len(active) == 5 and sum(d["state"] == "error" for d in docs) == 5
    assert {d["node_uuid"] for d in active} == {n["uuid"] for n in nodes}
    for doc in active:
        node = (await api.get(f"/v1/nodes/{doc['node_uuid']}")).json()
        assert node["allocation_uuid"] == node["instance_uuid"] == doc["uuid"]


async def test_delete_frees_the_node(api: httpx.AsyncClient) -> None:
    node = await available(api)
    doc = await allocate(api, resource_class="gold")
    assert (await api.delete(f"/v1/allocations/{doc['uuid']}")).status_code == 204
    assert (await api.get(f"/v1/allocations/{doc['uuid']}")).status_code == 404
    shown = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert (shown["allocation_uuid"], shown["instance_uuid"]) == (None, None)
    again = await allocate(api, resource_class="gold")
    assert again["node_uuid"] == node["uuid"]


async def test_delete_of_an_active_nodes_allocation_is_409(api: httpx.AsyncClient) -> None:
    node = await available(api)
    doc = await allocate(api, resource_class="gold")
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "active"})
    await wait_for(api, node["uuid"], provision="active")
    resp = await api.delete(f"/v1/allocations/{doc['uuid']}")
    assert resp.status_code == 409
    assert fault(resp) == (f"Cannot remove allocation {doc['uuid']} for node {node['uuid']}, "
                           "because the node is active (and maintenance mode is off)")


async def test_undeploy_deletes_the_allocation(api: httpx.AsyncClient) -> None:
    node = await available(api)
    doc = await allocate(api, resource_class="gold")
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "active"})
    await wait_for(api, node["uuid"], provision="active")
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "deleted"})
    shown = await wait_for(api, node["uuid"], provision="available")
    assert (shown["allocation_uuid"], shown["instance_uuid"]) == (None, None)
    assert (await api.get(f"/v1/allocations/{doc['uuid']}")).status_code == 404


async def test_removing_the_nodes_instance_deletes_its_allocation(
        api: httpx.AsyncClient) -> None:
    node = await available(api)
    doc = await allocate(api, resource_class="gold")
    resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                           json=[{"op": "remove", "path": "/instance_uuid"}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["allocation_uuid"] is None
    assert (await api.get(f"/v1/allocations/{doc['uuid']}")).status_code == 404


async def test_node_allocation_subresource_shows_and_deletes(api: httpx.AsyncClient) -> None:
    node = await available(api)
    path = f"/v1/nodes/{node['uuid']}/allocation"
    resp = await api.get(path)
    assert resp.status_code == 404
    assert fault(resp) == f"Allocation for node {node['uuid']} was not found"
    doc = await allocate(api, resource_class="gold")
    assert (await api.get(path)).json()["uuid"] == doc["uuid"]
    assert (await api.delete(path)).status_code == 204
    assert (await api.get(f"/v1/allocations/{doc['uuid']}")).status_code == 404


async def test_list_filters_by_state_resource_class_and_node(api: httpx.AsyncClient) -> None:
    node = await available(api)
    good = await allocate(api, resource_class="gold")
    bad = await allocate(api, resource_class="lead")

    async def listed(query: str) -> list[str]:
        resp = await api.get(f"/v1/allocations?{query}")
        assert resp.status_code == 200, resp.text
        return [a["uuid"] for a in resp.json()["allocations"]]

    assert await listed("state=active") == [good["uuid"]]
    assert await listed("resource_class=lead") == [bad["uuid"]]
    assert await listed(f"node={node['uuid']}") == [good["uuid"]]
    assert sorted(await listed("")) == sorted([good["uuid"], bad["uuid"]])


async def test_list_by_a_missing_node_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/allocations?node=nowhere")
    assert resp.status_code == 400
    assert "Node nowhere could not be found" in fault(resp)


async def test_list_paginates_with_next(api: httpx.AsyncClient) -> None:
    for _ in range(3):
        await allocate(api, resource_class="none")
    first = (await api.get("/v1/allocations?limit=2")).json()
    assert len(first["allocations"]) == 2 and "marker=" in first["next"]
    marker = first["allocations"][-1]["uuid"]
    rest = (await api.get(f"/v1/allocations?limit=2&marker={marker}")).json()
    assert len(rest["allocations"]) == 1


async def test_fields_limit_the_document(api: httpx.AsyncClient) -> None:
    doc = await allocate(api, resource_class="none")
    shown = (await api.get(f"/v1/allocations/{doc['uuid']}?fields=uuid,node_uuid")).json()
    assert set(shown) == {"uuid", "node_uuid", "links"}


async def test_patch_sets_and_removes_name_and_extra(api: httpx.AsyncClient) -> None:
    doc = await allocate(api, resource_class="none")
    resp = await api.patch(f"/v1/allocations/{doc['uuid']}", json=[
        {"op": "replace", "path": "/name", "value": "mine"},
        {"op": "add", "path": "/extra/answer", "value": 42}])
    assert resp.status_code == 200, resp.text
    assert (resp.json()["name"], resp.json()["extra"]) == ("mine", {"answer": 42})
    assert (await api.get("/v1/allocations/mine")).json()["uuid"] == doc["uuid"]
    resp = await api.patch("/v1/allocations/mine", json=[
        {"op": "remove", "path": "/name"}, {"op": "remove", "path": "/extra/answer"}])
    assert (resp.json()["name"], resp.json()["extra"]) == (None, {})


async def test_patch_of_the_resource_class_is_400(api: httpx.AsyncClient) -> None:
    doc = await allocate(api, resource_class="none")
    resp = await api.patch(f"/v1/allocations/{doc['uuid']}", json=[
        {"op": "replace", "path": "/resource_class", "value": "gold"}])
    assert resp.status_code == 400


async def test_a_duplicate_name_is_409(api: httpx.AsyncClient) -> None:
    await allocate(api, resource_class="none", name="twin")
    resp = await api.post("/v1/allocations", json={"resource_class": "none", "name": "twin"})
    assert resp.status_code == 409
    assert fault(resp) == "An allocation with name twin already exists."


@pytest.mark.parametrize(("body", "words"), [
    ({}, "The resource_class field is mandatory when not backfilling"),
    ({"resource_class": "gold", "name": "no spaces"},
     "Cannot create allocation with invalid name 'no spaces'"),
    ({"resource_class": "gold", "traits": ["lower"]},
     "Invalid input for field 'traits': Value error, 'lower' does not match"),
    ({"resource_class": "gold", "candidate_nodes": ["nowhere", "banana?"]},
     "candidate_nodes: Nodes cannot be found: nowhere, banana?"),
    ({"resource_class": "gold", "colour": "red"}, "colour"),
    ({"resource_class": "x" * 81},
     "Invalid input for field 'resource_class': the value is too long"),
    ({"resource_class": "gold", "uuid": "not-a-uuid"}, "Expected UUID for uuid: not-a-uuid"),
])
async def test_bad_create_is_400_naming_the_field(api: httpx.AsyncClient, body: dict[str, Any],
                                                  words: str) -> None:
    resp = await api.post("/v1/allocations", json=body)
    assert resp.status_code == 400, resp.text
    assert words in fault(resp)
    assert (await api.get("/v1/allocations")).json()["allocations"] == []


async def test_backfill_gives_an_active_node_its_allocation(api: httpx.AsyncClient) -> None:
    node = await available(api)
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "active"})
    await wait_for(api, node["uuid"], provision="active")
    resp = await api.post("/v1/allocations", json={"node": node["uuid"]})
    assert resp.status_code == 201, resp.text
    doc = resp.json()
    assert (doc["state"], doc["node_uuid"], doc["resource_class"]) == (
        "active", node["uuid"], "gold")
    shown = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert shown["allocation_uuid"] == shown["instance_uuid"] == doc["uuid"]


async def test_backfill_of_a_node_not_active_is_400_and_leaves_an_error(
        api: httpx.AsyncClient) -> None:
    node = await available(api)
    resp = await api.post("/v1/allocations", json={"node": node["uuid"], "name": "late"})
    assert resp.status_code == 400
    assert 'Node must be in the "active" state' in fault(resp)
    assert (await api.get("/v1/allocations/late")).json()["state"] == "error"


async def test_backfill_needs_version_1_58(api: httpx.AsyncClient) -> None:
    node = await available(api)
    resp = await api.post("/v1/allocations", json={"node": node["uuid"]},
                          headers={"X-OpenStack-Ironic-API-Version": "1.57"})
    assert resp.status_code == 400
    assert fault(resp) == "Cannot set node when creating an allocation in this API version"


async def test_allocations_do_not_exist_below_1_52(api: httpx.AsyncClient) -> None:
    old = {"X-OpenStack-Ironic-API-Version": "1.51"}
    resp = await api.get("/v1/allocations", headers=old)
    assert resp.status_code == 404
    assert fault(resp) == "The API version does not allow allocations"
    assert (await api.post("/v1/allocations", json={"resource_class": "gold"},
                           headers=old)).status_code == 405
    node = await available(api)
    assert (await api.get(f"/v1/nodes/{node['uuid']}/allocation",
                          headers=old)).status_code == 404
    assert "allocation_uuid" not in (await api.get(f"/v1/nodes/{node['uuid']}",
                                                   headers=old)).json()


async def test_patch_needs_version_1_57(api: httpx.AsyncClient) -> None:
    doc = await allocate(api, resource_class="none")
    resp = await api.patch(f"/v1/allocations/{doc['uuid']}",
                           json=[{"op": "add", "path": "/name", "value": "n"}],
                           headers={"X-OpenStack-Ironic-API-Version": "1.56"})
    assert resp.status_code == 405


async def test_owner_is_shown_from_1_60(api: httpx.AsyncClient) -> None:
    doc = await allocate(api, resource_class="none", owner="project-a")
    assert doc["owner"] == "project-a"
    older = (await api.get(f"/v1/allocations/{doc['uuid']}",
                           headers={"X-OpenStack-Ironic-API-Version": "1.59"})).json()
    assert "owner" not in older
    listed = (await api.get("/v1/allocations",
                            headers={"X-OpenStack-Ironic-API-Version": "1.59"})).json()
    assert "owner" not in listed["allocations"][0]


async def test_an_owned_allocation_takes_only_the_owners_nodes(api: httpx.AsyncClient) -> None:
    await available(api, owner="project-b")
    mine = await available(api, owner="project-a")
    doc = await allocate(api, resource_class="gold", owner="project-a")
    assert doc["node_uuid"] == mine["uuid"]
