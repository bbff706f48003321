"""Several `ironsight serve` processes on one PostgreSQL share the nodes: locks are database
reservations, and a replica that dies has its locks recovered by the others."""

from __future__ import annotations

import os
import signal
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import PG_URL, ServiceProcess, drop_pg_database, fresh_pg_database
from .waits import until

H = {"X-OpenStack-Ironic-API-Version": "1.115"}

Replicas = list[ServiceProcess]

pytestmark = pytest.mark.skipif(not PG_URL, reason="IRONSIGHT_TEST_PG_URL is not set")


@pytest.fixture
def shared_db() -> Iterator[str]:
    url = fresh_pg_database(f"ironsight_scale_{uuid.uuid4().hex[:8]}")
    yield url
    drop_pg_database(url)


@pytest.fixture
def replicas() -> Iterator[Replicas]:
    """Every replica a test starts is stopped at its end, whatever happens."""
    started: list[ServiceProcess] = []
    yield started
    for svc in started:
        svc.stop()


def replica(tmp_path: Path, name: str, db_url: str, started: Replicas,
            host: str | None = None) -> ServiceProcess:
    state = tmp_path / name
    state.mkdir()
    svc = ServiceProcess(state, extra_conf=(
        (f"[DEFAULT]\nhost = {host}\n" if host else "") +
        f"[database]\nconnection = {db_url}\n"
        f"[conductor]\nheartbeat_interval = 0.5\nheartbeat_timeout = 3\n"
        "sync_power_state_interval = 0\n"
        "[ipmi]\ncommand_timeout = 30\nretries = 0\n"))
    started.append(svc)
    return svc.start()


def silent_bmc_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def busy_node(url: str) -> dict[str, Any]:
    """A node whose verification hangs on a silent BMC (30 s), holding its lock."""
    node = httpx.post(f"{url}/v1/nodes", headers=H, json={
        "driver": "pxe_ipmitool", "driver_info": {
            "ipmi_address": "127.0.0.1", "ipmi_port": silent_bmc_port()}}).json()
    resp = httpx.put(f"{url}/v1/nodes/{node['uuid']}/states/provision", headers=H,
                     json={"target": "manage"})
    assert resp.status_code == 202
    return dict(node)


@pytest.fixture
def two(tmp_path: Path, shared_db: str, replicas: Replicas) -> tuple[ServiceProcess, ...]:
    return (replica(tmp_path, "a", shared_db, replicas),
            replica(tmp_path, "b", shared_db, replicas))


def test_replicas_see_each_others_nodes(two: tuple[ServiceProcess, ...]) -> None:
    a, b = two
    node = httpx.post(f"{a.url}/v1/nodes", headers=H, json={"driver": "fake"}).json()
    httpx.put(f"{b.url}/v1/nodes/{node['uuid']}/states/provision", headers=H,
              json={"target": "manage"})
    until(lambda: httpx.get(f"{a.url}/v1/nodes/{node['uuid']}", headers=H)
          .json()["provision_state"] == "manageable", 10)


def test_lock_taken_by_one_replica_is_409_on_the_other(two: tuple[ServiceProcess, ...]) -> None:
    a, b = two
    node = busy_node(a.url)
    resp = httpx.patch(f"{b.url}/v1/nodes/{node['uuid']}", headers=H,
                       json=[{"op": "add", "path": "/extra/x", "value": 1}])
    assert resp.status_code == 409
    assert "is locked by host" in resp.text


def test_killed_replica_releases_its_locks_through_the_survivor(
        two: tuple[ServiceProcess, ...]) -> None:
    a, b = two
    node = busy_node(a.url)
    url = f"{b.url}/v1/nodes/{node['uuid']}"
    assert httpx.get(url, headers=H).json()["provision_state"] == "verifying"
    assert a.proc is not None
    os.kill(a.proc.pid, signal.SIGKILL)  # no clean-up: the lock stays behind
    a.proc.wait()
    doc = until(lambda: (d := httpx.get(url, headers=H).json())["reservation"] is None and d, 15)
    assert doc["provision_state"] == "enroll"
    assert "died" in doc["last_error"]


def test_restart_on_the_same_host_recovers_locks_at_once(tmp_path: Path, shared_db: str,
                                                         replicas: Replicas) -> None:
    a = replica(tmp_path, "a", shared_db, replicas)
    node = busy_node(a.url)
    assert a.proc is not None
    os.kill(a.proc.pid, signal.SIGKILL)
    a.proc.wait()
    started = time.monotonic()
    b = replica(tmp_path, "b", shared_db, replicas)  # same host: the dead pid is seen at start
    doc = httpx.get(f"{b.url}/v1/nodes/{node['uuid']}", headers=H).json()
    assert doc["reservation"] is None
    assert doc["provision_state"] == "enroll"
    assert time.monotonic() - started < 10


def test_a_stalled_replica_cannot_overwrite_the_work_of_the_one_that_took_over(
        two: tuple[ServiceProcess, ...]) -> None:
    """SIGSTOP a replica in the middle of a power action, past the heartbeat timeout: the
    other declares it dead and takes the node over; once the first resumes, its stale result
    is refused (fenced), and the lock of the replica now working on the node stays."""
    a, b = two
    assert a.proc is not None
    node = httpx.post(f"{a.url}/v1/nodes", headers=H, json={
        "driver": "fake", "driver_info": {"fake_power_delay": 4}}).json()
    url = f"{b.url}/v1/nodes/{node['uuid']}"
    power = f"{url}/states/power"
    assert httpx.put(f"{a.url}/v1/nodes/{node['uuid']}/states/power", headers=H,
                     json={"target": "power on"}).status_code == 202
    os.kill(a.proc.pid, signal.SIGSTOP)
    try:
        doc = until(lambda: (d := httpx.get(url, headers=H).json())["reservation"] is None
                    and d, 15)
        assert "died" in doc["last_error"]
        # B's power action outlasts A's first steps after SIGCONT by far (they may wait for
        # the CPU on a loaded machine)
        assert httpx.patch(url, headers=H, json=[{
            "op": "add", "path": "/driver_info/fake_power_delay", "value": 10}]
        ).status_code == 200
        assert httpx.put(power, headers=H, json={"target": "power off"}).status_code == 202
        holder = httpx.get(url, headers=H).json()["reservation"]
        assert holder is not None
    finally:
        os.kill(a.proc.pid, signal.SIGCONT)
    until(lambda: "result discarded" in a.log.read_text(), 10)
    doc = httpx.get(url, headers=H).json()
    assert doc["reservation"] == holder  # still B's: A's release did not clear it
    assert doc["power_state"] != "power on"
    doc = until(lambda: (d := httpx.get(url, headers=H).json())["reservation"] is None and d,
                20)
    assert doc["power_state"] == "power off"
    events = [e["event"] for e in httpx.get(f"{url}/history", headers=H).json()["history"]]
    assert "Power state is now power on" not in events
    assert events[-1] == "Power state is now power off"


# --- conductors as the API shows them: one per host ---------------------------------------


def conductors(url: str) -> list[tuple[str, bool]]:
    docs = httpx.get(f"{url}/v1/conductors", headers=H).json()["conductors"]
    return [(d["hostname"], d["alive"]) for d in docs]


@pytest.fixture
def two_hosts(tmp_path: Path, shared_db: str, replicas: Replicas) -> tuple[ServiceProcess, ...]:
    """Two replicas on host rack-a, one on rack-b."""
    return (replica(tmp_path, "a1", shared_db, replicas, host="rack-a"),
            replica(tmp_path, "a2", shared_db, replicas, host="rack-a"),
            replica(tmp_path, "b1", shared_db, replicas, host="rack-b"))


def test_replicas_on_one_host_are_listed_as_one_conductor(
        two_hosts: tuple[ServiceProcess, ...]) -> None:
    a1, _, b1 = two_hosts
    assert sorted(conductors(a1.url)) == [("rack-a", True), ("rack-b", True)]
    assert sorted(conductors(b1.url)) == sorted(conductors(a1.url))


def test_every_replica_names_the_same_listed_conductor_for_a_node(
        two_hosts: tuple[ServiceProcess, ...]) -> None:
    a1 = two_hosts[0]
    node = httpx.post(f"{a1.url}/v1/nodes", headers=H, json={"driver": "fake"}).json()

    def shown() -> set[str]:
        return {httpx.get(f"{r.url}/v1/nodes/{node['uuid']}", headers=H).json()["conductor"]
                for r in two_hosts}

    seen = until(lambda: len(found := shown()) == 1 and found, 10)
    assert seen <= {"rack-a", "rack-b"}


def test_a_drivers_hosts_are_every_live_host_running_it(
        two_hosts: tuple[ServiceProcess, ...]) -> None:
    doc = httpx.get(f"{two_hosts[0].url}/v1/drivers/fake-hardware", headers=H).json()
    assert doc["hosts"] == ["rack-a", "rack-b"]


def test_a_host_stays_alive_while_one_of_its_replicas_runs(
        two_hosts: tuple[ServiceProcess, ...]) -> None:
    """A replica stopped cleanly unregisters: its host goes with its last replica."""
    a1, a2, b1 = two_hosts
    a2.stop()
    b1.stop()
    assert conductors(a1.url) == [("rack-a", True)]
