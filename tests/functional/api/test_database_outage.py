"""The bare-metal API while its PostgreSQL refuses connections (a restart, a fail-over): each
request answers 503 with Ironic's error envelope and changes nothing, no lock stays behind,
and the service works again as soon as the database is back, without a restart."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import create_engine, text

from ironsight.baremetal.service import BaremetalService, upgrade_database

from ..conftest import PG_URL, drop_pg_database, fresh_pg_database
from .conftest import LATEST, make_conf
from .helpers import create_node, fault, wait_for

UNAVAILABLE = "The database is unavailable; please retry later."


def admin(statement: str, **params: str) -> None:
    engine = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(statement), params)
    engine.dispose()


class Outage:
    """Cuts the service's database off (new connections refused, open ones terminated)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def begin(self) -> None:
        admin(f'ALTER DATABASE "{self.name}" WITH ALLOW_CONNECTIONS false')
        admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :db",
              db=self.name)

    def end(self) -> None:
        admin(f'ALTER DATABASE "{self.name}" WITH ALLOW_CONNECTIONS true')


@pytest.fixture
async def running(tmp_path: object
                  ) -> AsyncIterator[tuple[Outage, httpx.AsyncClient, BaremetalService]]:
    if not PG_URL:
        pytest.skip("IRONSIGHT_TEST_PG_URL is not set (make test sets it)")
    name = f"ironsight_outage_{uuid.uuid4().hex[:8]}"
    url = fresh_pg_database(name)
    conf = make_conf(url, tmp_path)
    upgrade_database(conf)
    svc = BaremetalService(conf)
    await svc.start()
    outage = Outage(name)
    try:
        transport = httpx.ASGITransport(app=svc.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bm.test",
                                     headers=LATEST) as client:
            yield outage, client, svc
    finally:
        outage.end()
        await svc.stop()
        drop_pg_database(url)


async def test_a_read_while_the_database_is_away_is_503_with_the_error_envelope(
        running: tuple[Outage, httpx.AsyncClient, BaremetalService]) -> None:
    outage, api, _ = running
    outage.begin()
    resp = await api.get("/v1/nodes")
    assert resp.status_code == 503
    assert fault(resp) == UNAVAILABLE


async def test_a_create_while_the_database_is_away_is_503_and_creates_nothing(
        running: tuple[Outage, httpx.AsyncClient, BaremetalService]) -> None:
    outage, api, _ = running
    outage.begin()
    resp = await api.post("/v1/nodes", json={"driver": "fake", "name": "while-away"})
    assert resp.status_code == 503
    outage.end()
    assert (await api.get("/v1/nodes/while-away")).status_code == 404


async def test_an_action_while_the_database_is_away_leaves_no_lock_and_works_after(
        running: tuple[Outage, httpx.AsyncClient, BaremetalService]) -> None:
    outage, api, _ = running
    node = await create_node(api)
    outage.begin()
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision",
                         json={"target": "manage"})
    assert resp.status_code == 503
    outage.end()
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert (doc["provision_state"], doc["reservation"]) == ("enroll", None)
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision",
                         json={"target": "manage"})
    assert resp.status_code == 202, resp.text
    assert (await wait_for(api, node["uuid"], provision="manageable"))["reservation"] is None


async def test_a_lock_whose_release_meets_the_outage_is_released_when_the_database_is_back(
        running: tuple[Outage, httpx.AsyncClient, BaremetalService]) -> None:
    outage, api, svc = running
    node = await create_node(api)
    task = await svc.conductor.tasks.acquire(node["uuid"])
    outage.begin()
    await task.release()  # retried in the background, not raised
    await asyncio.sleep(1.5)  # a retry or two fail meanwhile
    outage.end()
    for _ in range(100):
        if (await api.get(f"/v1/nodes/{node['uuid']}")).json()["reservation"] is None:
            break
        await asyncio.sleep(0.1)
    assert (await api.get(f"/v1/nodes/{node['uuid']}")).json()["reservation"] is None
    assert not svc.conductor.tasks.retried_releases
