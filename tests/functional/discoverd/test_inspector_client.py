"""python-ironic-inspector-client 5.4 with its DEFAULT settings (it pins API 1.0) against a real
`ironsight serve`, and the data history it cannot see (an ironsight extension): the last
`[processing] data_history` introspections kept per node, the previous one's data readable
while a new one runs, and `ironsight introspection data diff` naming what changed in a
machine between two real introspections.

One process serves the module (no authentication: loopback noauth); every test works on its
own, uniquely named fake node, which a fake ramdisk report (tokenless, allowed here) ends."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from ironic_inspector_client import ClientV1
from keystoneauth1 import session as ks_session
from keystoneauth1.noauth import NoAuth

from ironsight.cli.main import _register, cli
from ironsight.cli.options import Runtime

from ..conftest import ServiceProcess
from .helpers import GIB

KEPT = 2  # [processing] data_history of the module's service

_register()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("inspector-client"),
                         extra_conf="[introspection]\nironic_retry_interval = 0.05\n"
                                    "allow_tokenless_reports = true\n"  # a fake ramdisk
                                    f"[processing]\ndata_history = {KEPT}\n")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture(scope="module")
def client(service: ServiceProcess) -> ClientV1:
    """The client as its documentation shows it, with nothing but the URL and a session."""
    return ClientV1(inspector_url=service.di_url, session=ks_session.Session(auth=NoAuth()))


class Machine:
    """A managed fake node with two ports and a BMC address, and the report its ramdisk
    sends; `report()` takes changes to the hardware."""

    def __init__(self, bm: httpx.Client) -> None:
        seq = uuid.uuid4().int
        self.macs = [f"02:{nic:02x}:{seq >> 16 & 0xff:02x}:{seq >> 8 & 0xff:02x}:"
                     f"{seq & 0xff:02x}:01" for nic in range(2)]
        self.bmc = f"198.18.{seq >> 8 & 0xff}.{seq & 0xff}"
        node = bm.post("/v1/nodes", json={"driver": "fake",
                                          "name": f"ic-{uuid.uuid4().hex[:8]}",
                                          "driver_info": {"ipmi_address": self.bmc}})
        assert node.status_code == 201, node.text
        self.uuid = node.json()["uuid"]
        for address in self.macs:
            assert bm.post("/v1/ports", json={"node_uuid": self.uuid,
                                              "address": address}).status_code == 201
        assert bm.put(f"/v1/nodes/{self.uuid}/states/provision",
                      json={"target": "manage"}).status_code == 202
        deadline = time.monotonic() + 30
        while bm.get(f"/v1/nodes/{self.uuid}").json()["provision_state"] != "manageable":
            assert time.monotonic() < deadline, "the node never became manageable"
            time.sleep(0.05)

    def report(self, *, disk_serial: str = "S3Z1NX0K", memory_mb: int = 65536,
               nic2_mac: str | None = None) -> dict[str, Any]:
        macs = [self.macs[0], nic2_mac or self.macs[1]]
        return {"inventory": {
            "interfaces": [{"name": f"eno{i + 1}", "mac_address": m,
                            "ipv4_address": "10.9.0.1" if i == 0 else None}
                           for i, m in enumerate(macs)],
            "cpu": {"count": 16, "architecture": "x86_64", "flags": ["vmx"],
                    "model_name": "AMD EPYC 7302P"},
            "memory": {"physical_mb": memory_mb},
            "disks": [{"name": "/dev/sda", "size": 240 * GIB, "serial": disk_serial,
                       "model": "SSD 860"}],
            "system_vendor": {"manufacturer": "Supermicro", "serial_number": "S1234",
                              "product_name": "AS-1014S"},
            "bmc_address": self.bmc,
            "boot": {"current_boot_mode": "uefi", "pxe_interface": self.macs[0]}},
            "root_disk": {"name": "/dev/sda", "size": 240 * GIB}}


@pytest.fixture(scope="module")
def bm(service: ServiceProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=30,
                      headers={"X-OpenStack-Ironic-API-Version": "latest"}) as c:
        yield c


@pytest.fixture(scope="module")
def di(service: ServiceProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.di_url, timeout=30) as c:
        yield c


@pytest.fixture
def machine(bm: httpx.Client) -> Machine:
    return Machine(bm)


def wait_finished(client: ClientV1, node: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while not (status := client.get_status(node))["finished"]:
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    return dict(status)


def introspect(client: ClientV1, di: httpx.Client, m: Machine, report: dict[str, Any]
               ) -> dict[str, Any]:
    """Start (through the client), post the report, wait for the end."""
    client.introspect(m.uuid)
    resp = di.post("/v1/continue", json=report)
    assert resp.status_code == 200, resp.text
    status = wait_finished(client, m.uuid)
    assert status["error"] is None, status
    return status


# --- the inspector client with its defaults ---------------------------------------------------


def test_the_client_pins_the_oldest_version_by_default(client: ClientV1) -> None:
    assert client._version_str == "1.0"


def test_get_data_with_the_default_version(client: ClientV1, di: httpx.Client,
                                           machine: Machine) -> None:
    introspect(client, di, machine, machine.report())
    assert client.get_data(machine.uuid)["cpus"] == 16
    assert client.get_data(machine.uuid, processed=False) == machine.report()


def test_reprocess_with_the_default_version(client: ClientV1, di: httpx.Client,
                                            machine: Machine) -> None:
    introspect(client, di, machine, machine.report())
    first = client.get_status(machine.uuid)["finished_at"]
    client.reprocess(machine.uuid)
    deadline = time.monotonic() + 30
    while (status := client.get_status(machine.uuid))["finished_at"] == first \
            or not status["finished"]:
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    assert status["state"] == "finished" and status["error"] is None


def test_abort_with_the_default_version(client: ClientV1, machine: Machine) -> None:
    client.introspect(machine.uuid)
    client.abort(machine.uuid)
    status = wait_finished(client, machine.uuid)
    assert (status["state"], status["error"]) == ("error", "Canceled by operator")


# --- data history -----------------------------------------------------------------------------


def history(di: httpx.Client, node: str) -> list[dict[str, Any]]:
    resp = di.get(f"/v1/introspection/{node}/data/history")
    assert resp.status_code == 200, resp.text
    return list(resp.json()["history"])


def test_the_previous_introspections_data_is_readable_while_a_new_one_runs(
        client: ClientV1, di: httpx.Client, machine: Machine) -> None:
    introspect(client, di, machine, machine.report(memory_mb=32768))
    client.introspect(machine.uuid)
    assert client.get_status(machine.uuid)["finished"] is False
    assert client.get_data(machine.uuid)["memory_mb"] == 32768
    [only] = history(di, machine.uuid)
    assert only["id"] == 1 and only["processed_at"] is not None


def test_a_node_keeps_its_last_introspections_and_drops_the_oldest(
        client: ClientV1, di: httpx.Client, machine: Machine) -> None:
    started = [introspect(client, di, machine, machine.report(memory_mb=mb))["started_at"]
               for mb in (16384, 32768, 65536)]
    runs = history(di, machine.uuid)
    assert [r["id"] for r in runs] == [3, 2][:KEPT]
    assert [r["started_at"] for r in runs] == started[::-1][:KEPT]
    assert di.get(f"/v1/introspection/{machine.uuid}/data/history/1").status_code == 404
    older = di.get(f"/v1/introspection/{machine.uuid}/data/history/2").json()
    assert older["memory_mb"] == 32768
    assert client.get_data(machine.uuid)["memory_mb"] == 65536  # .../data: the latest


def test_a_history_id_that_is_no_number_is_a_bad_request(di: httpx.Client,
                                                         machine: Machine) -> None:
    resp = di.get(f"/v1/introspection/{machine.uuid}/data/history/latest")
    assert resp.status_code == 400
    assert "Invalid history id 'latest'" in resp.json()["error"]["message"]


# --- the diff CLI -----------------------------------------------------------------------------


def test_diff_names_what_changed_between_two_real_introspections(
        client: ClientV1, di: httpx.Client, machine: Machine, service: ServiceProcess) -> None:
    introspect(client, di, machine, machine.report())
    introspect(client, di, machine, machine.report(disk_serial="S4EVNF0M", memory_mb=49152,
                                                   nic2_mac="b4:96:91:00:00:99"))
    result = CliRunner().invoke(
        cli, ["introspection", "--url", service.di_url, "data", "diff", machine.uuid,
              "-f", "json"], obj=Runtime(poll_interval=0.05))
    assert result.exit_code == 0, result.stderr
    found = json.loads(result.stdout)
    assert [(e["component"], e["key"], e["change"], e["severity"]) for e in found] == [
        ("memory", "total", "changed", "critical"),
        ("disk", "serial:S3Z1NX0K", "removed", "critical"),
        ("disk", "serial:S4EVNF0M", "added", "info"),
        ("nic", machine.macs[1], "removed", "warning"),
        ("nic", "b4:96:91:00:00:99", "added", "info")]
    assert "Introspection 1 (started " in result.stderr and "5 hardware change(s)" in result.stderr


def test_history_cli_lists_the_kept_introspections(
        client: ClientV1, di: httpx.Client, machine: Machine, service: ServiceProcess) -> None:
    introspect(client, di, machine, machine.report())
    result = CliRunner().invoke(
        cli, ["introspection", "--url", service.di_url, "data", "history", machine.uuid,
              "-f", "json"], obj=Runtime(poll_interval=0.05))
    assert result.exit_code == 0, result.stderr
    assert [r["id"] for r in json.loads(result.stdout)] == [1]
