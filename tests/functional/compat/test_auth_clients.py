"""The upstream clients, unmodified, against both services with http_basic on and HTTPS with a
CA made in the test: python-ironicclient's `baremetal`, openstacksdk (`auth_type:
http_basic`), python-ironic-inspector-client, and our own CLI by OpenStack's conventions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openstack
import pytest
import yaml  # type: ignore[import-untyped]
from ironic_inspector_client import ClientV1
from ironic_inspector_client.v1 import MAX_API_VERSION
from keystoneauth1 import session as ks_session
from keystoneauth1.http_basic import HTTPBasicAuth

from ..conftest import ServiceProcess
from ..security import (
    USERS,
    Pki,
    as_ini,
    auth_sections,
    basic,
    make_pki,
    tls_sections,
    write_htpasswd,
)
from .sdk_flows import manages_a_node, starts_and_reads_an_introspection

pytestmark = pytest.mark.functional

BAREMETAL = shutil.which("baremetal") or str(Path(sys.executable).parent / "baremetal")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[ServiceProcess]:
    state = tmp_path_factory.mktemp("clients")
    svc = ServiceProcess(state, as_ini(auth_sections(write_htpasswd(state / "htpasswd")),
                                       tls_sections(pki)))
    svc.use_https(pki.ca_file).start()
    try:
        yield svc
    finally:
        svc.stop()


def name() -> str:
    return f"cl-{uuid.uuid4().hex[:8]}"


# --- python-ironicclient's `baremetal` ------------------------------------------------------


def bm(svc: ServiceProcess, pki: Pki, user: str, *args: str,
       check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OS_PASSWORD": USERS[user][0]}
    proc = subprocess.run([BAREMETAL, "--os-auth-type", "http_basic", "--os-endpoint", svc.url,
                           "--os-username", user, "--os-cacert", str(pki.ca_file), *args],
                          capture_output=True, text=True, timeout=60, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"baremetal {' '.join(args)} failed: {proc.stderr}")
    return proc


def test_baremetal_cli_creates_shows_and_deletes_a_node_as_admin(service: ServiceProcess,
                                                                 pki: Pki) -> None:
    created = json.loads(bm(service, pki, "admin", "node", "create", "--driver", "fake",
                            "--name", name(), "-f", "json").stdout)
    shown = json.loads(bm(service, pki, "admin", "node", "show", created["uuid"],
                          "-f", "json").stdout)
    assert shown["name"] == created["name"]
    bm(service, pki, "admin", "node", "delete", created["uuid"])


def test_baremetal_cli_as_reader_cannot_create_a_node(service: ServiceProcess,
                                                       pki: Pki) -> None:
    proc = bm(service, pki, "viewer", "node", "create", "--driver", "fake", check=False)
    assert proc.returncode != 0
    assert "role reader" in proc.stderr


def test_baremetal_cli_with_a_wrong_password_is_refused(service: ServiceProcess,
                                                        pki: Pki) -> None:
    proc = subprocess.run([BAREMETAL, "--os-auth-type", "http_basic", "--os-endpoint",
                           service.url, "--os-username", "admin", "--os-password", "wrong",
                           "--os-cacert", str(pki.ca_file), "node", "list"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "401" in proc.stderr or "Unauthorized" in proc.stderr


# --- openstacksdk ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clouds(service: ServiceProcess, pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clouds.yaml with one cloud per user of USERS."""
    path = tmp_path_factory.mktemp("clouds") / "clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {
        user: {"auth_type": "http_basic",
               "auth": {"username": user, "password": password, "endpoint": service.url},
               "baremetal_endpoint_override": service.url,
               "baremetal_introspection_endpoint_override": service.di_url,
               "cacert": str(pki.ca_file)}
        for user, (password, _) in USERS.items()}}))
    path.chmod(0o600)
    return path


@pytest.fixture
def sdk(clouds: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))
    return openstack.connect(cloud="admin")


def test_openstacksdk_manages_a_node(sdk: Any) -> None:
    manages_a_node(sdk, "cl")


def test_openstacksdk_starts_and_reads_an_introspection(sdk: Any) -> None:
    starts_and_reads_an_introspection(sdk, "cl")


def test_openstacksdk_as_reader_cannot_delete(clouds: Path, sdk: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    node = sdk.baremetal.create_node(driver="fake", name=name())
    reader = openstack.connect(cloud="viewer")
    with pytest.raises(openstack.exceptions.ForbiddenException):
        reader.baremetal.delete_node(node)
    sdk.baremetal.delete_node(node)


# --- python-ironic-inspector-client ---------------------------------------------------------


def inspector(svc: ServiceProcess, pki: Pki, user: str) -> ClientV1:
    auth = HTTPBasicAuth(endpoint=svc.di_url, username=user, password=USERS[user][0])
    # the newest version it speaks (its default, 1.0, is issue 12's matter)
    return ClientV1(session=ks_session.Session(auth=auth, verify=str(pki.ca_file)),
                    inspector_url=svc.di_url, api_version=MAX_API_VERSION)


def test_inspector_client_starts_and_reads_an_introspection(service: ServiceProcess,
                                                            pki: Pki, sdk: Any) -> None:
    node = sdk.baremetal.create_node(driver="fake", name=name())
    sdk.baremetal.create_port(node_id=node.id, address=f"52:54:00:aa:{os.getpid() % 256:02x}:07")
    sdk.baremetal.set_node_provision_state(node, "manage", wait=True, timeout=30)
    client = inspector(service, pki, "ops")
    client.introspect(node.id)
    status = client.get_status(node.id)
    assert status["uuid"] == node.id
    assert node.id in [s["uuid"] for s in client.list_statuses()]
    client.abort(node.id)


def test_inspector_client_as_reader_cannot_start(service: ServiceProcess, pki: Pki,
                                                 sdk: Any) -> None:
    from ironic_inspector_client.common.http import ClientError

    node = sdk.baremetal.create_node(driver="fake", name=name())
    with pytest.raises(ClientError) as caught:
        inspector(service, pki, "viewer").introspect(node.id)
    assert caught.value.response.status_code == 403


# --- ironsight's own CLI --------------------------------------------------------------------


def ironsight(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    return subprocess.run([sys.executable, "-m", "ironsight.cli", *args], capture_output=True,
                          text=True, timeout=60, env={**clean, **env})


def test_ironsight_cli_takes_credentials_from_os_variables(service: ServiceProcess,
                                                           pki: Pki) -> None:
    user, password = basic("ops")
    proc = ironsight("node", "list", "-f", "json", env={
        "IRONSIGHT_URL": service.url, "OS_USERNAME": user, "OS_PASSWORD": password,
        "OS_CACERT": str(pki.ca_file)})
    assert proc.returncode == 0, proc.stderr
    assert isinstance(json.loads(proc.stdout), list)


def test_ironsight_cli_takes_cloud_and_endpoints_from_clouds_yaml(service: ServiceProcess,
                                                                  clouds: Path) -> None:
    env = {"OS_CLIENT_CONFIG_FILE": str(clouds), "OS_CLOUD": "viewer"}
    nodes = ironsight("node", "list", "-f", "json", env=env)
    assert nodes.returncode == 0, nodes.stderr
    statuses = ironsight("introspection", "list", "-f", "json", env=env)
    assert statuses.returncode == 0, statuses.stderr


def test_ironsight_cli_without_credentials_says_authentication_is_required(
        service: ServiceProcess, pki: Pki) -> None:
    proc = ironsight("node", "list", env={"IRONSIGHT_URL": service.url,
                                          "OS_CACERT": str(pki.ca_file)})
    assert proc.returncode == 1
    assert "Authentication required" in proc.stderr and "401" in proc.stderr


def test_ironsight_cli_without_the_ca_fails_the_certificate_check(service: ServiceProcess
                                                                  ) -> None:
    user, password = basic("ops")
    proc = ironsight("node", "list", env={"IRONSIGHT_URL": service.url, "OS_USERNAME": user,
                                          "OS_PASSWORD": password})
    assert proc.returncode == 1
    assert "CERTIFICATE_VERIFY_FAILED" in proc.stderr
