"""Ironic's project-scoped access (owner and lessee), with http_basic users given a project
(`http_basic_projects`): the same rules a Keystone token scoped to a project gets
(tests/functional/common/test_keystone.py runs them with the real Keystone).

Project A owns node `a-node`; project B leases `b-leased` (owned by project C); `free` has
neither. Expected answers are Ironic 39's default policy (ironic/common/policy.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ironsight.baremetal.service import BaremetalService

from ..security import write_htpasswd
from .conftest import LATEST

pytestmark = pytest.mark.functional

# user -> (password, role, project or "" for the whole fleet)
USERS = {
    "admin": ("pw-admin-1", "admin", ""),
    "sys-reader": ("pw-sysr-2", "reader", ""),
    "a-admin": ("pw-aa-3", "admin", "proj-a"),
    "a-member": ("pw-am-4", "member", "proj-a"),
    "a-reader": ("pw-ar-5", "reader", "proj-a"),
    "b-member": ("pw-bm-6", "member", "proj-b"),
    "b-admin": ("pw-ba-7", "admin", "proj-b"),
}


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'bm.sqlite'}"  # policy, not storage: SQLite is enough


@pytest.fixture
def conf_overrides(tmp_path: Path) -> dict[str, dict[str, str]]:
    htpasswd = write_htpasswd(tmp_path / "htpasswd",
                              {u: (pw, role) for u, (pw, role, _) in USERS.items()})
    return {"DEFAULT": {
        "auth_strategy": "http_basic", "http_basic_auth_user_file": str(htpasswd),
        "http_basic_default_role": "none",
        "http_basic_roles": ",".join(f"{u}:{role}" for u, (_, role, _) in USERS.items()),
        "http_basic_projects": ",".join(f"{u}:{p}" for u, (_, _, p) in USERS.items() if p)}}


Clients = dict[str, httpx.AsyncClient]


@pytest.fixture
async def as_(service: BaremetalService) -> AsyncIterator[Clients]:
    transport = httpx.ASGITransport(app=service.app)
    clients = {user: httpx.AsyncClient(transport=transport, base_url="http://bm.test",
                                       headers=LATEST, auth=(user, pw))
               for user, (pw, _, _) in USERS.items()}
    admin = clients["admin"]
    for name, owner, lessee in (("a-node", "proj-a", None), ("b-leased", "proj-c", "proj-b"),
                                ("free", None, None)):
        resp = await admin.post("/v1/nodes", json={"driver": "fake-hardware", "name": name,
                                                   "owner": owner, "lessee": lessee})
        assert resp.status_code == 201, resp.text
    for i, node in enumerate(("a-node", "b-leased", "free")):
        resp = await admin.post("/v1/ports", json={"node_uuid": await uuid_of(admin, node),
                                                   "address": f"52:54:00:00:00:0{i}"})
        assert resp.status_code == 201, resp.text
    try:
        yield clients
    finally:
        for client in clients.values():
            await client.aclose()


async def uuid_of(client: httpx.AsyncClient, name: str) -> str:
    return str((await client.get(f"/v1/nodes/{name}")).json()["uuid"])


def fault(resp: httpx.Response) -> str:
    return str(json.loads(resp.json()["error_message"])["faultstring"])


async def names(client: httpx.AsyncClient, path: str = "/v1/nodes") -> list[str]:
    resp = await client.get(path)
    assert resp.status_code == 200, resp.text
    return sorted(n["name"] for n in resp.json()["nodes"])


async def test_a_project_lists_only_the_nodes_it_owns_or_leases(as_: Clients) -> None:
    assert await names(as_["a-reader"]) == ["a-node"]
    assert await names(as_["b-member"], "/v1/nodes/detail") == ["b-leased"]
    assert await names(as_["admin"]) == ["a-node", "b-leased", "free"]


async def test_a_project_asking_for_another_owner_finds_nothing(as_: Clients) -> None:
    resp = await as_["a-reader"].get("/v1/nodes?owner=proj-c")
    assert resp.status_code == 200
    assert resp.json()["nodes"] == []


async def test_a_lessee_sees_the_owners_fields_redacted(as_: Clients) -> None:
    doc = (await as_["b-member"].get("/v1/nodes/b-leased")).json()
    assert doc["driver_info"] == {
        "content": "** Redacted - requires baremetal:node:get:driver_info permission. **"}
    assert doc["last_error"].startswith("** Redacted")
    listed = (await as_["b-member"].get("/v1/nodes/detail")).json()["nodes"]
    assert listed[0]["driver_info"] == doc["driver_info"]


async def test_the_owner_sees_its_nodes_fields(as_: Clients) -> None:
    doc = (await as_["a-member"].get("/v1/nodes/a-node")).json()
    assert doc["driver_info"] == {}
    assert doc["last_error"] is None


async def test_a_member_asking_for_another_projects_boot_device_gets_404(
        as_: Clients) -> None:
    resp = await as_["b-member"].get("/v1/nodes/a-node/management/boot_device")
    assert resp.status_code == 404
    assert fault(resp) == "Node a-node could not be found."


async def test_another_projects_node_is_not_found(as_: Clients) -> None:
    for path in ("/v1/nodes/b-leased", "/v1/nodes/b-leased/states",
                 "/v1/nodes/free/history"):
        resp = await as_["a-admin"].get(path)
        assert resp.status_code == 404, path
        assert fault(resp) == f"Node {path.split('/')[3]} could not be found."


async def test_a_concealed_node_is_not_changed(as_: Clients) -> None:
    resp = await as_["a-admin"].patch("/v1/nodes/free", json=[
        {"op": "add", "path": "/extra/x", "value": 1}])
    assert resp.status_code == 404
    assert (await as_["admin"].get("/v1/nodes/free")).json()["extra"] == {}


async def test_the_owners_member_changes_its_node(as_: Clients) -> None:
    resp = await as_["a-member"].patch("/v1/nodes/a-node", json=[
        {"op": "add", "path": "/extra/rack", "value": "r1"}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["extra"] == {"rack": "r1"}


async def test_a_project_may_not_give_its_node_away(as_: Clients) -> None:
    resp = await as_["a-admin"].patch("/v1/nodes/a-node", json=[
        {"op": "replace", "path": "/owner", "value": "proj-b"}])
    assert resp.status_code == 403
    assert fault(resp) == ("Access was denied to the following resource: "
                           "baremetal:node:update:owner")
    assert (await as_["admin"].get("/v1/nodes/a-node")).json()["owner"] == "proj-a"


async def test_a_lessee_member_powers_but_may_not_change_driver_info(as_: Clients) -> None:
    lessee = as_["b-member"]
    resp = await lessee.put("/v1/nodes/b-leased/states/power", json={"target": "power on"})
    assert resp.status_code == 202, resp.text
    resp = await lessee.patch("/v1/nodes/b-leased", json=[
        {"op": "add", "path": "/driver_info/x", "value": "y"}])
    assert resp.status_code == 403
    assert fault(resp).endswith("baremetal:node:update:driver_info")


async def test_a_lessee_member_may_not_change_provision_state(as_: Clients) -> None:
    resp = await as_["b-member"].put("/v1/nodes/b-leased/states/provision",
                                     json={"target": "manage"})
    assert resp.status_code == 403
    assert fault(resp).endswith("baremetal:node:set_provision_state")


async def test_a_lessee_admin_may_change_provision_state(as_: Clients) -> None:
    resp = await as_["b-admin"].put("/v1/nodes/b-leased/states/provision",
                                    json={"target": "manage"})
    assert resp.status_code == 202, resp.text


async def test_only_the_owners_admin_reads_the_boot_device(as_: Clients) -> None:
    assert (await as_["a-member"].get("/v1/nodes/a-node/management/boot_device")
            ).status_code == 403
    assert (await as_["a-admin"].get("/v1/nodes/a-node/management/boot_device")
            ).status_code == 200


async def test_a_project_admin_creates_a_node_its_project_owns(as_: Clients) -> None:
    resp = await as_["a-admin"].post("/v1/nodes", json={"driver": "fake-hardware",
                                                        "name": "a-new"})
    assert resp.status_code == 201, resp.text
    assert resp.json()["owner"] == "proj-a"


async def test_a_project_admin_may_not_create_a_node_for_another_project(
        as_: Clients) -> None:
    resp = await as_["a-admin"].post("/v1/nodes", json={"driver": "fake-hardware",
                                                        "owner": "proj-b"})
    assert resp.status_code == 400  # Ironic 39's status and words
    assert fault(resp) == ("Cannot create a node as a project scoped admin with an owner "
                           "other than your own project.")
    assert await names(as_["admin"]) == ["a-node", "b-leased", "free"]


async def test_a_project_member_may_not_create_a_node(as_: Clients) -> None:
    resp = await as_["a-member"].post("/v1/nodes", json={"driver": "fake-hardware"})
    assert resp.status_code == 403
    assert fault(resp) == "Access was denied to the following resource: baremetal:node:create"


async def test_the_owners_admin_deletes_its_node_and_no_other(as_: Clients) -> None:
    assert (await as_["b-admin"].delete("/v1/nodes/b-leased")).status_code == 403
    assert (await as_["a-admin"].delete("/v1/nodes/a-node")).status_code == 204


async def test_a_project_sees_the_ports_of_its_nodes_only(as_: Clients) -> None:
    resp = await as_["a-reader"].get("/v1/ports")
    assert [p["address"] for p in resp.json()["ports"]] == ["52:54:00:00:00:00"]
    other = (await as_["admin"].get("/v1/ports?address=52:54:00:00:00:02")).json()["ports"][0]
    resp = await as_["a-reader"].get(f"/v1/ports/{other['uuid']}")
    assert resp.status_code == 404
    assert fault(resp) == f"Port {other['uuid']} could not be found."


async def test_a_port_goes_on_a_node_of_the_owners_admin_only(as_: Clients) -> None:
    node = await uuid_of(as_["admin"], "b-leased")
    resp = await as_["b-admin"].post("/v1/ports", json={"node_uuid": node,
                                                        "address": "52:54:00:00:01:00"})
    assert resp.status_code == 403  # the lessee's admin: not the owner's
    node = await uuid_of(as_["admin"], "a-node")
    resp = await as_["a-admin"].post("/v1/ports", json={"node_uuid": node,
                                                        "address": "52:54:00:00:01:01"})
    assert resp.status_code == 201, resp.text


async def test_the_systems_resources_are_refused_to_a_project(as_: Clients) -> None:
    for path, policy in (("/v1/chassis", "baremetal:chassis:get"),
                         ("/v1/drivers", "baremetal:driver:get"),
                         ("/v1/conductors", "baremetal:conductor:get"),
                         ("/v1/deploy_templates", "baremetal:deploy_template:get")):
        resp = await as_["a-admin"].get(path)
        assert resp.status_code == 403, path
        assert fault(resp) == f"Access was denied to the following resource: {policy}"


async def test_a_projects_allocation_is_its_own(as_: Clients) -> None:
    resp = await as_["a-member"].post("/v1/allocations", json={"resource_class": "x"})
    assert resp.status_code == 201, resp.text
    mine = resp.json()
    assert mine["owner"] == "proj-a"
    assert [a["uuid"] for a in (await as_["a-reader"].get("/v1/allocations")).json()[
        "allocations"]] == [mine["uuid"]]
    assert (await as_["b-member"].get("/v1/allocations")).json()["allocations"] == []
    resp = await as_["b-member"].get(f"/v1/allocations/{mine['uuid']}")
    assert resp.status_code == 404
    assert fault(resp) == f"Allocation {mine['uuid']} could not be found."


async def test_a_project_may_not_create_an_allocation_for_another(as_: Clients) -> None:
    resp = await as_["a-member"].post("/v1/allocations", json={"resource_class": "x",
                                                               "owner": "proj-b"})
    assert resp.status_code == 403


async def test_a_project_sees_its_own_and_public_runbooks(as_: Clients) -> None:
    steps = [{"interface": "deploy", "step": "s", "args": {}, "order": 1}]
    for name, owner, public in (("CUSTOM_A", "proj-a", False), ("CUSTOM_B", "proj-b", False),
                                ("CUSTOM_PUB", None, True)):
        resp = await as_["admin"].post("/v1/runbooks", json={
            "name": name, "steps": steps, "owner": owner, "public": public})
        assert resp.status_code == 201, resp.text
    resp = await as_["a-reader"].get("/v1/runbooks")
    assert sorted(r["name"] for r in resp.json()["runbooks"]) == ["CUSTOM_A", "CUSTOM_PUB"]
    assert (await as_["a-reader"].get("/v1/runbooks/CUSTOM_PUB")).status_code == 200
    resp = await as_["a-reader"].get("/v1/runbooks/CUSTOM_B")
    assert resp.status_code == 403  # Ironic 39 does not conceal runbooks
    assert fault(resp).endswith("baremetal:runbook:get")


async def test_an_unknown_path_is_404_and_an_unknown_method_405_whatever_the_role(
        as_: Clients) -> None:
    reader = as_["sys-reader"]
    assert (await reader.post("/v1/no-such-thing", json={})).status_code == 404
    assert (await reader.delete("/v1/drivers")).status_code == 405


async def test_a_known_route_still_needs_the_role(as_: Clients) -> None:
    resp = await as_["sys-reader"].patch("/v1/nodes/a-node", json=[
        {"op": "add", "path": "/extra/x", "value": 1}])
    assert resp.status_code == 403


async def test_a_system_reader_may_not_read_the_boot_device_or_validate(as_: Clients) -> None:
    for path in ("/v1/nodes/a-node/management/boot_device", "/v1/nodes/a-node/validate"):
        assert (await as_["sys-reader"].get(path)).status_code == 403, path


async def test_the_fleet_wide_admin_is_not_scoped(as_: Clients) -> None:
    resp = await as_["admin"].get("/v1/nodes/b-leased")
    assert resp.status_code == 200
    assert (await as_["admin"].get("/v1/chassis")).status_code == 200
