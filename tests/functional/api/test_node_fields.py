"""Every node field of the advertised versions: stored, validated, patched, shown per
microversion as Ironic 39 does (fake-hardware, Ironic's name for the fake type)."""

from __future__ import annotations

import httpx
import pytest
from tests.functional.api.helpers import create_node, fault, manage

pytestmark = pytest.mark.functional


async def patch(api: httpx.AsyncClient, node: str, *ops: dict[str, object]) -> httpx.Response:
    return await api.patch(f"/v1/nodes/{node}", json=list(ops))


async def test_a_node_is_created_with_fake_hardware(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    assert node["driver"] == "fake-hardware"
    assert node["boot_interface"] == "fake" and node["power_interface"] == "fake"


async def test_fake_stays_an_alias_of_fake_hardware(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake")
    assert node["driver"] == "fake"
    assert node["management_interface"] == "fake"


async def test_create_takes_the_fields_openstacksdk_sends(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware", resource_class="baremetal-gold",
                             network_interface="noop", firmware_interface="no-firmware",
                             owner="project-a", lessee="project-b", description="rack 4",
                             shard="s1", conductor_group="Group-A", automated_clean="false")
    assert node["resource_class"] == "baremetal-gold"
    assert node["network_interface"] == "noop"
    assert node["firmware_interface"] == "no-firmware"
    assert (node["owner"], node["lessee"], node["shard"]) == ("project-a", "project-b", "s1")
    assert node["conductor_group"] == "group-a"
    assert node["automated_clean"] is False


async def test_an_interface_the_type_does_not_have_is_refused_naming_it(
        api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake-hardware",
                                             "network_interface": "neutron"})
    assert resp.status_code == 400
    assert "'ironic.hardware.interfaces.network' entrypoint: neutron" in fault(resp)
    assert "Valid interfaces are ['flat', 'noop']" in fault(resp)


async def test_a_resource_class_longer_than_80_is_refused(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake-hardware",
                                             "resource_class": "x" * 81})
    assert resp.status_code == 400
    assert "resource_class" in fault(resp)


async def test_a_field_newer_than_the_request_is_not_acceptable(
        api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake-hardware", "shard": "s1"},
                          headers={"X-OpenStack-Ironic-API-Version": "1.81"})
    assert resp.status_code == 406


async def test_fields_are_shown_from_their_microversion(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    old = (await api.get(f"/v1/nodes/{node['uuid']}",
                         headers={"X-OpenStack-Ironic-API-Version": "1.60"})).json()
    assert "owner" in old and "retired" not in old and "instance_name" not in old
    new = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert new["retired"] is False and new["instance_name"] is None and new["traits"] == []


async def test_retired_is_patched_with_string_booleans(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    resp = await patch(api, node["uuid"], {"op": "replace", "path": "/retired", "value": "True"},
                       {"op": "add", "path": "/retired_reason", "value": "old"})
    assert resp.status_code == 200, resp.text
    assert (resp.json()["retired"], resp.json()["retired_reason"]) == (True, "old")
    resp = await patch(api, node["uuid"], {"op": "replace", "path": "/retired", "value": False})
    assert (resp.json()["retired"], resp.json()["retired_reason"]) == (False, None)


async def test_a_retired_reason_without_retired_is_refused(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    resp = await patch(api, node["uuid"],
                       {"op": "add", "path": "/retired_reason", "value": "why"})
    assert resp.status_code == 400
    assert "retired_reason" in fault(resp)


async def test_an_available_node_cannot_be_retired(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    await manage(api, node["uuid"])
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "provide"})
    resp = await patch(api, node["uuid"], {"op": "replace", "path": "/retired", "value": True})
    assert resp.status_code == 409
    assert "available" in fault(resp)


async def test_only_a_deployed_node_can_be_protected(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    resp = await patch(api, node["uuid"], {"op": "replace", "path": "/protected", "value": True})
    assert resp.status_code == 409
    assert "protected" in fault(resp)


async def test_instance_name_is_patched_and_removed(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    resp = await patch(api, node["uuid"],
                       {"op": "add", "path": "/instance_name", "value": "web-1"})
    assert resp.json()["instance_name"] == "web-1"
    resp = await patch(api, node["uuid"], {"op": "remove", "path": "/instance_name"})
    assert resp.json()["instance_name"] is None


async def test_instance_name_comes_from_display_name_unless_set(
        api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    resp = await patch(api, node["uuid"], {"op": "add", "path": "/instance_info",
                                           "value": {"display_name": "shown"}})
    assert resp.json()["instance_name"] == "shown"
    await patch(api, node["uuid"],
                {"op": "replace", "path": "/instance_name", "value": "explicit"})
    resp = await patch(api, node["uuid"], {"op": "replace", "path": "/instance_info",
                                           "value": {"display_name": "other"}})
    assert resp.json()["instance_name"] == "explicit"


async def test_nodes_are_listed_by_instance_name(api: httpx.AsyncClient) -> None:
    one = await create_node(api, driver="fake-hardware", name="one")
    await create_node(api, driver="fake-hardware", name="two")
    await patch(api, one["uuid"], {"op": "add", "path": "/instance_name", "value": "i-1"})
    found = (await api.get("/v1/nodes?instance_name=i-1")).json()["nodes"]
    assert [n["uuid"] for n in found] == [one["uuid"]]


async def test_nodes_are_listed_by_resource_class(api: httpx.AsyncClient) -> None:
    gold = await create_node(api, driver="fake-hardware", resource_class="gold")
    await create_node(api, driver="fake-hardware", resource_class="silver")
    found = (await api.get("/v1/nodes?resource_class=gold")).json()["nodes"]
    assert [n["uuid"] for n in found] == [gold["uuid"]]


async def test_maintenance_is_patched_and_its_reason_cleared(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="fake-hardware")
    resp = await patch(api, node["uuid"], {"op": "replace", "path": "/maintenance", "value": True},
                       {"op": "add", "path": "/maintenance_reason", "value": "fan"})
    assert (resp.json()["maintenance"], resp.json()["maintenance_reason"]) == (True, "fan")
    resp = await patch(api, node["uuid"],
                       {"op": "replace", "path": "/maintenance", "value": False})
    assert (resp.json()["maintenance"], resp.json()["maintenance_reason"]) == (False, None)


async def test_driver_details_list_every_accepted_interface(api: httpx.AsyncClient) -> None:
    doc = (await api.get("/v1/drivers/fake-hardware")).json()
    assert doc["default_power_interface"] == "fake"
    assert doc["enabled_network_interfaces"] == ["noop", "flat"]
    assert "no-firmware" in doc["enabled_firmware_interfaces"]


async def test_removing_an_interface_resets_it_to_the_hardware_types_default(
        api: httpx.AsyncClient) -> None:
    node = (await api.post("/v1/nodes", json={"driver": "fake-hardware",
                                               "console_interface": "no-console"})).json()
    assert node["console_interface"] == "no-console"
    resp = await api.patch(f"/v1/nodes/{node['uuid']}", json=[
        {"op": "remove", "path": "/console_interface"}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["console_interface"] == "fake"
