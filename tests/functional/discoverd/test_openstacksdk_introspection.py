"""openstacksdk's baremetal_introspection proxy, unmodified, against a real `ironsight serve`
process (bare-metal service and discoverd in one process, each on its own port).

No authentication (`auth_type="none"`) and endpoint overrides for both services. One process
and one connection serve the module; every test works on its own, uniquely named node."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import openstack.utils
import pytest
from openstack import connection, exceptions
from openstack.baremetal.v1.node import Node

from ..conftest import ServiceProcess
from .helpers import GIB

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")


@pytest.fixture(scope="module", autouse=True)
def fast_sdk_polling() -> Iterator[None]:
    """The SDK's waits poll every 2 s by default; poll every 0.1 s instead (client side)."""
    original = openstack.utils.iterate_timeout

    @functools.wraps(original)
    def iterate_timeout(timeout: Any, message: str, wait: Any = None) -> Any:
        return original(timeout, message, wait=0.1 if wait is None else wait)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(openstack.utils, "iterate_timeout", iterate_timeout)
        yield


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """`ironsight serve` with discoverd on a free port; yields (bare-metal URL, discoverd
    URL)."""
    # ServiceProcess puts discoverd on a free port of its own, driving this process's
    # bare-metal API ([introspection] port and ironic_url); extra_conf sections merge in.
    svc = ServiceProcess(tmp_path_factory.mktemp("sdk-introspection"),
                         extra_conf="[introspection]\nironic_retry_interval = 0.05\n"
                                    "allow_tokenless_reports = true\n")  # a fake ramdisk
    svc.start()
    try:
        yield svc.url, svc.di_url
    finally:
        svc.stop()


@pytest.fixture(scope="module")
def conn(service: tuple[str, str]) -> Iterator[connection.Connection]:
    bm_url, di_url = service
    c = connection.Connection(auth_type="none", baremetal_endpoint_override=bm_url,
                              baremetal_introspection_endpoint_override=di_url)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def machine(conn: connection.Connection) -> Iterator[tuple[Node, list[str], str]]:
    """A managed fake node with two ports and a BMC address; (node, MACs, BMC address)."""
    seq = uuid.uuid4().int
    macs = [f"02:{nic:02x}:{seq >> 16 & 0xff:02x}:{seq >> 8 & 0xff:02x}:{seq & 0xff:02x}:01"
            for nic in range(2)]
    bmc = f"198.19.{seq >> 8 & 0xff}.{seq & 0xff}"
    node = conn.baremetal.create_node(driver="fake", name=f"sdk-intro-{uuid.uuid4().hex[:8]}",
                                      driver_info={"ipmi_address": bmc})
    for mac in macs:
        conn.baremetal.create_port(node_uuid=node.id, address=mac)
    node = conn.baremetal.set_node_provision_state(node, "manage", wait=True, timeout=30)
    yield node, macs, bmc
    conn.baremetal.delete_node(node.id, ignore_missing=True)


def _report(macs: list[str], bmc: str) -> dict[str, Any]:
    return {"inventory": {
        "interfaces": [{"name": f"eno{i}", "mac_address": m,
                        "ipv4_address": "10.9.0.1" if i == 0 else None}
                       for i, m in enumerate(macs)],
        "cpu": {"count": 16, "architecture": "x86_64", "flags": ["vmx"]},
        "memory": {"physical_mb": 65536},
        "disks": [{"name": "/dev/sda", "size": 240 * GIB}],
        "bmc_address": bmc, "boot": {"current_boot_mode": "uefi", "pxe_interface": macs[0]}},
        "root_disk": {"name": "/dev/sda", "size": 240 * GIB}}


def test_sdk_full_introspection(conn: connection.Connection, service: tuple[str, str],
                                machine: tuple[Node, list[str], str]) -> None:
    node, macs, bmc = machine
    proxy = conn.baremetal_introspection
    started = proxy.start_introspection(node)
    assert started.id == node.id
    intro = proxy.get_introspection(node.id)
    assert intro.id == node.id
    assert intro.state in ("starting", "waiting")
    assert intro.is_finished is False and intro.error is None
    assert node.id in [i.id for i in proxy.introspections()]

    resp = httpx.post(f"{service[1]}/v1/continue", json=_report(macs, bmc), timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"uuid": node.id}

    done = proxy.wait_for_introspection(node.id, timeout=30)
    assert done.is_finished is True and done.state == "finished" and done.error is None
    assert done.finished_at is not None
    processed = proxy.get_introspection_data(node.id)
    assert processed["cpus"] == 16 and processed["local_gb"] == 239
    raw = proxy.get_introspection_data(node.id, processed=False)
    assert raw == _report(macs, bmc)

    found = conn.baremetal.get_node(node.id)
    assert found.properties["cpus"] == 16
    assert found.properties["memory_mb"] == 65536
    assert found.power_state == "power off"


def test_sdk_abort(conn: connection.Connection, machine: tuple[Node, list[str], str]) -> None:
    node, _, _ = machine
    proxy = conn.baremetal_introspection
    intro = proxy.start_introspection(node.id)
    proxy.abort_introspection(intro)
    done = proxy.wait_for_introspection(node.id, timeout=30, ignore_error=True)
    assert done.state == "error" and done.error == "Canceled by operator"
    with pytest.raises(exceptions.ResourceFailure, match="Canceled by operator"):
        proxy.wait_for_introspection(node.id, timeout=30)


def test_sdk_start_unknown_node_is_not_found(conn: connection.Connection) -> None:
    with pytest.raises(exceptions.NotFoundException):
        conn.baremetal_introspection.start_introspection(str(uuid.uuid4()))
    with pytest.raises(exceptions.NotFoundException):
        conn.baremetal_introspection.get_introspection(str(uuid.uuid4()))


def test_sdk_refused_start_is_a_bad_request(conn: connection.Connection) -> None:
    node = conn.baremetal.create_node(driver="fake", name=f"sdk-noattr-{uuid.uuid4().hex[:8]}")
    try:
        with pytest.raises(exceptions.BadRequestException, match="No lookup attributes"):
            conn.baremetal_introspection.start_introspection(node)
    finally:
        conn.baremetal.delete_node(node.id)
