"""Ironic's stored inventory resources: chassis, portgroups (and port membership), conductors,
deploy templates, runbooks, volume connectors and targets."""

from __future__ import annotations

import httpx

from .helpers import create_node, fault, wait_for

MISSING = "0b751d19-92e0-41ae-9a37-99bfd7c5121a"
STEP = {"interface": "bios", "step": "apply_configuration", "args": {}, "priority": 10}
RUN_STEP = {"interface": "bios", "step": "apply_configuration", "args": {}, "order": 1}


async def test_chassis_create_show_and_list(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/chassis", json={"description": "rack 4", "extra": {"row": 2}})
    assert resp.status_code == 201, resp.text
    made = resp.json()
    assert resp.headers["Location"].endswith(f"/v1/chassis/{made['uuid']}")
    shown = (await api.get(f"/v1/chassis/{made['uuid']}")).json()
    assert (shown["description"], shown["extra"]) == ("rack 4", {"row": 2})
    listed = (await api.get("/v1/chassis")).json()["chassis"]
    assert [set(c) for c in listed] == [{"uuid", "description", "links"}]


async def test_chassis_with_a_non_uuid_ident_is_400_expected_uuid(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/chassis/not-a-uuid")
    assert resp.status_code == 400
    assert fault(resp) == "Expected UUID for chassis_uuid: not-a-uuid"


async def test_chassis_missing_is_404(api: httpx.AsyncClient) -> None:
    resp = await api.get(f"/v1/chassis/{MISSING}")
    assert resp.status_code == 404
    assert fault(resp) == f"Chassis {MISSING} could not be found."


async def test_chassis_patch_and_remove_a_key(api: httpx.AsyncClient) -> None:
    made = (await api.post("/v1/chassis", json={"extra": {"a": 1}})).json()
    resp = await api.patch(f"/v1/chassis/{made['uuid']}", json=[
        {"op": "add", "path": "/description", "value": "new"},
        {"op": "remove", "path": "/extra/a"}])
    assert resp.status_code == 200, resp.text
    assert (resp.json()["description"], resp.json()["extra"]) == ("new", {})


async def test_chassis_patch_removing_a_missing_key_is_400(api: httpx.AsyncClient) -> None:
    made = (await api.post("/v1/chassis", json={})).json()
    resp = await api.patch(f"/v1/chassis/{made['uuid']}",
                           json=[{"op": "remove", "path": "/extra/nope"}])
    assert resp.status_code == 400
    assert "can't remove a non-existent object 'nope'" in fault(resp)


async def test_chassis_delete(api: httpx.AsyncClient) -> None:
    made = (await api.post("/v1/chassis", json={})).json()
    assert (await api.delete(f"/v1/chassis/{made['uuid']}")).status_code == 204
    assert (await api.get(f"/v1/chassis/{made['uuid']}")).status_code == 404


async def test_chassis_nodes_lists_none_for_a_new_chassis(api: httpx.AsyncClient) -> None:
    made = (await api.post("/v1/chassis", json={})).json()
    resp = await api.get(f"/v1/chassis/{made['uuid']}/nodes")
    assert (resp.status_code, resp.json()) == (200, {"nodes": []})


async def test_chassis_list_paginates_with_next(api: httpx.AsyncClient) -> None:
    for _ in range(3):
        await api.post("/v1/chassis", json={})
    first = (await api.get("/v1/chassis?limit=2")).json()
    assert len(first["chassis"]) == 2 and "marker=" in first["next"]
    marker = first["chassis"][-1]["uuid"]
    rest = (await api.get(f"/v1/chassis?limit=2&marker={marker}")).json()
    assert len(rest["chassis"]) == 1


async def test_chassis_marker_not_a_uuid_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/chassis?marker=foo")
    assert resp.status_code == 400
    assert fault(resp) == "Expected UUID for marker: foo"


async def test_chassis_unknown_field_is_400_naming_it(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/chassis", json={"colour": "red"})
    assert resp.status_code == 400
    assert "colour" in fault(resp)


async def test_chassis_create_with_bad_uuid_is_400_expected_uuid(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/chassis", json={"uuid": "nope"})
    assert resp.status_code == 400
    assert fault(resp) == "Expected UUID for uuid: nope"


async def test_portgroup_create_show_by_name(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.post("/v1/portgroups", json={
        "node_uuid": node["uuid"], "name": "bond0", "address": "52:54:00:AA:00:01",
        "mode": "802.3ad", "standalone_ports_supported": "False"})
    assert resp.status_code == 201, resp.text
    shown = (await api.get("/v1/portgroups/bond0")).json()
    assert (shown["node_uuid"], shown["address"], shown["mode"],
            shown["standalone_ports_supported"]) == (node["uuid"], "52:54:00:aa:00:01",
                                                     "802.3ad", False)


async def test_portgroups_hidden_below_1_23(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/portgroups", headers={"X-OpenStack-Ironic-API-Version": "1.22"})
    assert resp.status_code == 404


async def test_portgroup_duplicate_name_is_409(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    await api.post("/v1/portgroups", json={"node_uuid": node["uuid"], "name": "bond0"})
    resp = await api.post("/v1/portgroups", json={"node_uuid": node["uuid"], "name": "bond0"})
    assert resp.status_code == 409
    assert fault(resp) == "A portgroup with name bond0 already exists."


async def test_portgroup_for_missing_node_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/portgroups", json={"node_uuid": MISSING})
    assert resp.status_code == 400
    assert "node_uuid" in fault(resp)


async def test_port_joins_a_portgroup_and_is_listed_in_it(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    group = (await api.post("/v1/portgroups", json={"node_uuid": node["uuid"],
                                                   "name": "bond0"})).json()
    port = (await api.post("/v1/ports", json={"node_uuid": node["uuid"],
                                              "address": "52:54:00:00:00:01",
                                              "portgroup_uuid": group["uuid"]})).json()
    assert port["portgroup_uuid"] == group["uuid"]
    members = (await api.get(f"/v1/portgroups/{group['uuid']}/ports")).json()["ports"]
    assert [p["uuid"] for p in members] == [port["uuid"]]


async def test_port_patch_sets_its_portgroup(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    group = (await api.post("/v1/portgroups", json={"node_uuid": node["uuid"]})).json()
    port = (await api.post("/v1/ports", json={"node_uuid": node["uuid"],
                                              "address": "52:54:00:00:00:01"})).json()
    resp = await api.patch(f"/v1/ports/{port['uuid']}", json=[
        {"op": "add", "path": "/portgroup_uuid", "value": group["uuid"]}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["portgroup_uuid"] == group["uuid"]


async def test_port_can_not_join_another_nodes_portgroup(api: httpx.AsyncClient) -> None:
    a, b = await create_node(api), await create_node(api)
    group = (await api.post("/v1/portgroups", json={"node_uuid": b["uuid"]})).json()
    resp = await api.post("/v1/ports", json={"node_uuid": a["uuid"],
                                             "address": "52:54:00:00:00:01",
                                             "portgroup_uuid": group["uuid"]})
    assert resp.status_code == 400


async def test_portgroup_with_ports_can_not_be_deleted(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    group = (await api.post("/v1/portgroups", json={"node_uuid": node["uuid"]})).json()
    await api.post("/v1/ports", json={"node_uuid": node["uuid"], "address": "52:54:00:00:00:01",
                                      "portgroup_uuid": group["uuid"]})
    resp = await api.delete(f"/v1/portgroups/{group['uuid']}")
    assert resp.status_code == 400
    assert "contains ports" in fault(resp)


async def test_node_portgroups_lists_only_that_node(api: httpx.AsyncClient) -> None:
    a, b = await create_node(api), await create_node(api)
    await api.post("/v1/portgroups", json={"node_uuid": a["uuid"], "name": "pa"})
    await api.post("/v1/portgroups", json={"node_uuid": b["uuid"], "name": "pb"})
    docs = (await api.get(f"/v1/nodes/{a['uuid']}/portgroups")).json()["portgroups"]
    assert [d["name"] for d in docs] == ["pa"]


async def test_node_delete_takes_its_portgroups(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    group = (await api.post("/v1/portgroups", json={"node_uuid": node["uuid"]})).json()
    assert (await api.delete(f"/v1/nodes/{node['uuid']}")).status_code == 204
    assert (await api.get(f"/v1/portgroups/{group['uuid']}")).status_code == 404


async def test_conductors_list_this_host_alive(api: httpx.AsyncClient) -> None:
    docs = (await api.get("/v1/conductors")).json()["conductors"]
    assert [(d["hostname"], d["alive"], d["conductor_group"])
            for d in docs] == [("test-conductor", True, "")]


async def test_conductor_show_has_its_hardware_types(api: httpx.AsyncClient) -> None:
    doc = (await api.get("/v1/conductors/test-conductor")).json()
    assert "fake-hardware" in doc["drivers"]


async def test_a_nodes_conductor_is_a_listed_conductor(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    assert node["conductor"] == "test-conductor"
    shown = await api.get(f"/v1/conductors/{node['conductor']}")
    assert (shown.status_code, shown.json()["alive"]) == (200, True)


async def test_a_drivers_hosts_are_the_conductors_hostnames(api: httpx.AsyncClient) -> None:
    doc = (await api.get("/v1/drivers/fake-hardware")).json()
    assert doc["hosts"] == ["test-conductor"]


async def test_a_replicas_own_name_is_not_a_conductor(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/conductors/test-conductor:1")
    assert resp.status_code == 404
    assert fault(resp) == "Conductor test-conductor:1 could not be found."


async def test_conductors_list_with_an_unknown_marker_is_404(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/conductors", params={"marker": "nowhere"})
    assert resp.status_code == 404
    assert fault(resp) == "Conductor nowhere could not be found."


async def test_conductors_hidden_below_1_49(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/conductors", headers={"X-OpenStack-Ironic-API-Version": "1.48"})
    assert resp.status_code == 404


async def test_deploy_template_create_and_show_by_name(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/deploy_templates", json={"name": "CUSTOM_RAID",
                                                        "steps": [STEP]})
    assert resp.status_code == 201, resp.text
    shown = (await api.get("/v1/deploy_templates/CUSTOM_RAID")).json()
    assert shown["steps"] == [STEP]


async def test_deploy_template_name_must_be_a_trait(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/deploy_templates", json={"name": "raid", "steps": [STEP]})
    assert resp.status_code == 400
    assert "name" in fault(resp)


async def test_deploy_template_duplicate_steps_are_400(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/deploy_templates", json={"name": "CUSTOM_X",
                                                        "steps": [STEP, STEP]})
    assert resp.status_code == 400
    assert "Duplicate deploy steps" in fault(resp)


async def test_deploy_template_step_with_unknown_interface_is_400(
        api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/deploy_templates", json={
        "name": "CUSTOM_X", "steps": [{**STEP, "interface": "boot"}]})
    assert resp.status_code == 400
    assert "interface" in fault(resp)


async def test_runbook_create_patch_and_delete(api: httpx.AsyncClient) -> None:
    made = (await api.post("/v1/runbooks", json={"name": "CUSTOM_RB",
                                                 "steps": [RUN_STEP]})).json()
    resp = await api.patch(f"/v1/runbooks/{made['uuid']}",
                           json=[{"op": "replace", "path": "/public", "value": True}])
    assert (resp.status_code, resp.json()["public"]) == (200, True)
    assert (await api.delete("/v1/runbooks/CUSTOM_RB")).status_code == 204


async def test_runbooks_hidden_below_1_92(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/runbooks", headers={"X-OpenStack-Ironic-API-Version": "1.91"})
    assert resp.status_code == 404


async def test_volume_connector_create_and_list_for_node(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.post("/v1/volume/connectors", json={
        "node_uuid": node["uuid"], "type": "iqn", "connector_id": "iqn.2026-01.org:x"})
    assert resp.status_code == 201, resp.text
    docs = (await api.get(f"/v1/nodes/{node['uuid']}/volume/connectors")).json()
    assert [d["connector_id"] for d in docs["connectors"]] == ["iqn.2026-01.org:x"]


async def test_volume_connector_duplicate_is_409(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    body = {"node_uuid": node["uuid"], "type": "iqn", "connector_id": "iqn.x"}
    await api.post("/v1/volume/connectors", json=body)
    resp = await api.post("/v1/volume/connectors", json=body)
    assert resp.status_code == 409


async def test_volume_connector_unknown_type_is_400(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.post("/v1/volume/connectors", json={
        "node_uuid": node["uuid"], "type": "floppy", "connector_id": "x"})
    assert resp.status_code == 400
    assert "type" in fault(resp)


async def test_volume_target_boot_index_is_unique_per_node(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    body = {"node_uuid": node["uuid"], "volume_type": "iscsi", "boot_index": 0}
    first = await api.post("/v1/volume/targets", json={**body, "volume_id": "v1"})
    assert first.status_code == 201, first.text
    resp = await api.post("/v1/volume/targets", json={**body, "volume_id": "v2"})
    assert resp.status_code == 409
    assert "boot index '0'" in fault(resp)


async def test_volume_root_links_connectors_and_targets(api: httpx.AsyncClient) -> None:
    doc = (await api.get("/v1/volume")).json()
    assert {"connectors", "targets", "links"} <= set(doc)


async def test_volume_hidden_below_1_32(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/volume/targets",
                         headers={"X-OpenStack-Ironic-API-Version": "1.31"})
    assert resp.status_code == 404


async def test_deploy_template_steps_are_patched_by_index(api: httpx.AsyncClient) -> None:
    await api.post("/v1/deploy_templates", json={"name": "CUSTOM_IDX", "steps": [STEP]})
    second = {**STEP, "step": "delete_configuration"}
    resp = await api.patch("/v1/deploy_templates/CUSTOM_IDX", json=[
        {"op": "add", "path": "/steps/1", "value": second},
        {"op": "replace", "path": "/steps/0/priority", "value": 20}])
    assert resp.status_code == 200, resp.text
    assert [s["step"] for s in resp.json()["steps"]] == ["apply_configuration",
                                                         "delete_configuration"]
    assert resp.json()["steps"][0]["priority"] == 20
    resp = await api.patch("/v1/deploy_templates/CUSTOM_IDX", json=[
        {"op": "remove", "path": "/steps/0"}])
    assert [s["step"] for s in resp.json()["steps"]] == ["delete_configuration"]


async def test_runbook_steps_are_replaced_by_index(api: httpx.AsyncClient) -> None:
    step = {"interface": "bios", "step": "apply_configuration", "args": {}, "order": 1}
    await api.post("/v1/runbooks", json={"name": "CUSTOM_RBIDX", "steps": [step]})
    resp = await api.patch("/v1/runbooks/CUSTOM_RBIDX", json=[
        {"op": "replace", "path": "/steps/0", "value": {**step, "order": 5}}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["steps"][0]["order"] == 5


async def test_a_step_index_past_the_end_is_400_and_changes_nothing(
        api: httpx.AsyncClient) -> None:
    await api.post("/v1/deploy_templates", json={"name": "CUSTOM_END", "steps": [STEP]})
    resp = await api.patch("/v1/deploy_templates/CUSTOM_END", json=[
        {"op": "replace", "path": "/steps/3", "value": STEP}])
    assert resp.status_code == 400
    assert "outside of list" in fault(resp)
    assert (await api.get("/v1/deploy_templates/CUSTOM_END")).json()["steps"] == [STEP]


async def _connector_of_powered_on_node(api: httpx.AsyncClient) -> tuple[str, str]:
    node = await create_node(api, driver="fake-hardware")
    resp = await api.post("/v1/volume/connectors", json={
        "node_uuid": node["uuid"], "type": "iqn", "connector_id": "iqn.2026-02.org:on"})
    assert resp.status_code == 201, resp.text
    assert (await api.put(f"/v1/nodes/{node['uuid']}/states/power",
                          json={"target": "power on"})).status_code == 202
    await wait_for(api, node["uuid"], power="power on")
    return node["uuid"], resp.json()["uuid"]


async def test_a_volume_connector_of_a_powered_on_node_is_not_updated(
        api: httpx.AsyncClient) -> None:
    node, connector = await _connector_of_powered_on_node(api)
    resp = await api.patch(f"/v1/volume/connectors/{connector}", json=[
        {"op": "add", "path": "/extra/x", "value": 1}])
    assert resp.status_code == 400
    assert fault(resp) == ('The requested action "volume connector update" can not be '
                           f'performed on node "{node}" while it is in state "power on".')
    assert (await api.get(f"/v1/volume/connectors/{connector}")).json()["extra"] == {}


async def test_a_volume_connector_of_a_powered_on_enrolled_node_may_be_deleted(
        api: httpx.AsyncClient) -> None:
    _, connector = await _connector_of_powered_on_node(api)  # enroll: deletion allowed
    assert (await api.delete(f"/v1/volume/connectors/{connector}")).status_code == 204
