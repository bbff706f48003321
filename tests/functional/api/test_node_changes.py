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
