"""`POST /v1/nodes/{node}/changes` (ironsight only, member): a node PATCH, trait changes and
history events in one request and one transaction, as discoverd writes an inspection's
outcome. All of it or nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from ironsight.baremetal.api.app import ACCESS
from ironsight.baremetal.db.models import nodes
from ironsight.baremetal.service import BaremetalService
from ironsight.common.auth.identity import Role

from .helpers import create_node, fault

CHANGES = {
    "patch": [{"op": "add", "path": "/properties/cpus", "value": 8},
              {"op": "replace", "path": "/resource_class", "value": "baremetal.large"}],
    "add_traits": ["CUSTOM_GPU", "HW_CPU_X86_AVX2"],
    "remove_traits": ["CUSTOM_OLD"],
    "events": [{"event": "Inspection rules matched: r1: add trait CUSTOM_GPU"}],
}


async def state_of(api: httpx.AsyncClient, uuid: str) -> tuple[Any, ...]:
    node = (await api.get(f"/v1/nodes/{uuid}")).json()
    history = (await api.get(f"/v1/nodes/{uuid}/history",
                             params={"detail": "true"})).json()["history"]
    return (node["properties"], node["resource_class"], node["traits"],
            [(e["event"], e["event_type"]) for e in history])


async def node_with_trait(api: httpx.AsyncClient, trait: str = "CUSTOM_OLD") -> str:
    node = await create_node(api)
    assert (await api.put(f"/v1/nodes/{node['uuid']}/traits/{trait}")).status_code == 204
    return str(node["uuid"])


async def test_a_patch_traits_and_an_event_are_applied_together(
        api: httpx.AsyncClient) -> None:
    uuid = await node_with_trait(api)
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json=CHANGES)
    assert resp.status_code == 204, resp.text
    properties, resource_class, traits, history = await state_of(api, uuid)
    assert properties == {"cpus": 8}
    assert resource_class == "baremetal.large"
    assert traits == ["CUSTOM_GPU", "HW_CPU_X86_AVX2"]
    assert history[-3:] == [
        ("Node updated: properties, resource_class", "update"),
        ("Traits set: CUSTOM_GPU, HW_CPU_X86_AVX2", "update"),
        ("Inspection rules matched: r1: add trait CUSTOM_GPU", "inspection")]


async def test_adding_a_trait_it_has_and_removing_one_it_lacks_change_nothing(
        api: httpx.AsyncClient) -> None:
    uuid = await node_with_trait(api, "CUSTOM_A")
    before = await state_of(api, uuid)
    resp = await api.post(f"/v1/nodes/{uuid}/changes",
                          json={"add_traits": ["CUSTOM_A"], "remove_traits": ["CUSTOM_B"]})
    assert resp.status_code == 204, resp.text
    assert await state_of(api, uuid) == before


@pytest.mark.parametrize(("body", "named"), [
    ({**CHANGES, "patch": [{"op": "add", "path": "/no_such_field", "value": 1}]},
     "no_such_field"),
    ({**CHANGES, "patch": [{"op": "replace", "path": "/resource_class", "value": 3}]},
     "resource_class"),
    ({**CHANGES, "add_traits": ["not-a-trait"]}, "not-a-trait"),
    ({**CHANGES, "add_traits": [f"CUSTOM_T{i}" for i in range(51)]}, "add_traits"),
    ({**CHANGES, "events": [{"event": ""}]}, "event"),
    ({**CHANGES, "events": [{"event": "e", "severity": "LOUD"}]}, "severity"),
    ({**CHANGES, "colour": "red"}, "colour"),
    ([], "body"),
])
async def test_bad_input_is_400_naming_it_and_changes_nothing(
        api: httpx.AsyncClient, body: Any, named: str) -> None:
    uuid = await node_with_trait(api)
    before = await state_of(api, uuid)
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json=body)
    assert resp.status_code == 400, resp.text
    assert named in fault(resp)
    assert await state_of(api, uuid) == before


async def test_more_than_fifty_traits_in_all_is_400_and_changes_nothing(
        api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    uuid = node["uuid"]
    have = [f"CUSTOM_H{i}" for i in range(45)]
    assert (await api.put(f"/v1/nodes/{uuid}/traits", json={"traits": have})).status_code == 204
    before = await state_of(api, uuid)
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={
        **CHANGES, "add_traits": [f"CUSTOM_N{i}" for i in range(10)]})
    assert resp.status_code == 400
    assert "maximum number of traits" in fault(resp)
    assert await state_of(api, uuid) == before


async def test_a_locked_node_is_409_and_changes_nothing(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    uuid = await node_with_trait(api)
    before = await state_of(api, uuid)
    async with service.db.begin() as conn:
        await conn.execute(update(nodes).where(nodes.c.uuid == uuid)
                           .values(reservation="other-host:1"))
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json=CHANGES)
    assert resp.status_code == 409
    assert "is locked by host other-host:1" in fault(resp)
    assert await state_of(api, uuid) == before


async def test_concurrent_changes_lose_no_trait(api: httpx.AsyncClient) -> None:
    """Each change is computed on the traits the one before it left (the lock epoch
    fences the write), so none is lost; one that kept losing the race is a 409."""
    uuid = (await create_node(api))["uuid"]
    wanted = [f"CUSTOM_C{i}" for i in range(6)]
    answers = await asyncio.gather(*(
        api.post(f"/v1/nodes/{uuid}/changes", json={"add_traits": [t]}) for t in wanted))
    assert {a.status_code for a in answers} <= {204, 409}
    landed = {t for t, a in zip(wanted, answers, strict=True) if a.status_code == 204}
    traits = (await api.get(f"/v1/nodes/{uuid}/traits")).json()["traits"]
    assert set(traits) == landed and landed


async def test_changes_to_an_unknown_node_are_404(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes/no-such-node/changes", json=CHANGES)
    assert resp.status_code == 404


def test_posting_changes_needs_a_member_as_a_patch_does() -> None:
    """discoverd's service user is a member (docs/security.md); the events it records
    carry its name, as every history event carries its user's."""
    assert ACCESS.required("POST", "/v1/nodes/n1/changes") is Role.MEMBER


# --- the node's ports with its changes -------------------------------------------------------


async def node_with_ports(api: httpx.AsyncClient, *macs: str) -> tuple[str, list[str]]:
    uuid = await node_with_trait(api)
    ports = []
    for mac in macs:
        resp = await api.post("/v1/ports", json={"address": mac, "node_uuid": uuid})
        assert resp.status_code == 201, resp.text
        ports.append(str(resp.json()["uuid"]))
    return uuid, ports


async def port_fields(api: httpx.AsyncClient, port: str) -> tuple[Any, ...]:
    doc = (await api.get(f"/v1/ports/{port}")).json()
    return doc["pxe_enabled"], doc["local_link_connection"], doc["extra"]


async def test_port_patches_are_applied_with_the_nodes_changes(api: httpx.AsyncClient) -> None:
    uuid, (p1, p2) = await node_with_ports(api, "52:54:00:aa:00:01", "52:54:00:aa:00:02")
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={**CHANGES, "ports": [
        {"uuid": p2, "patch": [{"op": "replace", "path": "/pxe_enabled", "value": False}]},
        {"uuid": p1, "patch": [{"op": "add", "path": "/local_link_connection/port_id",
                                "value": "Ethernet1/7"}]}]})
    assert resp.status_code == 204, resp.text
    assert await port_fields(api, p1) == (True, {"port_id": "Ethernet1/7"}, {})
    assert await port_fields(api, p2) == (False, {}, {})
    assert (await state_of(api, uuid))[0] == {"cpus": 8}


async def test_port_patches_alone_change_only_the_ports(api: httpx.AsyncClient) -> None:
    uuid, (port,) = await node_with_ports(api, "52:54:00:aa:00:03")
    before = await state_of(api, uuid)
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={"ports": [
        {"uuid": port, "patch": [{"op": "add", "path": "/extra/rack", "value": "r7"}]}]})
    assert resp.status_code == 204, resp.text
    assert await port_fields(api, port) == (True, {}, {"rack": "r7"})
    assert await state_of(api, uuid) == before


@pytest.mark.parametrize(("patch", "named"), [
    ([{"op": "replace", "path": "/node_uuid", "value": "x"}], "ports[1].patch"),
    ([{"op": "add", "path": "/portgroup_uuid", "value": "x"}], "ports[1].patch"),
    ([{"op": "replace", "path": "/pxe_enabled", "value": "maybe"}], "pxe_enabled"),
    ([{"op": "add", "path": "/colour", "value": "red"}], "colour"),
])
async def test_a_bad_port_patch_is_400_naming_it_and_changes_nothing(
        api: httpx.AsyncClient, patch: list[Any], named: str) -> None:
    uuid, (p1, p2) = await node_with_ports(api, "52:54:00:aa:00:04", "52:54:00:aa:00:05")
    before = (await state_of(api, uuid), await port_fields(api, p1), await port_fields(api, p2))
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={**CHANGES, "ports": [
        {"uuid": p1, "patch": [{"op": "replace", "path": "/pxe_enabled", "value": False}]},
        {"uuid": p2, "patch": patch}]})
    assert resp.status_code == 400, resp.text
    assert named in fault(resp)
    assert (await state_of(api, uuid), await port_fields(api, p1),
            await port_fields(api, p2)) == before


async def test_a_port_of_another_node_is_400_and_changes_nothing(
        api: httpx.AsyncClient) -> None:
    uuid, _ = await node_with_ports(api, "52:54:00:aa:00:06")
    _, (theirs,) = await node_with_ports(api, "52:54:00:aa:00:07")
    before = (await state_of(api, uuid), await port_fields(api, theirs))
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={**CHANGES, "ports": [
        {"uuid": theirs, "patch": [{"op": "replace", "path": "/pxe_enabled",
                                    "value": False}]}]})
    assert resp.status_code == 400
    assert f"Port {theirs} is not a port of node {uuid}" in fault(resp)
    assert (await state_of(api, uuid), await port_fields(api, theirs)) == before


async def test_an_unknown_port_is_404_and_changes_nothing(api: httpx.AsyncClient) -> None:
    uuid, _ = await node_with_ports(api, "52:54:00:aa:00:08")
    before = await state_of(api, uuid)
    missing = "4b1d2d57-5a4c-4c1e-9a8e-2f0f3f0d7c11"
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={**CHANGES, "ports": [
        {"uuid": missing, "patch": []}]})
    assert resp.status_code == 404
    assert f"Port {missing} could not be found" in fault(resp)
    assert await state_of(api, uuid) == before


async def test_a_port_locked_meanwhile_is_409_and_changes_nothing(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    uuid, (port,) = await node_with_ports(api, "52:54:00:aa:00:09")
    before = (await state_of(api, uuid), await port_fields(api, port))
    async with service.db.begin() as conn:
        await conn.execute(update(nodes).where(nodes.c.uuid == uuid)
                           .values(reservation="other-host:1"))
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={**CHANGES, "ports": [
        {"uuid": port, "patch": [{"op": "replace", "path": "/pxe_enabled", "value": False}]}]})
    assert resp.status_code == 409
    assert (await state_of(api, uuid), await port_fields(api, port)) == before


# --- GET /v1/nodes/{node}/snapshot -----------------------------------------------------------


async def test_a_snapshot_is_the_node_and_its_ports_as_their_own_calls_show_them(
        api: httpx.AsyncClient) -> None:
    uuid, _ = await node_with_ports(api, "52:54:00:aa:00:0a", "52:54:00:aa:00:0b")
    resp = await api.get(f"/v1/nodes/{uuid}/snapshot")
    assert resp.status_code == 200, resp.text
    node = (await api.get(f"/v1/nodes/{uuid}")).json()
    ports = (await api.get("/v1/ports/detail", params={"node": uuid})).json()["ports"]
    assert resp.json() == {"node": node, "ports": ports}


async def test_a_snapshot_shows_only_the_nodes_fields_asked_for(
        api: httpx.AsyncClient) -> None:
    uuid, _ = await node_with_ports(api, "52:54:00:aa:00:0c")
    fields = {"fields": "uuid,properties,traits"}
    resp = await api.get(f"/v1/nodes/{uuid}/snapshot", params=fields)
    assert resp.status_code == 200, resp.text
    assert resp.json()["node"] == (await api.get(f"/v1/nodes/{uuid}", params=fields)).json()
    assert set(resp.json()["node"]) - {"links"} == {"uuid", "properties", "traits"}
    assert [p["address"] for p in resp.json()["ports"]] == ["52:54:00:aa:00:0c"]


async def test_a_snapshot_of_an_unknown_node_is_404(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes/no-such-node/snapshot")
    assert resp.status_code == 404
    assert "no-such-node could not be found" in fault(resp)


async def test_a_snapshot_with_an_unknown_field_is_400_naming_it(
        api: httpx.AsyncClient) -> None:
    uuid, _ = await node_with_ports(api)
    resp = await api.get(f"/v1/nodes/{uuid}/snapshot", params={"fields": "uuid,colour"})
    assert resp.status_code == 400
    assert "colour" in fault(resp)


async def test_a_port_patch_of_its_physical_network_is_checked_and_applied(
        api: httpx.AsyncClient) -> None:
    uuid, (port,) = await node_with_ports(api, "52:54:00:aa:00:0d")
    resp = await api.post(f"/v1/nodes/{uuid}/changes", json={"ports": [
        {"uuid": port, "patch": [{"op": "add", "path": "/physical_network",
                                  "value": "physnet1"}]}]})
    assert resp.status_code == 204, resp.text
    assert (await api.get(f"/v1/ports/{port}")).json()["physical_network"] == "physnet1"
