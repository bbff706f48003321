"""One owner per provisioning network on PostgreSQL: a session advisory lock on a connection
of the owner's own, released by its death (its session ends) as by its stop."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from ironsight.discoverd.pxe.ownership import PostgresOwnership

from ..conftest import PG_URL, drop_pg_database, fresh_pg_database


@pytest.fixture
def pg_url() -> Iterator[str]:
    if not PG_URL:
        pytest.skip("IRONSIGHT_TEST_PG_URL is not set")
    url = fresh_pg_database(f"ironsight_pxe_{uuid.uuid4().hex[:8]}")
    yield url
    drop_pg_database(url)


@pytest.fixture
async def two(pg_url: str) -> AsyncIterator[tuple[PostgresOwnership, PostgresOwnership]]:
    a, b = PostgresOwnership(pg_url, "prov-a"), PostgresOwnership(pg_url, "prov-a")
    yield a, b
    for each in (a, b):
        await each.release()


async def test_postgres_elects_one_owner(two: tuple[PostgresOwnership, ...]) -> None:
    a, b = two
    assert await a.try_acquire()
    assert not await b.try_acquire()
    assert await a.still_held()


async def test_postgres_hands_over_when_the_owner_releases(
        two: tuple[PostgresOwnership, ...]) -> None:
    a, b = two
    assert await a.try_acquire()
    await a.release()
    assert await b.try_acquire()


async def test_postgres_hands_over_when_the_owners_connection_dies(
        two: tuple[PostgresOwnership, ...]) -> None:
    """As when its process is killed: the server ends the session, and with it the lock."""
    a, b = two
    assert await a.try_acquire()
    assert a._conn is not None
    pid = (await a._conn.exec_driver_sql("SELECT pg_backend_pid()")).scalar()
    async with b._engine.connect() as admin:
        await admin.exec_driver_sql(f"SELECT pg_terminate_backend({int(pid)})")
    assert not await a.still_held()  # the owner notices, and stops serving
    assert await b.try_acquire()


async def test_postgres_networks_are_owned_apart(pg_url: str) -> None:
    a, b = PostgresOwnership(pg_url, "prov-a"), PostgresOwnership(pg_url, "prov-b")
    try:
        assert await a.try_acquire() and await b.try_acquire()
    finally:
        await a.release()
        await b.release()
