"""Bad input gets the right status and a message naming the problem, and changes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .helpers import create_node, fault


async def node_count(api: httpx.AsyncClient) -> int:
    return len((await api.get("/v1/nodes")).json()["nodes"])


@pytest.mark.parametrize(("body", "field"), [
    ({"driver": "fake", "name": 5}, "name"),
    ({"driver": "fake", "properties": "cpus=4"}, "properties"),
    ({"driver": "fake", "colour": "red"}, "colour"),
    ({"name": "x"}, "driver"),
    ({"driver": "fake", "name": "has space"}, "name"),
    ({"driver": "fake", "name": "0b751d19-92e0-41ae-9a37-99bfd7c5121a"}, "name"),
    ({"driver": "fake", "uuid": "not-a-uuid"}, "uuid"),
])
async def test_invalid_node_body_names_the_field(api: httpx.AsyncClient, body: dict[str, Any],
                                                 field: str) -> None:
    resp = await api.post("/v1/nodes", json=body)
    assert resp.status_code == 400
    assert field in fault(resp)
    assert await node_count(api) == 0


async def test_unknown_driver_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "nosuch"})
    assert resp.status_code == 400
    assert "supports driver nosuch" in fault(resp)
    assert await node_count(api) == 0


async def test_duplicate_name_is_409_and_keeps_the_first(api: httpx.AsyncClient) -> None:
    first = await create_node(api, name="dup")
    resp = await api.post("/v1/nodes", json={"driver": "fake", "name": "dup"})
    assert resp.status_code == 409
    assert fault(resp) == "A node with name dup already exists."
    docs = (await api.get("/v1/nodes")).json()["nodes"]
    assert [d["uuid"] for d in docs] == [first["uuid"]]


async def test_duplicate_mac_is_409(api: httpx.AsyncClient) -> None:
    a, b = await create_node(api), await create_node(api)
    await api.post("/v1/ports", json={"address": "52:54:00:00:00:01", "node_uuid": a["uuid"]})
    resp = await api.post("/v1/ports", json={"address": "52:54:00:00:00:01",
                                             "node_uuid": b["uuid"]})
    assert resp.status_code == 409
    assert "52:54:00:00:00:01 already exists" in fault(resp)
    assert len((await api.get("/v1/ports")).json()["ports"]) == 1


async def test_bad_mac_is_400(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.post("/v1/ports", json={"address": "52:54:00:00:01",
                                             "node_uuid": node["uuid"]})
    assert resp.status_code == 400
    assert "address" in fault(resp) and "MAC address" in fault(resp)


async def test_node_name_in_port_node_uuid_is_400(api: httpx.AsyncClient) -> None:
    await create_node(api, name="demo")
    resp = await api.post("/v1/ports", json={"address": "52:54:00:00:00:01", "node_uuid": "demo"})
    assert resp.status_code == 400
    assert "Expected UUID for node_uuid: demo" in fault(resp)


async def test_malformed_json_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", content=b"{not json",
                          headers={"Content-Type": "application/json"})
    assert resp.status_code == 400
    assert "not valid JSON" in fault(resp)


async def test_body_must_be_an_object(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json=["fake"])
    assert resp.status_code == 400


async def test_oversized_body_is_413(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake", "extra": {"x": "a" * 2_000_000}})
    assert resp.status_code == 413
    assert "limit" in fault(resp)
    assert await node_count(api) == 0


async def test_deeply_nested_body_is_400_naming_the_limit_and_creates_nothing(
        api: httpx.AsyncClient) -> None:
    for depth in (40, 300_000):  # past [api] max_json_depth, and past Python's own limit
        body = '{"driver": "fake", "extra": {"x": ' + "[" * depth + "]" * depth + "}}"
        resp = await api.post("/v1/nodes", content=body,
                              headers={"Content-Type": "application/json"})
        assert resp.status_code == 400, (depth, resp.text)
        assert "nested more than 25 levels deep" in fault(resp)
    assert await node_count(api) == 0


async def test_patch_of_read_only_field_is_400_and_changes_nothing(
        api: httpx.AsyncClient) -> None:
    node = await create_node(api, name="keep")
    resp = await api.patch(f"/v1/nodes/{node['uuid']}", json=[
        {"op": "replace", "path": "/name", "value": "changed"},
        {"op": "replace", "path": "/provision_state", "value": "available"}])
    assert resp.status_code == 400
    assert "/provision_state" in fault(resp)
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert (doc["name"], doc["provision_state"], doc["reservation"]) == ("keep", "enroll", None)


async def test_patch_with_wrong_type_is_400(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                           json=[{"op": "replace", "path": "/driver_info", "value": "x"}])
    assert resp.status_code == 400
    assert "driver_info" in fault(resp)


async def test_patch_to_duplicate_name_is_409_and_releases_lock(api: httpx.AsyncClient) -> None:
    await create_node(api, name="taken")
    node = await create_node(api, name="mine")
    resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                           json=[{"op": "replace", "path": "/name", "value": "taken"}])
    assert resp.status_code == 409
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert (doc["name"], doc["reservation"]) == ("mine", None)


async def test_unknown_provision_target_names_the_field(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "explode"})
    assert resp.status_code == 400
    assert "target" in fault(resp)


async def test_unknown_power_target_names_the_field(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/power", json={"target": "explode"})
    assert resp.status_code == 400
    assert "target" in fault(resp)
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["reservation"] is None


async def test_unknown_boot_device_is_400(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.put(f"/v1/nodes/{node['uuid']}/management/boot_device",
                         json={"boot_device": "floppy"})
    assert resp.status_code == 400
    assert "boot_device" in fault(resp)


async def test_unknown_query_parameter_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes?colour=red")
    assert resp.status_code == 400
    assert "colour" in fault(resp)


async def test_bad_limit_is_400(api: httpx.AsyncClient) -> None:
    assert (await api.get("/v1/nodes?limit=-1")).status_code == 400
    assert (await api.get("/v1/nodes?limit=abc")).status_code == 400


async def test_bad_marker_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes?marker=0b751d19-92e0-41ae-9a37-99bfd7c5121a")
    assert resp.status_code == 400
    assert "marker" in fault(resp)


async def test_invalid_fields_are_named(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes?fields=uuid,colour")
    assert resp.status_code == 400
    assert "colour" in fault(resp)


async def test_bad_sort_key_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes?sort_key=driver_info")
    assert resp.status_code == 400
    assert "sort_key" in fault(resp)


async def test_delete_while_verifying_is_refused(api: httpx.AsyncClient, service: Any) -> None:
    from sqlalchemy import update

    from ironsight.baremetal.db.models import nodes

    node = await create_node(api)
    async with service.db.begin() as conn:
        await conn.execute(update(nodes).where(nodes.c.uuid == node["uuid"])
                           .values(provision_state="inspect wait"))
    resp = await api.delete(f"/v1/nodes/{node['uuid']}")
    assert resp.status_code == 400
    assert "inspect wait" in fault(resp)
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["reservation"] is None
