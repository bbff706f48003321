"""The upstream clients, unmodified, authenticating with a real Keystone (password auth) to both
services under auth_strategy = keystone: python-ironicclient's `baremetal`, openstacksdk
(`auth_type: password` in clouds.yaml) and python-ironic-inspector-client (a keystoneauth
password session)."""

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

from ..conftest import ServiceProcess
from ..keystone import USERS, Keystone, keystone_sections
from ..security import as_ini
from .sdk_flows import manages_a_node, starts_and_reads_an_introspection

pytestmark = pytest.mark.functional

BAREMETAL = shutil.which("baremetal") or str(Path(sys.executable).parent / "baremetal")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory,
            keystone: Keystone) -> Iterator[ServiceProcess]:
    state = tmp_path_factory.mktemp("keystone-clients")
    svc = ServiceProcess(state, as_ini(keystone_sections(keystone))).start()
    keystone.register("baremetal", "ironic", svc.url)
    keystone.register("baremetal-introspection", "ironic-inspector", svc.di_url)
    try:
        yield svc
    finally:
        svc.stop()


def name() -> str:
    return f"ksc-{uuid.uuid4().hex[:8]}"


# --- python-ironicclient's `baremetal` ------------------------------------------------------


def bm(svc: ServiceProcess, keystone: Keystone, user: str, *args: str,
       check: bool = True) -> subprocess.CompletedProcess[str]:
    password, project, _ = USERS[user]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OS_")},
           "OS_PASSWORD": password}
    proc = subprocess.run([BAREMETAL, "--os-auth-type", "password", "--os-auth-url",
                           keystone.url, "--os-username", user, "--os-project-name", project,
                           "--os-user-domain-name", "Default", "--os-project-domain-name",
                           "Default", *args],
                          capture_output=True, text=True, timeout=60, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"baremetal {' '.join(args)} failed: {proc.stderr}")
    return proc


def test_baremetal_cli_finds_the_service_in_keystones_catalog_and_manages_a_node(
        service: ServiceProcess, keystone: Keystone) -> None:
    created = json.loads(bm(service, keystone, "op-admin", "node", "create", "--driver",
                            "fake", "--name", name(), "-f", "json").stdout)
    listed = json.loads(bm(service, keystone, "op-admin", "node", "list", "-f",
                           "json").stdout)
    assert created["uuid"] in [n["uuid"] for n in listed]
    bm(service, keystone, "op-admin", "node", "delete", created["uuid"])


def test_baremetal_cli_as_reader_cannot_create_a_node(service: ServiceProcess,
                                                       keystone: Keystone) -> None:
    proc = bm(service, keystone, "op-reader", "node", "create", "--driver", "fake",
              check=False)
    assert proc.returncode != 0
    assert "role reader" in proc.stderr


# --- openstacksdk ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clouds(service: ServiceProcess, keystone: Keystone,
           tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clouds.yaml with one password-auth cloud per operator."""
    path = tmp_path_factory.mktemp("ks-clouds") / "clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {
        user: {"auth_type": "password",
               "auth": {"auth_url": keystone.url, "username": user, "password": password,
                        "project_name": project, "user_domain_name": "Default",
                        "project_domain_name": "Default"},
               "baremetal_endpoint_override": service.url,
               "baremetal_introspection_endpoint_override": service.di_url}
        for user, (password, project, _) in USERS.items() if user.startswith("op-")}}))
    path.chmod(0o600)
    return path


@pytest.fixture
def sdk(clouds: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))
    return openstack.connect(cloud="op-admin")


def test_openstacksdk_manages_a_node(sdk: Any) -> None:
    manages_a_node(sdk, "ksc")


def test_openstacksdk_starts_and_reads_an_introspection(sdk: Any) -> None:
    starts_and_reads_an_introspection(sdk, "ksc")


def test_openstacksdk_as_member_cannot_delete(sdk: Any) -> None:
    node = sdk.baremetal.create_node(driver="fake", name=name())
    member = openstack.connect(cloud="op-member")
    with pytest.raises(openstack.exceptions.ForbiddenException):
        member.baremetal.delete_node(node)
    sdk.baremetal.delete_node(node)


# --- python-ironic-inspector-client ---------------------------------------------------------


def inspector(svc: ServiceProcess, keystone: Keystone, user: str) -> ClientV1:
    password, project, _ = USERS[user]
    return ClientV1(session=keystone.session(user, password, project),
                    inspector_url=svc.di_url, api_version=MAX_API_VERSION)


def test_inspector_client_starts_and_reads_an_introspection(service: ServiceProcess,
                                                            keystone: Keystone,
                                                            sdk: Any) -> None:
    node = sdk.baremetal.create_node(driver="fake", name=name())
    sdk.baremetal.create_port(node_id=node.id, address=f"52:54:00:ab:{os.getpid() % 256:02x}:09")
    sdk.baremetal.set_node_provision_state(node, "manage", wait=True, timeout=30)
    client = inspector(service, keystone, "op-member")
    client.introspect(node.id)
    assert client.get_status(node.id)["uuid"] == node.id
    assert node.id in [s["uuid"] for s in client.list_statuses()]
    client.abort(node.id)


def test_inspector_client_as_reader_cannot_start(service: ServiceProcess, keystone: Keystone,
                                                 sdk: Any) -> None:
    from ironic_inspector_client.common.http import ClientError

    node = sdk.baremetal.create_node(driver="fake", name=name())
    with pytest.raises(ClientError) as caught:
        inspector(service, keystone, "op-reader").introspect(node.id)
    assert caught.value.response.status_code == 403
