"""openstacksdk's bare-metal proxy, unmodified, against a running `ironsight serve`.

No authentication (`auth_type="none"`) and an endpoint override; the API microversion is
negotiated by the SDK from the service's version documents. One service and one connection
serve the whole module, so every test works on its own, uniquely named node.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from typing import Any

import openstack.utils
import pytest
from openstack import connection, exceptions
from openstack.baremetal.v1._proxy import Proxy
from openstack.baremetal.v1.node import Node

# The SDK warns about its own internals (RemovedInSDK50/60Warning) on almost every call.
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")


@pytest.fixture(scope="module", autouse=True)
def fast_sdk_polling() -> Iterator[None]:
    """The SDK's `wait=True` polls every 2 s (`utils.iterate_timeout`'s default); poll every
    0.1 s instead. Only the client-side interval changes, not what is sent."""
    original = openstack.utils.iterate_timeout

    @functools.wraps(original)
    def iterate_timeout(timeout: Any, message: str, wait: Any = None) -> Any:
        return original(timeout, message, wait=0.1 if wait is None else wait)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(openstack.utils, "iterate_timeout", iterate_timeout)
        yield


@pytest.fixture(scope="module")
def baremetal(baremetal_url: str) -> Iterator[Proxy]:
    conn = connection.Connection(auth_type="none", baremetal_endpoint_override=baremetal_url)
    try:
        yield conn.baremetal
    finally:
        conn.close()


@pytest.fixture
def node(baremetal: Proxy) -> Iterator[Node]:
    created = baremetal.create_node(driver="fake", name=f"sdk-{uuid.uuid4().hex[:8]}")
    yield created
    baremetal.delete_node(created.id, ignore_missing=True)


@pytest.fixture
def managed_node(baremetal: Proxy, node: Node) -> Node:
    return baremetal.set_node_provision_state(node, "manage", wait=True, timeout=30)


def random_mac() -> str:
    return "52:54:00:" + ":".join(f"{b:02x}" for b in uuid.uuid4().bytes[:3])


# --- discovery and nodes --------------------------------------------------------------------


def test_microversion_is_negotiated_from_the_version_documents(baremetal: Proxy) -> None:
    data: Any = baremetal.get_endpoint_data()
    assert (data.min_microversion, data.max_microversion) == ((1, 1), (1, 115))
    assert str(baremetal.get_endpoint()).rstrip("/").endswith("/v1")


def test_nodes_lists_the_node(baremetal: Proxy, node: Node) -> None:
    listed = {n.id: n for n in baremetal.nodes()}
    assert listed[node.id].name == node.name
    detailed = {n.id: n for n in baremetal.nodes(details=True)}
    assert detailed[node.id].driver == "fake"


def test_nodes_filters_by_provision_state(baremetal: Proxy, managed_node: Node) -> None:
    ids = [n.id for n in baremetal.nodes(provision_state="manageable")]
    assert managed_node.id in ids
    assert all(n.provision_state == "manageable"
               for n in baremetal.nodes(details=True, provision_state="manageable"))


def test_create_node_returns_an_enrolled_node(baremetal: Proxy) -> None:
    name = f"sdk-{uuid.uuid4().hex[:8]}"
    created = baremetal.create_node(driver="fake", name=name, properties={"cpus": 2})
    try:
        assert uuid.UUID(created.id)
        assert (created.name, created.driver, created.provision_state) == (
            name, "fake", "enroll")
        assert created.properties == {"cpus": 2}
    finally:
        baremetal.delete_node(created.id)


def test_a_redfish_node_is_created_and_validated(baremetal: Proxy) -> None:
    created = baremetal.create_node(
        driver="redfish", name=f"sdk-rf-{uuid.uuid4().hex[:8]}",
        driver_info={"redfish_address": "https://10.0.0.5", "redfish_username": "admin",
                     "redfish_password": "rf-secret-2"})
    try:
        assert created.driver_info["redfish_password"] == "******"
        result = baremetal.validate_node(created, required=("power", "management"))
        assert result["power"].result and result["management"].result
    finally:
        baremetal.delete_node(created.id, ignore_missing=True)


def test_get_node_by_name(baremetal: Proxy, node: Node) -> None:
    got = baremetal.get_node(node.name)
    assert (got.id, got.name, got.provision_state) == (node.id, node.name, "enroll")


def test_find_node_by_name(baremetal: Proxy, node: Node) -> None:
    assert baremetal.find_node(node.name, ignore_missing=False).id == node.id
    with pytest.raises(exceptions.NotFoundException):
        baremetal.find_node("no-such-node", ignore_missing=False)


def test_get_missing_node_raises_not_found(baremetal: Proxy) -> None:
    with pytest.raises(exceptions.NotFoundException) as info:
        baremetal.get_node("no-such-node")
    assert "Node no-such-node could not be found" in str(info.value)


def test_set_provision_state_manage_waits_for_manageable(baremetal: Proxy,
                                                         node: Node) -> None:
    result = baremetal.set_node_provision_state(node, "manage", wait=True, timeout=30)
    assert (result.provision_state, result.target_provision_state) == ("manageable", None)


def test_set_provision_state_provide_waits_for_available(baremetal: Proxy,
                                                         managed_node: Node) -> None:
    result = baremetal.set_node_provision_state(managed_node, "provide", wait=True, timeout=30)
    assert (result.provision_state, result.target_provision_state) == ("available", None)


def test_illegal_provision_action_raises_bad_request(baremetal: Proxy, node: Node) -> None:
    with pytest.raises(exceptions.BadRequestException) as info:
        baremetal.set_node_provision_state(node, "provide")
    assert 'The requested action "provide" can not be performed' in str(info.value)


def test_set_power_state_on_waits_for_power_on(baremetal: Proxy, managed_node: Node) -> None:
    baremetal.set_node_power_state(managed_node, "power on", wait=True, timeout=30)
    got = baremetal.get_node(managed_node.id)
    assert (got.power_state, got.target_power_state) == ("power on", None)


def test_update_node_replaces_properties(baremetal: Proxy, node: Node) -> None:
    updated = baremetal.update_node(node, properties={"cpus": 4, "cpu_arch": "x86_64"})
    assert updated.properties == {"cpus": 4, "cpu_arch": "x86_64"}
    assert baremetal.get_node(node.id).properties == {"cpus": 4, "cpu_arch": "x86_64"}


def test_patch_node_adds_and_removes_keys(baremetal: Proxy, node: Node) -> None:
    baremetal.patch_node(node, [{"op": "add", "path": "/extra/rack", "value": "r1"},
                                {"op": "add", "path": "/extra/row", "value": 7}])
    patched = baremetal.patch_node(node, [{"op": "remove", "path": "/extra/rack"}])
    assert patched.extra == {"row": 7}


def test_maintenance_set_and_unset(baremetal: Proxy, node: Node) -> None:
    baremetal.set_node_maintenance(node, reason="disk swap")
    got = baremetal.get_node(node.id)
    assert (got.is_maintenance, got.maintenance_reason) == (True, "disk swap")
    baremetal.unset_node_maintenance(node)
    got = baremetal.get_node(node.id)
    assert (got.is_maintenance, got.maintenance_reason) == (False, None)


def test_validate_node_reports_power_and_management(baremetal: Proxy, node: Node) -> None:
    results = baremetal.validate_node(node, required=("power", "management"))
    assert results["power"].result is True
    assert results["management"].result is True


def test_validate_node_with_the_sdk_default_required_interfaces(baremetal: Proxy,
                                                                 node: Node) -> None:
    results = baremetal.validate_node(node)
    assert results["boot"].result is True
    assert results["deploy"].result is True


def test_set_node_boot_device_is_read_back(baremetal: Proxy, node: Node) -> None:
    baremetal.set_node_boot_device(node, "pxe", persistent=True)
    assert baremetal.get_node_boot_device(node) == {"boot_device": "pxe", "persistent": True}
    supported: Any = baremetal.get_node_supported_boot_devices(node)
    assert "pxe" in supported["supported_boot_devices"]


def test_delete_node_then_get_raises_not_found(baremetal: Proxy, node: Node) -> None:
    baremetal.delete_node(node, ignore_missing=False)
    with pytest.raises(exceptions.NotFoundException):
        baremetal.get_node(node.id)
    assert baremetal.delete_node(node.id, ignore_missing=True) is None


# --- ports ----------------------------------------------------------------------------------


@pytest.fixture
def port(baremetal: Proxy, node: Node) -> Any:
    return baremetal.create_port(address=random_mac(), node_id=node.id)


def test_create_port_normalizes_the_mac(baremetal: Proxy, node: Node) -> None:
    mac = random_mac()
    created = baremetal.create_port(address=mac.upper(), node_id=node.id, pxe_enabled=False)
    assert (created.address, created.node_id, created.is_pxe_enabled) == (
        mac, node.id, False)


def test_ports_for_the_node(baremetal: Proxy, node: Node, port: Any) -> None:
    assert [p.id for p in baremetal.ports(node=node.name)] == [port.id]
    detailed = list(baremetal.ports(details=True, node_id=node.id))
    assert [(p.id, p.address, p.node_id) for p in detailed] == [
        (port.id, port.address, node.id)]


def test_get_port_by_id(baremetal: Proxy, port: Any) -> None:
    assert baremetal.get_port(port.id).address == port.address


def test_delete_port(baremetal: Proxy, node: Node, port: Any) -> None:
    baremetal.delete_port(port, ignore_missing=False)
    assert list(baremetal.ports(node_id=node.id)) == []
    with pytest.raises(exceptions.NotFoundException):
        baremetal.get_port(port.id)


# --- drivers --------------------------------------------------------------------------------


def test_drivers_lists_the_hardware_types(baremetal: Proxy) -> None:
    names = {d.name for d in baremetal.drivers()}
    assert names == {"fake-hardware", "pxe_ipmitool", "pxe_ipminative", "pxe_ssh", "redfish"}
