"""openstacksdk, unmodified, with the clouds.yaml Bifrost writes for its users: http_basic, and
the bare-metal service's root URL (no `/v1`) as the endpoint of every service, which makes
openstacksdk send `/nodes/...`, `/ports/...`, `/drivers/...` (served by legacy_paths.py).

The shape is Bifrost's, from openstack/bifrost
playbooks/roles/bifrost-keystone-client-config/templates/clouds.yaml.j2 (the branch used
when neither enable_keystone nor noauth_mode is set, Bifrost's default since 2020):

    bifrost:
      auth_type: "http_basic"
      auth:
        username: "{{ default_username }}"
        password: "{{ default_password }}"
        endpoint: {{ ironic_api_url }}
    {% if enable_tls | bool %}
      cacert: "{{ tls_certificate_path }}"
    {% endif %}
    bifrost-admin:   (the same with admin_username / admin_password)

with ironic_api_url "{{ api_protocol }}://{{ internal_ip }}:6385" (the role's defaults), and
default_username `bifrost_user`, admin_username `admin`. No endpoint overrides: Bifrost dropped
ironic-inspector (and `baremetal_introspection_endpoint_override`), it inspects through the
bare-metal API. TLS is on here (`enable_tls`), so the `cacert` lines are in.

The calls are those of the Ansible modules Bifrost's playbooks run (openstack.cloud):
baremetal_node (register_machine / unregister_machine), baremetal_node_info (find_node,
get_nic_by_mac, get_node, nodes(details=True)), baremetal_inspect (inspect_machine), and
bifrost-test-inspection's `baremetal node inventory save`."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openstack
import pytest
import requests
import yaml  # type: ignore[import-untyped]

from ..conftest import free_tcp_port
from ..inspection.helpers import Service, machine, run_agent, wait_ramdisk_booted
from ..security import USERS, Pki, as_ini, auth_sections, make_pki, tls_sections, write_htpasswd

pytestmark = pytest.mark.functional

# Bifrost's two users (its defaults' names); both may do everything, as any user of an Ironic
# with http_basic (Bifrost's playbooks enrol, inspect and delete as `bifrost_user`).
BIFROST_USERS = {"bifrost_user": ("bifrost-user-pass-61d0", "admin"),
                 "admin": USERS["admin"]}
USERS_HERE = {**USERS, **BIFROST_USERS}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[Service]:
    """Both services over HTTPS with http_basic, discoverd inspecting the fake nodes; its
    ramdisk endpoint on a plain-HTTP listener of its own (the agent has no CA)."""
    state = tmp_path_factory.mktemp("bifrost")
    htpasswd = write_htpasswd(state / "htpasswd", USERS_HERE)
    svc = Service(state, as_ini(auth_sections(htpasswd, USERS_HERE), tls_sections(pki)))
    svc.ramdisk_url = f"http://127.0.0.1:{free_tcp_port()}"
    svc.configure(introspection={"ramdisk_host": "127.0.0.1",
                                 "ramdisk_port": svc.ramdisk_url.rsplit(":", 1)[1]})
    svc.use_https(pki.ca_file)
    svc.configure(discoverd={"service_url": f"{svc.di_url}/v1"})
    svc.auth = ("bifrost_user", BIFROST_USERS["bifrost_user"][0])
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


def bifrost_clouds(ironic_api_url: str, tls_certificate_path: Path) -> dict[str, Any]:
    """clouds.yaml.j2's http_basic branch, with enable_tls."""
    def cloud(user: str) -> dict[str, Any]:
        return {"auth_type": "http_basic",
                "auth": {"username": user, "password": BIFROST_USERS[user][0],
                         "endpoint": ironic_api_url},
                "cacert": str(tls_certificate_path)}

    return {"clouds": {"bifrost": cloud("bifrost_user"), "bifrost-admin": cloud("admin")}}


@pytest.fixture(scope="module")
def clouds(service: Service, pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clouds") / "clouds.yaml"
    path.write_text(yaml.safe_dump(bifrost_clouds(service.url, pki.ca_file)))
    path.chmod(0o600)
    return path


class Recorder:
    """Every HTTP exchange of a connection, as requests saw it (redirects included)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    def __call__(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self.seen.append((str(response.request.method), str(response.request.path_url),
                          response.status_code))

    def failures(self) -> list[tuple[str, str, int]]:
        return [s for s in self.seen if s[2] >= 300]

    def with_v1(self) -> list[tuple[str, str, int]]:
        return [s for s in self.seen if s[1] == "/v1" or s[1].startswith(("/v1/", "/v1?"))]

    def paths(self) -> set[str]:
        return {f"{method} {urlsplit(path).path}" for method, path, _ in self.seen}


def connect(clouds: Path, cloud: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Recorder]:
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))
    conn = openstack.connect(cloud=cloud)
    recorder = Recorder()
    conn.session.session.hooks["response"].append(recorder)
    return conn, recorder


def play_ramdisk(svc: Service, uuid: str, tree: Path) -> None:
    """The node's inspection ramdisk: once it is booted, the real agent reports."""
    with svc.client() as client:
        wait_ramdisk_booted(svc, client, uuid, timeout=30)
    proc = run_agent(tree, f"{svc.ramdisk_url}/v1/continue")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("cloud", ["bifrost", "bifrost-admin"])
def test_the_bifrost_clouds_reach_the_service_at_its_root_url(
        service: Service, clouds: Path, cloud: str, monkeypatch: pytest.MonkeyPatch) -> None:
    conn, recorder = connect(clouds, cloud, monkeypatch)
    assert conn.baremetal.get_endpoint().rstrip("/") == service.url
    assert isinstance(list(conn.baremetal.nodes(details=True)), list)
    assert recorder.seen and not recorder.failures() and not recorder.with_v1(), recorder.seen


def test_the_bifrost_cloud_enrols_looks_up_inspects_and_deletes_a_node(
        service: Service, clouds: Path, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    spec, tree = machine(tmp_path, nics=2, cpus=6, memory_mb=12288, disks_gb=(2, 30, 100))

    def nics() -> list[dict[str, str]]:  # a fresh list per call: openstacksdk empties it
        return [{"address": mac} for mac in spec.macs]

    conn, recorder = connect(clouds, "bifrost", monkeypatch)

    # --- enrol (baremetal_node, state present): to `available` through cleaning
    node = conn.register_machine(nics=nics(), wait=True, timeout=60, driver="fake-hardware",
                                 name=spec.name, properties={"cpu_arch": spec.arch})
    assert node.name == spec.name and node.provision_state == "available"

    # --- look-ups (baremetal_node_info, baremetal_port_info, drivers)
    assert conn.baremetal.find_node(spec.name).id == node.id
    assert conn.get_machine(node.id).name == spec.name
    assert conn.baremetal.get_node(node.id).driver == "fake-hardware"
    detailed = {n.id: n for n in conn.baremetal.nodes(details=True)}
    assert detailed[node.id].provision_state == "available"
    assert detailed[node.id].properties["cpu_arch"] == spec.arch
    nic = conn.get_nic_by_mac(spec.pxe_mac)
    assert nic is not None and nic.node_id == node.id and nic.address == spec.pxe_mac
    assert conn.get_machine_by_mac(spec.macs[1]).id == node.id
    assert conn.baremetal.find_port(nic.id).address == spec.pxe_mac
    ports = {p.address for p in conn.baremetal.ports(details=True, node_id=node.id)}
    assert ports == set(spec.macs)
    assert "fake-hardware" in {d.name for d in conn.baremetal.drivers()}
    assert conn.baremetal.get_driver("fake-hardware").name == "fake-hardware"
    properties = conn.baremetal.get("/drivers/fake-hardware/properties",
                                    microversion="1.1").json()
    assert isinstance(properties, dict) and properties
    instance = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
    conn.baremetal.update_node(node, instance_id=instance)
    by_instance = list(conn.baremetal.nodes(instance_id=instance))
    assert [n.id for n in by_instance] == [node.id]
    conn.baremetal.update_node(node, instance_id=None)

    # --- inspection (baremetal_inspect): available -> manage -> inspect -> provide
    with ThreadPoolExecutor(1) as pool:
        ramdisk = pool.submit(play_ramdisk, service, node.id, tree)
        inspected = conn.inspect_machine(node.id, wait=True, timeout=60)
        ramdisk.result(timeout=60)
    assert inspected.provision_state == "available"
    after = conn.baremetal.get_node(node.id)
    assert after.properties["cpus"] == spec.cpus
    assert after.properties["memory_mb"] == spec.memory_mb
    assert after.last_error is None
    inventory = conn.baremetal.get_node_inventory(node.id)  # bifrost-test-inspection
    assert {"memory", "cpu", "bmc_address", "interfaces", "disks"} <= set(inventory["inventory"])
    found = {i["mac_address"] for i in inventory["inventory"]["interfaces"]}
    assert set(spec.macs) <= found

    # --- deletion (baremetal_node, state absent)
    conn.unregister_machine(nics=nics(), uuid=node.id)

    # every call succeeded and went to the root URL's paths, none under /v1
    assert not recorder.failures(), recorder.failures()
    assert not recorder.with_v1(), recorder.with_v1()
    paths = recorder.paths()
    for wanted in ("POST /nodes", "POST /ports", f"GET /nodes/{node.id}",
                   f"PUT /nodes/{node.id}/states/provision", "GET /nodes/detail",
                   "GET /ports/detail", f"DELETE /nodes/{node.id}",
                   f"GET /nodes/{node.id}/inventory", "GET /drivers"):
        assert wanted in paths, sorted(paths)

    # and the node is gone: the one refusal, a 404 on /nodes/<uuid>
    assert conn.baremetal.find_node(node.id, ignore_missing=True) is None
    assert conn.get_nic_by_mac(spec.pxe_mac) is None
    assert recorder.failures() == [("GET", f"/nodes/{node.id}", 404)], recorder.failures()
