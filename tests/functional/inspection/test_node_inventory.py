"""`GET /v1/nodes/{node}/inventory` (1.81): what the node's latest inspection found, read
by the bare-metal service from discoverd, in Ironic's shape (`inventory`, `plugin_data`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import free_tcp_port
from .helpers import (
    Service,
    accepted_reply,
    agent_document,
    enroll,
    expected_local_gb,
    inspect,
    machine,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
)

AT_1_80 = {"X-OpenStack-Ironic-API-Version": "1.80"}


@pytest.fixture(scope="module")
def inspected(service: Service, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[dict[str, Any]]:
    """A fake node inspected once by the real agent; its inventory as the API shows it."""
    spec, tree = machine(tmp_path_factory.mktemp("inventory"), nics=2, cpus=6,
                         memory_mb=12288, disks_gb=(2, 30, 100))
    with service.client() as client:
        uuid = enroll(client, spec)
        inspect(client, uuid)
        wait_ramdisk_booted(service, client, uuid)
        assert accepted_reply(run_agent(tree, f"{service.di_url}/v1/continue"))[0] == 200
        wait_node(client, uuid, provision="manageable")
        resp = client.get(f"/v1/nodes/{spec.name}/inventory")
        yield {"spec": spec, "tree": tree, "uuid": uuid, "resp": resp}


def test_an_inspected_node_shows_the_inventory_its_ramdisk_reported(inspected):
    resp = inspected["resp"]
    assert resp.status_code == 200, resp.text
    assert set(resp.json()) == {"inventory", "plugin_data"}
    assert resp.json()["inventory"] == agent_document(inspected["tree"])["inventory"]


def test_the_plugin_data_hold_what_processing_found(inspected):
    spec, plugin_data = inspected["spec"], inspected["resp"].json()["plugin_data"]
    assert plugin_data["local_gb"] == expected_local_gb(spec)
    assert plugin_data["root_disk"]["size"] == 30 * 1024**3
    assert plugin_data["boot_interface"] == "01-" + spec.pxe_mac.replace(":", "-")
    assert set(plugin_data["macs"]) == set(spec.macs)
    assert {i["mac"] for i in plugin_data["all_interfaces"].values()} == set(spec.macs)
    assert "inventory" not in plugin_data and "logs" not in plugin_data


def test_the_inventory_is_the_same_as_discoverds_processed_data(service, inspected):
    processed = httpx.get(f"{service.di_url}/v1/introspection/{inspected['uuid']}/data",
                          timeout=10).json()
    shown = inspected["resp"].json()
    assert shown["inventory"] == processed["inventory"]
    assert shown["plugin_data"] == {k: v for k, v in processed.items()
                                    if k not in ("inventory", "logs")}


def test_below_1_81_the_inventory_does_not_exist(service, inspected):
    resp = httpx.get(f"{service.url}/v1/nodes/{inspected['uuid']}/inventory", headers=AT_1_80,
                     timeout=10)
    assert resp.status_code == 404


def test_a_node_never_inspected_has_no_inventory_record(client, tmp_path):
    spec, _ = machine(tmp_path)
    uuid = enroll(client, spec)
    resp = client.get(f"/v1/nodes/{uuid}/inventory")
    assert resp.status_code == 404
    assert f"Node inventory record for node {uuid} could not be found." in \
        resp.json()["error_message"]


def test_an_unknown_node_is_not_found(client):
    resp = client.get("/v1/nodes/no-such-node/inventory")
    assert resp.status_code == 404
    assert "Node no-such-node could not be found." in resp.json()["error_message"]


# --- without discoverd ----------------------------------------------------------------------


def _new_node_inventory(svc: Service, where: Path) -> tuple[str, httpx.Response]:
    """Enroll a node in the service; (its UUID, the answer to its inventory)."""
    spec, _ = machine(where)
    with svc.client() as client:
        resp = client.post("/v1/nodes", json={"driver": "fake", "name": spec.name})
        assert resp.status_code == 201, resp.text
        uuid = str(resp.json()["uuid"])
        return uuid, client.get(f"/v1/nodes/{uuid}/inventory")


def test_with_discoverd_disabled_no_node_has_an_inventory_record(tmp_path):
    svc = Service(tmp_path, "[discoverd]\nenabled = false\n", service_url=False,
                  only="baremetal").start()
    try:
        uuid, resp = _new_node_inventory(svc, tmp_path)
    finally:
        svc.stop()
    assert resp.status_code == 404
    assert f"Node inventory record for node {uuid} could not be found." in \
        resp.json()["error_message"]


def test_with_discoverd_unreachable_the_inventory_is_unavailable(tmp_path):
    dead = f"http://127.0.0.1:{free_tcp_port()}/v1"
    svc = Service(tmp_path, f"[discoverd]\nservice_url = {dead}\n", only="baremetal").start()
    try:
        _, resp = _new_node_inventory(svc, tmp_path)
    finally:
        svc.stop()
    assert resp.status_code == 503
    assert "could not be read from discoverd" in resp.json()["error_message"]
