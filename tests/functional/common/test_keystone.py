"""auth_strategy = keystone, for real: `ironsight serve` validating tokens against a real
Keystone (started for the session), roles from the token, the user in node history, both
services calling each other with their Keystone service user's tokens through a whole
inspection, and a Keystone that cannot be reached."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..conftest import free_tcp_port
from ..inspection.helpers import (
    Service,
    enroll,
    inspect,
    machine,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
)
from ..keystone import USERS, Keystone, TokenAuth, keystone_sections
from ..security import as_ini

pytestmark = pytest.mark.functional

H = {"X-OpenStack-Ironic-API-Version": "1.115"}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, keystone: Keystone) -> Iterator[Service]:
    svc = Service(tmp_path_factory.mktemp("keystone-auth"), as_ini(keystone_sections(keystone)))
    svc.auth = TokenAuth(keystone.token("op-admin"))  # type: ignore[assignment]
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture(scope="module")
def tokens(keystone: Keystone) -> dict[str, str]:
    return {user: keystone.token(user) for user in USERS}


def as_user(svc: Service, token: str | None) -> httpx.Client:
    return httpx.Client(base_url=svc.url, timeout=15,
                        headers={**H, **({"X-Auth-Token": token} if token else {})})


def new_node(svc: Service, tokens: dict[str, str]) -> str:
    with as_user(svc, tokens["op-admin"]) as admin:
        resp = admin.post("/v1/nodes", json={"driver": "fake",
                                             "name": f"ks-{uuid.uuid4().hex[:8]}",
                                             "driver_info": {"ipmi_password": "pw-5e0c"}})
        assert resp.status_code == 201, resp.text
        return str(resp.json()["uuid"])


def test_a_request_without_a_token_gets_401_with_a_keystone_challenge(
        service: Service, keystone: Keystone) -> None:
    resp = httpx.get(f"{service.url}/v1/nodes", headers=H)
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"] == f'Keystone uri="{keystone.url}"'
    # keystonemiddleware's body, as Ironic answers
    assert resp.json() == {"error": {
        "code": 401, "title": "Unauthorized",
        "message": "The request you have made requires authentication."}}


def test_a_bad_token_gets_401_and_changes_nothing(service: Service,
                                                  tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    forged = tokens["op-admin"][:-6] + "AAAAAA"
    with as_user(service, forged) as forger:
        assert forger.delete(f"/v1/nodes/{node}").status_code == 401
    with as_user(service, tokens["op-reader"]) as reader:
        assert reader.get(f"/v1/nodes/{node}").status_code == 200


def test_a_reader_reads_with_secrets_masked(service: Service, tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    with as_user(service, tokens["op-reader"]) as reader:
        doc = reader.get(f"/v1/nodes/{node}").json()
    assert doc["driver_info"] == {"ipmi_password": "******"}


def test_a_reader_cannot_change_a_node(service: Service, tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    with as_user(service, tokens["op-reader"]) as reader:
        resp = reader.patch(f"/v1/nodes/{node}",
                            json=[{"op": "add", "path": "/extra/x", "value": 1}])
        assert resp.status_code == 403
        assert "role reader" in resp.json()["error_message"]
        assert reader.get(f"/v1/nodes/{node}").json()["extra"] == {}


def test_a_member_acts_on_nodes_but_cannot_delete_one(service: Service,
                                                      tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    with as_user(service, tokens["op-member"]) as member:
        assert member.patch(f"/v1/nodes/{node}", json=[
            {"op": "add", "path": "/extra/rack", "value": "r1"}]).status_code == 200
        resp = member.delete(f"/v1/nodes/{node}")
        assert resp.status_code == 403
        assert "needs role admin" in resp.json()["error_message"]
        assert member.get(f"/v1/nodes/{node}").status_code == 200


def test_an_admin_deletes_a_node(service: Service, tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    with as_user(service, tokens["op-admin"]) as admin:
        assert admin.delete(f"/v1/nodes/{node}").status_code == 204
        assert admin.get(f"/v1/nodes/{node}").status_code == 404


def test_a_token_of_another_project_sees_none_of_the_fleets_nodes(
        service: Service, tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)  # nobody's
    with as_user(service, tokens["outsider"]) as outsider:
        assert outsider.get("/v1/nodes").json()["nodes"] == []
        resp = outsider.get(f"/v1/nodes/{node}")
    assert resp.status_code == 404
    assert f"Node {node} could not be found." in resp.json()["error_message"]


def owned_node(svc: Service, tokens: dict[str, str], **fields: str) -> str:
    node = new_node(svc, tokens)
    with as_user(svc, tokens["op-admin"]) as admin:
        resp = admin.patch(f"/v1/nodes/{node}", json=[
            {"op": "add", "path": f"/{k}", "value": v} for k, v in fields.items()])
        assert resp.status_code == 200, resp.text
    return node


def test_a_projects_token_acts_on_the_nodes_its_project_owns(
        service: Service, keystone: Keystone, tokens: dict[str, str]) -> None:
    node = owned_node(service, tokens, owner=keystone.project_id("tenant-a-member"))
    with as_user(service, tokens["tenant-a-member"]) as member:
        assert [n["uuid"] for n in member.get("/v1/nodes").json()["nodes"]] == [node]
        resp = member.patch(f"/v1/nodes/{node}", json=[
            {"op": "add", "path": "/extra/rack", "value": "r7"}])
        assert resp.status_code == 200, resp.text
        resp = member.patch(f"/v1/nodes/{node}", json=[
            {"op": "replace", "path": "/owner", "value": "someone-else"}])
        assert resp.status_code == 403
        assert "baremetal:node:update:owner" in resp.json()["error_message"]


def test_a_lessee_projects_reader_reads_but_does_not_act(
        service: Service, keystone: Keystone, tokens: dict[str, str]) -> None:
    node = owned_node(service, tokens, lessee=keystone.project_id("tenant-b-reader"))
    with as_user(service, tokens["tenant-b-reader"]) as reader:
        assert reader.get(f"/v1/nodes/{node}").status_code == 200
        resp = reader.put(f"/v1/nodes/{node}/states/power", json={"target": "power on"})
        assert resp.status_code == 403
    with as_user(service, tokens["tenant-a-member"]) as other:
        assert other.get(f"/v1/nodes/{node}").status_code == 404


def test_a_project_is_refused_the_systems_resources(service: Service,
                                                    tokens: dict[str, str]) -> None:
    with as_user(service, tokens["outsider"]) as outsider:
        resp = outsider.get("/v1/drivers")
    assert resp.status_code == 403
    assert "baremetal:driver:get" in resp.json()["error_message"]


def test_an_unknown_path_is_404_for_a_reader_not_403(service: Service,
                                                     tokens: dict[str, str]) -> None:
    with as_user(service, tokens["op-reader"]) as reader:
        assert reader.post("/v1/no-such-resource", json={}).status_code == 404
        assert reader.delete("/v1/drivers").status_code == 405


def test_a_token_without_any_of_our_roles_gets_403(service: Service,
                                                   tokens: dict[str, str]) -> None:
    with as_user(service, tokens["nobody"]) as nobody:
        resp = nobody.get("/v1/nodes")
    assert resp.status_code == 403
    assert "none of the roles admin, member, reader" in resp.json()["error_message"]


def test_history_records_the_token_user(service: Service, tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    with as_user(service, tokens["op-member"]) as member:
        member.patch(f"/v1/nodes/{node}", json=[{"op": "add", "path": "/extra/a", "value": 1}])
        events = member.get(f"/v1/nodes/{node}/history", params={"detail": "true"}).json()
    users = [(e["event"].split(":")[0], e["user"]) for e in events["history"]]
    assert users[0][1] == "op-admin" and users[0][0].startswith("Node created")
    assert ("Node updated", "op-member") in users


def test_discoverd_wants_a_token_and_a_role_too(service: Service,
                                                tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    url = f"{service.di_url}/v1/introspection/{node}"
    anonymous = httpx.post(url)
    assert anonymous.status_code == 401
    assert anonymous.headers["WWW-Authenticate"].startswith("Keystone uri=")
    assert httpx.post(url, headers={"X-Auth-Token": tokens["op-reader"]}).status_code == 403


def test_discoverd_refuses_a_token_acting_for_one_project(service: Service,
                                                          tokens: dict[str, str]) -> None:
    node = new_node(service, tokens)
    resp = httpx.post(f"{service.di_url}/v1/introspection/{node}",
                      headers={"X-Auth-Token": tokens["outsider"]})
    assert resp.status_code == 403
    assert "acts for project" in resp.text


def test_an_inspection_runs_with_both_services_authenticating_through_keystone(
        service: Service, tokens: dict[str, str], tmp_path: Path) -> None:
    spec, tree = machine(tmp_path, cpus=3, memory_mb=6144)
    with as_user(service, tokens["op-admin"]) as admin:
        node = enroll(admin, spec)
        inspect(admin, node)
        wait_ramdisk_booted(service, admin, node)
        proc = run_agent(tree, f"{service.di_url}/v1/continue")
        assert proc.returncode == 0, proc.stderr
        done = wait_node(admin, node, provision="manageable")
        events = admin.get(f"/v1/nodes/{node}/history", params={"detail": "true"}).json()
    assert done["properties"]["cpus"] == 3
    # discoverd's own changes (the properties it found) are recorded as the service user
    assert any(e["user"] == "svc" for e in events["history"]), events


def test_no_password_or_token_reaches_the_service_log(service: Service,
                                                      tokens: dict[str, str]) -> None:
    log = service.log.read_text()
    for user, (password, _, _) in USERS.items():
        assert password not in log
        assert tokens[user] not in log
    assert "pw-5e0c" not in log


def test_keystone_unreachable_gets_503_not_401_nor_500(tmp_path: Path, keystone: Keystone,
                                                       tokens: dict[str, str]) -> None:
    sections = keystone_sections(keystone)
    sections["keystone_authtoken"]["auth_url"] = f"http://127.0.0.1:{free_tcp_port()}/v3"
    svc = Service(tmp_path, as_ini(sections), only="baremetal").start()
    try:
        resp = httpx.get(f"{svc.url}/v1/nodes", headers={**H, "X-Auth-Token":
                                                         tokens["op-admin"]}, timeout=30)
    finally:
        svc.stop()
    assert resp.status_code == 503
    assert "cannot reach Keystone" in resp.json()["error_message"]


def test_serve_refuses_keystone_without_its_service_user(tmp_path: Path) -> None:
    conf = tmp_path / "ironsight.conf"
    conf.write_text(f"[DEFAULT]\nstate_dir = {tmp_path}\nauth_strategy = keystone\n"
                    "[keystone_authtoken]\nauth_url = http://127.0.0.1:1/v3\n")
    proc = subprocess.run([sys.executable, "-m", "ironsight.cli", "serve", "--config-file",
                           str(conf)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "needs [keystone_authtoken] username, password" in proc.stderr
    assert "Traceback" not in proc.stderr
