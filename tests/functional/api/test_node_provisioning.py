"""The provision state machine on fake-hardware: every verb runs at once, as Ironic's fake
interfaces do; the PXE types refuse the verbs they cannot run, naming the type."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tests.functional.api.helpers import create_node, fault, manage, wait_for

pytestmark = pytest.mark.functional


async def provision(api: httpx.AsyncClient, node: str, target: str,
                    **extra: Any) -> httpx.Response:
    return await api.put(f"/v1/nodes/{node}/states/provision", json={"target": target, **extra})


async def available(api: httpx.AsyncClient) -> str:
    node = (await create_node(api, driver="fake-hardware"))["uuid"]
    await manage(api, node)
    assert (await provision(api, node, "provide")).status_code == 202
    return node


async def active(api: httpx.AsyncClient) -> str:
    node = await available(api)
    assert (await provision(api, node, "active")).status_code == 202
    return node


async def test_deploy_makes_the_node_active_and_powered_on(api: httpx.AsyncClient) -> None:
    node = await available(api)
    resp = await provision(api, node, "active")
    assert resp.status_code == 202, resp.text
    doc = await wait_for(api, node, provision="active")
    assert doc["power_state"] == "power on" and doc["target_provision_state"] is None


async def test_deploy_is_also_spelled_deploy(api: httpx.AsyncClient) -> None:
    node = await available(api)
    assert (await provision(api, node, "deploy")).status_code == 202
    await wait_for(api, node, provision="active")


async def test_undeploy_cleans_back_to_available_without_the_instance(
        api: httpx.AsyncClient) -> None:
    node = await available(api)
    await api.patch(f"/v1/nodes/{node}", json=[
        {"op": "add", "path": "/instance_info", "value": {"display_name": "vm"}}])
    await provision(api, node, "active")
    assert (await provision(api, node, "deleted")).status_code == 202
    doc = await wait_for(api, node, provision="available")
    assert doc["instance_info"] == {} and doc["instance_name"] is None
    assert doc["power_state"] == "power off"


async def test_rebuild_keeps_the_node_active(api: httpx.AsyncClient) -> None:
    node = await active(api)
    assert (await provision(api, node, "rebuild")).status_code == 202
    await wait_for(api, node, provision="active")


async def test_a_protected_node_is_not_undeployed(api: httpx.AsyncClient) -> None:
    node = await active(api)
    await api.patch(f"/v1/nodes/{node}", json=[
        {"op": "replace", "path": "/protected", "value": True}])
    resp = await provision(api, node, "deleted")
    assert resp.status_code == 403
    assert "protected" in fault(resp)


async def test_manual_clean_needs_clean_steps(api: httpx.AsyncClient) -> None:
    node = (await create_node(api, driver="fake-hardware"))["uuid"]
    await manage(api, node)
    resp = await provision(api, node, "clean")
    assert resp.status_code == 400
    assert "clean_steps" in fault(resp)


async def test_manual_clean_ends_manageable(api: httpx.AsyncClient) -> None:
    node = (await create_node(api, driver="fake-hardware"))["uuid"]
    await manage(api, node)
    resp = await provision(api, node, "clean",
                           clean_steps=[{"interface": "deploy", "step": "erase_devices"}])
    assert resp.status_code == 202, resp.text
    await wait_for(api, node, provision="manageable")


async def test_rescue_needs_a_password(api: httpx.AsyncClient) -> None:
    node = await active(api)
    resp = await provision(api, node, "rescue")
    assert resp.status_code == 400
    assert "rescue_password" in fault(resp)


async def test_rescue_and_unrescue(api: httpx.AsyncClient) -> None:
    node = await active(api)
    assert (await provision(api, node, "rescue", rescue_password="pw")).status_code == 202
    await wait_for(api, node, provision="rescue")
    assert (await provision(api, node, "unrescue")).status_code == 202
    await wait_for(api, node, provision="active")


async def test_service_ends_active(api: httpx.AsyncClient) -> None:
    node = await active(api)
    resp = await provision(api, node, "service",
                           service_steps=[{"interface": "raid", "step": "delete_configuration"}])
    assert resp.status_code == 202, resp.text
    await wait_for(api, node, provision="active")


async def test_adopt_makes_a_manageable_node_active(api: httpx.AsyncClient) -> None:
    node = (await create_node(api, driver="fake-hardware"))["uuid"]
    await manage(api, node)
    assert (await provision(api, node, "adopt")).status_code == 202
    await wait_for(api, node, provision="active")


async def test_deploy_from_the_wrong_state_is_refused(api: httpx.AsyncClient) -> None:
    node = (await create_node(api, driver="fake-hardware"))["uuid"]
    resp = await provision(api, node, "active")
    assert resp.status_code == 400
    assert "enroll" in fault(resp)


async def test_deploy_before_its_microversion_is_not_acceptable(api: httpx.AsyncClient) -> None:
    node = await available(api)
    resp = await api.put(f"/v1/nodes/{node}/states/provision", json={"target": "deploy"},
                         headers={"X-OpenStack-Ironic-API-Version": "1.72"})
    assert resp.status_code == 406


async def test_a_pxe_type_refuses_deploy_naming_the_type(api: httpx.AsyncClient) -> None:
    # Before 1.11 a node is created available: no BMC needed to get there.
    resp = await api.post("/v1/nodes", json={"driver": "pxe_ipmitool"},
                          headers={"X-OpenStack-Ironic-API-Version": "1.10"})
    assert resp.status_code == 201, resp.text
    resp = await provision(api, resp.json()["uuid"], "active")
    assert resp.status_code == 400
    assert "pxe_ipmitool" in fault(resp) and "not supported by this hardware type" in fault(resp)
