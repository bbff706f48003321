"""Node resource: create, list, show, update, delete, and the provision state machine."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ironsight.baremetal.service import BaremetalService

from .helpers import create_node, fault, manage, wait_for


async def test_created_node_starts_in_enroll(api: httpx.AsyncClient) -> None:
    node = await create_node(api, name="n1")
    assert node["provision_state"] == "enroll"
    assert node["power_state"] is None
    assert node["power_interface"] == "fake"


async def test_created_node_before_1_11_starts_available(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake"},
                          headers={"X-OpenStack-Ironic-API-Version": "1.10"})
    assert resp.json()["provision_state"] == "available"


async def test_create_returns_location(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake"})
    assert resp.headers["Location"].endswith(f"/v1/nodes/{resp.json()['uuid']}")


async def test_show_by_name_and_by_uuid(api: httpx.AsyncClient) -> None:
    node = await create_node(api, name="by-name")
    assert (await api.get("/v1/nodes/by-name")).json()["uuid"] == node["uuid"]
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["name"] == "by-name"


async def test_show_missing_node_is_404(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes/ghost")
    assert resp.status_code == 404
    assert fault(resp) == "Node ghost could not be found."


async def test_secrets_in_driver_info_are_masked(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver_info={"ipmi_password": "s3cret", "ipmi_address": "a"})
    shown = (await api.get(f"/v1/nodes/{node['uuid']}")).json()["driver_info"]
    assert shown == {"ipmi_password": "******", "ipmi_address": "a"}
    listed = (await api.get("/v1/nodes/detail")).json()["nodes"][0]["driver_info"]
    assert listed["ipmi_password"] == "******"


async def test_list_shows_short_documents(api: httpx.AsyncClient) -> None:
    await create_node(api, name="a")
    doc = (await api.get("/v1/nodes")).json()["nodes"][0]
    assert set(doc) == {"uuid", "name", "instance_uuid", "power_state", "provision_state",
                        "maintenance", "links"}


async def test_list_fields_selects_fields(api: httpx.AsyncClient) -> None:
    await create_node(api, name="a", properties={"cpus": 2})
    doc = (await api.get("/v1/nodes?fields=uuid,properties")).json()["nodes"][0]
    assert set(doc) == {"uuid", "properties", "links"}
    assert doc["properties"] == {"cpus": 2}


async def test_list_pages_with_limit_and_marker(api: httpx.AsyncClient) -> None:
    uuids = [(await create_node(api))["uuid"] for _ in range(5)]
    first = (await api.get("/v1/nodes?limit=2")).json()
    assert [n["uuid"] for n in first["nodes"]] == uuids[:2]
    assert f"marker={uuids[1]}" in first["next"]
    second = (await api.get(f"/v1/nodes?limit=2&marker={uuids[1]}")).json()
    assert [n["uuid"] for n in second["nodes"]] == uuids[2:4]


async def test_list_sorts_by_name_descending(api: httpx.AsyncClient) -> None:
    for name in ("b", "a", "c"):
        await create_node(api, name=name)
    docs = (await api.get("/v1/nodes?sort_key=name&sort_dir=desc")).json()["nodes"]
    assert [d["name"] for d in docs] == ["c", "b", "a"]


async def test_list_filters_by_provision_state(api: httpx.AsyncClient) -> None:
    a = await create_node(api)
    await create_node(api)
    await manage(api, a["uuid"])
    docs = (await api.get("/v1/nodes?provision_state=manageable")).json()["nodes"]
    assert [d["uuid"] for d in docs] == [a["uuid"]]


async def test_patch_adds_and_removes_properties(api: httpx.AsyncClient) -> None:
    node = await create_node(api, properties={"cpus": 1})
    resp = await api.patch(f"/v1/nodes/{node['uuid']}", json=[
        {"op": "add", "path": "/properties/memory_mb", "value": 2048},
        {"op": "remove", "path": "/properties/cpus"}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["properties"] == {"memory_mb": 2048}


async def test_patch_records_history(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    await api.patch(f"/v1/nodes/{node['uuid']}",
                    json=[{"op": "add", "path": "/extra/rack", "value": "r1"}])
    events = (await api.get(f"/v1/nodes/{node['uuid']}/history")).json()["history"]
    assert events[-1]["event"] == "Node updated: extra"


async def test_delete_removes_node_and_ports(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    await api.post("/v1/ports", json={"address": "52:54:00:00:00:01", "node_uuid": node["uuid"]})
    assert (await api.delete(f"/v1/nodes/{node['uuid']}")).status_code == 204
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).status_code == 404
    assert (await api.get("/v1/ports")).json()["ports"] == []


async def test_manage_verifies_and_reads_power_state(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    doc = await manage(api, node["uuid"])
    assert doc["power_state"] == "power off"
    history = (await api.get(f"/v1/nodes/{node['uuid']}/history")).json()["history"]
    events = [e["event"] for e in history]
    assert "Provision state changed from verifying to manageable (done)" in events


async def test_manage_fails_back_to_enroll_when_driver_info_is_invalid(
        api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info={})
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "manage"})
    doc = await wait_for(api, node["uuid"], provision="enroll")
    assert "ipmi_address" in doc["last_error"]


async def test_provide_and_manage_again(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    await manage(api, node["uuid"])
    url = f"/v1/nodes/{node['uuid']}/states/provision"
    assert (await api.put(url, json={"target": "provide"})).status_code == 202
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["provision_state"] == "available"
    assert (await api.put(url, json={"target": "manage"})).status_code == 202
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["provision_state"] == "manageable"


async def test_inspect_with_fake_driver_returns_to_manageable(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    await manage(api, node["uuid"])
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "inspect"})
    assert resp.status_code == 202
    doc = await wait_for(api, node["uuid"], provision="manageable")
    assert doc["inspection_finished_at"] is not None


async def test_inspect_with_discoverd_disabled_is_refused_with_explanation(
        api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="pxe_ipmitool",
                             driver_info={"ipmi_address": "127.0.0.1"})
    await api.patch(f"/v1/nodes/{node['uuid']}",
                    json=[{"op": "replace", "path": "/driver", "value": "fake"}])
    await manage(api, node["uuid"])
    await api.patch(f"/v1/nodes/{node['uuid']}",
                    json=[{"op": "replace", "path": "/driver", "value": "pxe_ipmitool"}])
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "inspect"})
    assert resp.status_code == 400
    assert "[discoverd] enabled" in fault(resp)
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["provision_state"] == "manageable"


@pytest.mark.parametrize("target", ["inspect", "provide", "abort"])
async def test_illegal_transition_from_enroll_is_400(api: httpx.AsyncClient, target: str) -> None:
    node = await create_node(api)
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": target})
    assert resp.status_code == 400
    assert fault(resp) == (f'The requested action "{target}" can not be performed on node '
                           f'"{node["uuid"]}" while it is in state "enroll".')


async def test_provision_action_needs_a_microversion(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "manage"},
                         headers={"X-OpenStack-Ironic-API-Version": "1.1"})
    assert resp.status_code == 406


async def test_power_on_and_off(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    url = f"/v1/nodes/{node['uuid']}/states/power"
    resp = await api.put(url, json={"target": "power on"})
    assert resp.status_code == 202
    assert (await wait_for(api, node["uuid"], power="power on"))["last_error"] is None
    await api.put(url, json={"target": "power off"})
    await wait_for(api, node["uuid"], power="power off")


async def test_reboot_ends_powered_on(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    await api.put(f"/v1/nodes/{node['uuid']}/states/power", json={"target": "rebooting"})
    await wait_for(api, node["uuid"], power="power on")


async def test_states_document(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    doc = (await api.get(f"/v1/nodes/{node['uuid']}/states")).json()
    assert doc["provision_state"] == "enroll"
    assert {"power_state", "target_power_state", "target_provision_state", "last_error"} <= set(doc)


async def test_boot_device_set_and_get(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    url = f"/v1/nodes/{node['uuid']}/management/boot_device"
    resp = await api.put(url, json={"boot_device": "pxe", "persistent": True})
    assert resp.status_code == 204, resp.text
    assert (await api.get(url)).json() == {"boot_device": "pxe", "persistent": True}


async def test_supported_boot_devices(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    doc = (await api.get(f"/v1/nodes/{node['uuid']}/management/boot_device/supported")).json()
    assert set(doc["supported_boot_devices"]) >= {"pxe", "disk"}


async def test_validate_reports_each_interface(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info={})
    doc = (await api.get(f"/v1/nodes/{node['uuid']}/validate")).json()
    assert doc["power"]["result"] is False
    assert "ipmi_address" in doc["power"]["reason"]


async def test_maintenance_set_and_unset(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    url = f"/v1/nodes/{node['uuid']}/maintenance"
    assert (await api.put(url, json={"reason": "disk swap"})).status_code == 202
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert (doc["maintenance"], doc["maintenance_reason"]) == (True, "disk swap")
    await api.delete(url)
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["maintenance"] is False


async def test_inspect_wait_shown_as_inspecting_before_1_39(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    node = await create_node(api)
    async with service.db.begin() as conn:
        from sqlalchemy import update

        from ironsight.baremetal.db.models import nodes
        await conn.execute(update(nodes).where(nodes.c.uuid == node["uuid"])
                           .values(provision_state="inspect wait"))
    old = await api.get(f"/v1/nodes/{node['uuid']}",
                        headers={"X-OpenStack-Ironic-API-Version": "1.38"})
    assert old.json()["provision_state"] == "inspecting"
    new = await api.get(f"/v1/nodes/{node['uuid']}")
    assert new.json()["provision_state"] == "inspect wait"


async def _force_state(service: Any, uuid: str, **values: Any) -> None:
    from sqlalchemy import update

    from ironsight.baremetal.db.models import nodes

    async with service.db.begin() as conn:
        await conn.execute(update(nodes).where(nodes.c.uuid == uuid).values(**values))


async def test_delete_in_clean_failed_needs_maintenance(api: httpx.AsyncClient,
                                                        service: Any) -> None:
    node = await create_node(api)
    await _force_state(service, node["uuid"], provision_state="clean failed")
    resp = await api.delete(f"/v1/nodes/{node['uuid']}")
    assert resp.status_code == 400
    assert fault(resp).endswith("or set the node into maintenance mode")
    await api.put(f"/v1/nodes/{node['uuid']}/maintenance", json={"reason": "retire"})
    assert (await api.delete(f"/v1/nodes/{node['uuid']}")).status_code == 204


async def test_delete_of_a_node_with_an_instance_is_409_out_of_maintenance(
        api: httpx.AsyncClient, service: Any) -> None:
    node = await create_node(api)
    instance = "7c8ed5c1-6b1f-4f8e-9a43-6d0a6a3b1d2e"
    await _force_state(service, node["uuid"], provision_state="manageable",
                       instance_uuid=instance)
    resp = await api.delete(f"/v1/nodes/{node['uuid']}")
    assert resp.status_code == 409
    assert fault(resp) == f"Node {node['uuid']} is associated with instance {instance}."
    await api.put(f"/v1/nodes/{node['uuid']}/maintenance", json={})
    assert (await api.delete(f"/v1/nodes/{node['uuid']}")).status_code == 204


async def test_delete_of_a_protected_node_is_403_even_in_maintenance(
        api: httpx.AsyncClient, service: Any) -> None:
    node = await create_node(api)
    await _force_state(service, node["uuid"], provision_state="active", protected=True,
                       maintenance=True)
    resp = await api.delete(f"/v1/nodes/{node['uuid']}")
    assert resp.status_code == 403
    assert "is protected" in fault(resp)
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).status_code == 200
