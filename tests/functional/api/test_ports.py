"""Port resource."""

from __future__ import annotations

import httpx

from .helpers import create_node, fault


async def test_port_create_and_show(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.post("/v1/ports", json={"address": "52:54:00:AA:BB:01",
                                             "node_uuid": node["uuid"], "pxe_enabled": False})
    assert resp.status_code == 201, resp.text
    port = resp.json()
    assert port["address"] == "52:54:00:aa:bb:01"
    shown = (await api.get(f"/v1/ports/{port['uuid']}")).json()
    assert (shown["node_uuid"], shown["pxe_enabled"]) == (node["uuid"], False)


async def test_ports_filter_by_address(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    for mac in ("52:54:00:00:00:01", "52:54:00:00:00:02"):
        await api.post("/v1/ports", json={"address": mac, "node_uuid": node["uuid"]})
    docs = (await api.get("/v1/ports?address=52:54:00:00:00:02")).json()["ports"]
    assert [d["address"] for d in docs] == ["52:54:00:00:00:02"]


async def test_node_ports_lists_only_that_node(api: httpx.AsyncClient) -> None:
    a, b = await create_node(api), await create_node(api)
    await api.post("/v1/ports", json={"address": "52:54:00:00:00:0a", "node_uuid": a["uuid"]})
    await api.post("/v1/ports", json={"address": "52:54:00:00:00:0b", "node_uuid": b["uuid"]})
    docs = (await api.get(f"/v1/nodes/{a['uuid']}/ports")).json()["ports"]
    assert [d["address"] for d in docs] == ["52:54:00:00:00:0a"]


async def test_port_patch_changes_pxe_enabled(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    port = (await api.post("/v1/ports", json={"address": "52:54:00:00:00:01",
                                               "node_uuid": node["uuid"]})).json()
    resp = await api.patch(f"/v1/ports/{port['uuid']}",
                           json=[{"op": "replace", "path": "/pxe_enabled", "value": False}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["pxe_enabled"] is False


async def test_port_delete(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    port = (await api.post("/v1/ports", json={"address": "52:54:00:00:00:01",
                                               "node_uuid": node["uuid"]})).json()
    assert (await api.delete(f"/v1/ports/{port['uuid']}")).status_code == 204
    assert (await api.get(f"/v1/ports/{port['uuid']}")).status_code == 404


async def test_port_for_missing_node_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/ports", json={"address": "52:54:00:00:00:01",
                                             "node_uuid": "0b751d19-92e0-41ae-9a37-99bfd7c5121a"})
    assert resp.status_code == 400
    assert "node_uuid" in fault(resp)


async def test_ports_of_a_node_without_ports_is_an_empty_list(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    for path in (f"/v1/nodes/{node['uuid']}/ports", f"/v1/ports/detail?node={node['uuid']}"):
        resp = await api.get(path)
        assert (resp.status_code, resp.json()["ports"]) == (200, [])


async def test_ports_of_a_node_named_by_name_in_id_order(api: httpx.AsyncClient) -> None:
    node = await create_node(api, name="ports-by-name")
    macs = ["52:54:00:00:01:0b", "52:54:00:00:01:0a"]
    for mac in macs:
        await api.post("/v1/ports", json={"address": mac, "node_uuid": node["uuid"]})
    docs = (await api.get("/v1/ports/detail?node=ports-by-name")).json()["ports"]
    assert [(d["address"], d["node_uuid"]) for d in docs] == [(m, node["uuid"]) for m in macs]


async def test_ports_of_a_missing_node_is_404_on_its_path_and_400_as_a_filter(
        api: httpx.AsyncClient) -> None:
    missing = "0b751d19-92e0-41ae-9a37-99bfd7c5121a"
    assert (await api.get(f"/v1/nodes/{missing}/ports")).status_code == 404
    resp = await api.get(f"/v1/ports?node={missing}")
    assert resp.status_code == 400
    assert fault(resp) == f"node: Node {missing} could not be found."


async def test_a_port_patch_that_changes_nothing_answers_the_port(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    port = (await api.post("/v1/ports", json={"address": "52:54:00:00:02:01",
                                               "node_uuid": node["uuid"]})).json()
    resp = await api.patch(f"/v1/ports/{port['uuid']}",
                           json=[{"op": "replace", "path": "/pxe_enabled", "value": True}])
    assert (resp.status_code, resp.json()["uuid"], resp.json()["pxe_enabled"]) == (
        200, port["uuid"], True)


async def test_a_port_named_by_its_mac_is_a_bad_request(api: httpx.AsyncClient) -> None:
    for ident in ("52:54:00:00:00:01", "malformed:uuid"):
        resp = await api.get(f"/v1/ports/{ident}")
        assert resp.status_code == 400
        assert fault(resp) == f"Expected UUID or name for port_ident: {ident}"


async def test_a_port_is_deleted_by_uuid_only(api: httpx.AsyncClient) -> None:
    resp = await api.delete("/v1/ports/some-name")
    assert resp.status_code == 400
    assert fault(resp) == "Expected UUID for port_uuid: some-name"


async def _grouped_port(api: httpx.AsyncClient, physnet: str) -> tuple[str, str]:
    node = await create_node(api)
    group = (await api.post("/v1/portgroups", json={"node_uuid": node["uuid"]})).json()
    resp = await api.post("/v1/ports", json={
        "address": "52:54:00:00:01:01", "node_uuid": node["uuid"],
        "portgroup_uuid": group["uuid"], "physical_network": physnet})
    assert resp.status_code == 201, resp.text
    return node["uuid"], group["uuid"]


async def test_a_port_on_another_physical_network_may_not_join_a_portgroup(
        api: httpx.AsyncClient) -> None:
    node, group = await _grouped_port(api, "physnet1")
    resp = await api.post("/v1/ports", json={
        "address": "52:54:00:00:01:02", "node_uuid": node, "portgroup_uuid": group,
        "physical_network": "physnet2"})
    assert resp.status_code == 409
    assert fault(resp) == (f"Port with physical network physnet2 cannot become a member of "
                           f"port group {group} which has ports in physical network physnet1.")
    assert len((await api.get(f"/v1/nodes/{node}/ports")).json()["ports"]) == 1


async def test_a_member_port_may_not_move_to_another_physical_network(
        api: httpx.AsyncClient) -> None:
    node, group = await _grouped_port(api, "physnet1")
    port = (await api.post("/v1/ports", json={
        "address": "52:54:00:00:01:02", "node_uuid": node, "portgroup_uuid": group,
        "physical_network": "physnet1"})).json()
    resp = await api.patch(f"/v1/ports/{port['uuid']}", json=[
        {"op": "replace", "path": "/physical_network", "value": "physnet2"}])
    assert resp.status_code == 409


async def test_physical_network_before_1_34_is_not_acceptable(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    old = {"X-OpenStack-Ironic-API-Version": "1.33"}
    resp = await api.post("/v1/ports", headers=old, json={
        "address": "52:54:00:00:02:01", "node_uuid": node["uuid"], "physical_network": "p"})
    assert resp.status_code == 406
    port = (await api.post("/v1/ports", json={"address": "52:54:00:00:02:02",
                                               "node_uuid": node["uuid"]})).json()
    resp = await api.patch(f"/v1/ports/{port['uuid']}", headers=old, json=[
        {"op": "add", "path": "/physical_network", "value": "p"}])
    assert resp.status_code == 406
