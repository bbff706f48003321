"""Three replicas of each service on one PostgreSQL, behind HAProxy (docs/examples/
haproxy.cfg): a batch of inspections spread over them ends with every node `manageable` —
as it is, with one replica of each service killed (-9) in the middle, and through a rolling
restart of every replica, one by one."""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import PG_URL, drop_pg_database, fresh_pg_database
from .cluster import Cluster, until

NODES = 24

pytestmark = [
    pytest.mark.skipif(not PG_URL, reason="IRONSIGHT_TEST_PG_URL is not set"),
    pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed"),
]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    database = fresh_pg_database(f"ironsight_replicas_{uuid.uuid4().hex[:8]}")
    running = Cluster(tmp_path, database)
    try:
        yield running.start()
    finally:
        running.stop()
        drop_pg_database(database)


def inspected(cluster: Cluster, uuids: list[str]) -> None:
    """Every node `manageable` again, with what its report said."""
    cluster.wait_provision(uuids, "manageable", 120)
    nodes = cluster.nodes()
    assert {nodes[u]["properties"].get("cpus") for u in uuids} == {8}
    assert {nodes[u]["power_state"] for u in uuids} == {"power off"}


def started(cluster: Cluster, uuids: list[str]) -> None:
    cluster.inspect(uuids)
    until(lambda: len(cluster.waiting(uuids)) == len(uuids), 60, "discoverd waits for all")


def test_a_batch_spread_over_the_replicas_ends_manageable(cluster: Cluster) -> None:
    uuids = cluster.enroll(NODES)
    started(cluster, uuids)
    for i in range(NODES):
        cluster.post_report(i)
    inspected(cluster, uuids)
    conductors = {event["conductor"] for u in uuids
                  for event in cluster.call(
                      "GET", f"/v1/nodes/{u}/history?detail=true")["history"]
                  if event["conductor"]}
    assert len(conductors) >= 2  # the work was spread, not done by one replica
    finishing = [r for r in cluster.discoverd if "introspection finished" in r.log.read_text()]
    assert len(finishing) >= 2


def test_a_replica_of_each_service_killed_mid_batch_fails_no_inspection(
        cluster: Cluster) -> None:
    uuids = cluster.enroll(NODES)
    started(cluster, uuids)
    for i in range(NODES // 2):
        cluster.post_report(i)
    cluster.baremetal[0].kill()
    cluster.discoverd[0].kill()
    for i in range(NODES // 2, NODES):
        cluster.post_report(i)
    inspected(cluster, uuids)


def test_a_rolling_restart_of_every_replica_fails_no_inspection(cluster: Cluster) -> None:
    uuids = cluster.enroll(NODES)
    cluster.inspect(uuids)
    reported: set[str] = set()
    done = threading.Event()

    def ramdisks() -> None:
        """Each node's report, once discoverd waits for it (through the restarts)."""
        while not done.is_set() and len(reported) < NODES:
            for u in cluster.waiting(uuids) - reported:
                cluster.post_report(uuids.index(u))
                reported.add(u)
            done.wait(0.3)

    thread = threading.Thread(target=ramdisks, daemon=True)
    thread.start()
    try:
        for replica in cluster.replicas:
            replica.stop()  # SIGTERM: graceful
            replica.start()
        inspected(cluster, uuids)
    finally:
        done.set()
        thread.join(30)
    assert reported == set(uuids)
