"""Authentication and roles on both APIs, for real: `ironsight serve` with http_basic (an
htpasswd file of bcrypt users), the conductor and discoverd authenticating to each other, and
a whole inspection (the real agent's report) under it."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..inspection.helpers import (
    Service,
    enroll,
    inspect,
    machine,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
)
from ..security import USERS, as_ini, auth_sections, basic, write_htpasswd

pytestmark = pytest.mark.functional

H = {"X-OpenStack-Ironic-API-Version": "1.115"}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    state = tmp_path_factory.mktemp("auth")
    svc = Service(state, as_ini(auth_sections(write_htpasswd(state / "htpasswd"))))
    svc.auth = basic("admin")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


def as_user(svc: Service, user: str | None) -> httpx.Client:
    return httpx.Client(base_url=svc.url, headers=H, timeout=15,
                        auth=basic(user) if user else None)


def new_node(svc: Service) -> str:
    with as_user(svc, "admin") as admin:
        resp = admin.post("/v1/nodes", json={"driver": "fake",
                                             "name": f"auth-{uuid.uuid4().hex[:8]}",
                                             "driver_info": {"ipmi_password": "pw-77f1"}})
        assert resp.status_code == 201, resp.text
        return str(resp.json()["uuid"])


def test_an_anonymous_request_gets_401_with_a_basic_challenge(service: Service) -> None:
    resp = httpx.get(f"{service.url}/v1/nodes", headers=H)
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"].startswith("Basic realm=")
    assert "Authentication required" in resp.json()["error_message"]


def test_an_anonymous_delete_changes_nothing(service: Service) -> None:
    node = new_node(service)
    assert httpx.delete(f"{service.url}/v1/nodes/{node}", headers=H).status_code == 401
    with as_user(service, "viewer") as viewer:
        assert viewer.get(f"/v1/nodes/{node}").status_code == 200


def test_a_wrong_password_gets_401(service: Service) -> None:
    resp = httpx.get(f"{service.url}/v1/nodes", headers=H, auth=("admin", "not-it"))
    assert resp.status_code == 401


def test_an_unknown_user_gets_401(service: Service) -> None:
    resp = httpx.get(f"{service.url}/v1/nodes", headers=H, auth=("mallory", "x"))
    assert resp.status_code == 401


def test_version_documents_stay_open(service: Service) -> None:
    for path in ("/", "/v1"):
        assert httpx.get(f"{service.url}{path}").status_code == 200
        assert httpx.get(f"{service.di_url}{path}").status_code == 200


def test_unknown_paths_need_credentials_too(service: Service) -> None:
    assert httpx.get(f"{service.url}/v1/no-such-thing").status_code == 401


def test_anonymous_introspection_start_gets_401_on_discoverd(service: Service) -> None:
    node = new_node(service)
    resp = httpx.post(f"{service.di_url}/v1/introspection/{node}")
    assert resp.status_code == 401
    assert "Authentication required" in resp.json()["error"]["message"]
    with as_user(service, "viewer") as viewer:
        assert viewer.get(f"/v1/nodes/{node}").json()["provision_state"] == "enroll"


def test_a_reader_reads_with_secrets_masked(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "viewer") as viewer:
        doc = viewer.get(f"/v1/nodes/{node}").json()
    assert doc["driver_info"] == {"ipmi_password": "******"}


def test_a_reader_cannot_change_a_node(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "viewer") as viewer:
        resp = viewer.patch(f"/v1/nodes/{node}",
                            json=[{"op": "add", "path": "/extra/x", "value": 1}])
        assert resp.status_code == 403
        assert "role reader" in resp.json()["error_message"]
        assert viewer.put(f"/v1/nodes/{node}/states/power",
                          json={"target": "power on"}).status_code == 403
        assert viewer.get(f"/v1/nodes/{node}").json()["extra"] == {}


def test_a_reader_cannot_start_an_introspection(service: Service) -> None:
    node = new_node(service)
    resp = httpx.post(f"{service.di_url}/v1/introspection/{node}", auth=basic("viewer"))
    assert resp.status_code == 403


def test_a_member_acts_on_nodes(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "ops") as ops:
        assert ops.patch(f"/v1/nodes/{node}", json=[
            {"op": "add", "path": "/extra/rack", "value": "r1"}]).status_code == 200
        assert ops.put(f"/v1/nodes/{node}/states/provision",
                       json={"target": "manage"}).status_code == 202
        wait_node(ops, node, provision="manageable")


def test_a_member_cannot_delete_a_node(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "ops") as ops:
        resp = ops.delete(f"/v1/nodes/{node}")
        assert resp.status_code == 403
        assert "needs role admin" in resp.json()["error_message"]
        assert ops.get(f"/v1/nodes/{node}").status_code == 200


def test_an_admin_deletes_a_node(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "admin") as admin:
        assert admin.delete(f"/v1/nodes/{node}").status_code == 204
        assert admin.get(f"/v1/nodes/{node}").status_code == 404


def test_history_records_the_user_of_each_change(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "ops") as ops:
        ops.patch(f"/v1/nodes/{node}", json=[{"op": "add", "path": "/extra/a", "value": 1}])
        events = ops.get(f"/v1/nodes/{node}/history", params={"detail": "true"}).json()
    users = [(e["event"].split(":")[0], e["user"]) for e in events["history"]]
    assert users[0][1] == "admin" and users[0][0].startswith("Node created")
    assert ("Node updated", "ops") in users


def test_an_inspection_runs_with_both_services_authenticating_to_each_other(
        service: Service, tmp_path: Path) -> None:
    spec, tree = machine(tmp_path, cpus=3, memory_mb=6144)
    with service.client() as admin:
        node = enroll(admin, spec)
        inspect(admin, node)
        wait_ramdisk_booted(service, admin, node)
        proc = run_agent(tree, f"{service.di_url}/v1/continue")
        assert proc.returncode == 0, proc.stderr
        done = wait_node(admin, node, provision="manageable")
        events = admin.get(f"/v1/nodes/{node}/history", params={"detail": "true"}).json()
    assert done["properties"]["cpus"] == 3
    # discoverd's own changes (the properties it found) are recorded as its service user
    assert any(e["user"] == "di-svc" for e in events["history"]), events


def test_no_password_reaches_the_service_log(service: Service) -> None:
    log = service.log.read_text()
    for _user, (password, _role) in USERS.items():
        assert password not in log
    assert "pw-77f1" not in log


# --- serve's safety net ---------------------------------------------------------------------


def serve(tmp_path: Path, conf: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "ironsight.conf"
    path.write_text(f"[DEFAULT]\nstate_dir = {tmp_path}\n{conf}")
    return subprocess.run([sys.executable, "-m", "ironsight.cli", "serve", "--config-file",
                           str(path)], capture_output=True, text=True, timeout=60)


def test_serve_refuses_noauth_on_a_network_address(tmp_path: Path) -> None:
    proc = serve(tmp_path, "[api]\nhost = 0.0.0.0\nport = 1\n")
    assert proc.returncode != 0
    assert "without authentication" in proc.stderr
    assert "allow_remote_noauth" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_serve_refuses_an_unreadable_user_file(tmp_path: Path) -> None:
    proc = serve(tmp_path, f"auth_strategy = http_basic\nhttp_basic_auth_user_file = "
                           f"{tmp_path / 'missing'}\n")
    assert proc.returncode != 0
    assert "cannot read http_basic_auth_user_file" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_serve_refuses_a_user_file_with_a_non_bcrypt_entry(tmp_path: Path) -> None:
    users = tmp_path / "htpasswd"
    users.write_text("old:$apr1$abcdefgh$0123456789abcdefghijkl\n")
    proc = serve(tmp_path, f"auth_strategy = http_basic\nhttp_basic_auth_user_file = {users}\n")
    assert proc.returncode != 0
    assert "is not bcrypt" in proc.stderr


@pytest.mark.parametrize("path", ["states/console", "management/boot_device", "validate"])
def test_a_reader_is_refused_what_ironic_keeps_for_members(service: Service,
                                                           path: str) -> None:
    node = new_node(service)
    with as_user(service, "viewer") as viewer:
        resp = viewer.get(f"/v1/nodes/{node}/{path}")
    assert resp.status_code == 403
    assert "role reader" in resp.json()["error_message"]
    with as_user(service, "ops") as ops:
        assert ops.get(f"/v1/nodes/{node}/{path}").status_code == 200


def test_a_reader_reads_indicators(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "viewer") as viewer:
        assert viewer.get(f"/v1/nodes/{node}/management/indicators").status_code == 200


def test_vendor_passthru_is_for_admins_only(service: Service) -> None:
    node = new_node(service)
    with as_user(service, "ops") as ops:
        assert ops.get(f"/v1/nodes/{node}/vendor_passthru/methods").status_code == 403
    with as_user(service, "admin") as admin:
        assert admin.get(f"/v1/nodes/{node}/vendor_passthru/methods").status_code == 200
