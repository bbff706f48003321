"""An allocation whose replica is killed (-9) while it processes it is taken over by a live
replica and finished, as node locks and inspections are: two `ironsight serve --only
baremetal` replicas on one PostgreSQL.

To catch the allocation mid-processing, the test holds the matching node's row lock in a
transaction of its own: the replica's claim of the node waits on it, with the allocation
`allocating`, until the replica is killed. (Only PostgreSQL: replicas share no SQLite
database.)"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from ..conftest import PG_URL, drop_pg_database, fresh_pg_database
from .cluster import BM, Replica, until

pytestmark = pytest.mark.skipif(not PG_URL, reason="IRONSIGHT_TEST_PG_URL is not set")

CONF = ("[database]\nconnection = {database}\n"
        "[conductor]\nheartbeat_interval = 0.5\nheartbeat_timeout = 3\n"
        "sync_power_state_interval = 0\n")


@pytest.fixture
def database() -> Iterator[str]:
    url = fresh_pg_database(f"ironsight_alloc_{uuid.uuid4().hex[:8]}")
    try:
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture
def replicas(tmp_path: Path, database: str) -> Iterator[list[Replica]]:
    running = [Replica("baremetal", i, tmp_path / f"bm{i}", CONF.format(database=database))
               for i in (1, 2)]
    try:
        for replica in running:
            replica.start()
        yield running
    finally:
        for replica in running:
            replica.stop()


def call(replica: Replica, method: str, path: str, body: Any = None,
         ok: tuple[int, ...] = (200, 201, 202, 204)) -> Any:
    resp = httpx.request(method, f"http://{replica.address}{path}", json=body, headers=BM,
                         timeout=30)
    assert resp.status_code in ok, (method, path, resp.text)
    return resp.json() if resp.content else None


def available_node(replica: Replica) -> str:
    node = call(replica, "POST", "/v1/nodes", {"driver": "fake", "resource_class": "gold"})
    for target, state in (("manage", "manageable"), ("provide", "available")):
        call(replica, "PUT", f"/v1/nodes/{node['uuid']}/states/provision", {"target": target})
        until(lambda wanted=state: call(replica, "GET", f"/v1/nodes/{node['uuid']}")
              ["provision_state"] == wanted, 30, f"node {state}")
    return str(node["uuid"])


def claim_waiting(database: str) -> bool:
    """Whether a replica's write waits on a row lock (the test's: the claim's first write,
    of the allocation's node_id, waits for the node's row as its foreign key)."""
    engine = create_engine(database)
    try:
        with engine.connect() as conn:
            return bool(conn.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query ILIKE 'UPDATE bm_%'")).scalar())
    finally:
        engine.dispose()


def test_an_allocation_of_a_replica_killed_mid_claim_is_finished_by_another(
        replicas: list[Replica], database: str) -> None:
    doomed, survivor = replicas
    node = available_node(survivor)
    holder = create_engine(database)
    with holder.connect() as conn:
        conn.execute(text("SELECT id FROM bm_nodes WHERE uuid = :u FOR UPDATE"), {"u": node})
        allocation = call(doomed, "POST", "/v1/allocations", {"resource_class": "gold"})
        until(lambda: claim_waiting(database), 15, "the claim waits on the node's row lock")
        assert call(survivor, "GET", f"/v1/allocations/{allocation['uuid']}")["state"] == \
            "allocating"
        doomed.kill()
        conn.rollback()  # the node's row is free again
    holder.dispose()

    def finished() -> Any:
        found = call(survivor, "GET", f"/v1/allocations/{allocation['uuid']}")
        return found if found["state"] != "allocating" else None

    done = until(finished, 30, "the allocation is finished")
    assert (done["state"], done["node_uuid"], done["last_error"]) == ("active", node, None)
    assert call(survivor, "GET", f"/v1/nodes/{node}")["instance_uuid"] == allocation["uuid"]
    assert "taking it over" in survivor.log.read_text()
    assert survivor.proc is not None
    allocated = [e["conductor"] for e in call(
        survivor, "GET", f"/v1/nodes/{node}/history?detail=true")["history"]
        if e["event"].startswith("Allocated by")]
    assert allocated == [f"{socket.gethostname()}:{survivor.proc.pid}"]
