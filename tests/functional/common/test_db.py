"""The PostgreSQL discipline of `Database` on a real server: single-statement writes in
autocommit, pooled connections the server closed replaced without a pre-ping round trip, and
a database that cannot be reached reported as DatabaseUnavailable (503), naming no secret."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert, select, text
from sqlalchemy.exc import IntegrityError

from ironsight.common.db import Database
from ironsight.common.exceptions import DatabaseUnavailable

from ..conftest import PG_URL, drop_pg_database, free_tcp_port, pg_database_with

metadata = MetaData()
items = Table("items", metadata, Column("id", Integer, primary_key=True),
              Column("name", String(20), nullable=False, unique=True))


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    url = pg_database_with("ironsight_db", metadata)
    database = Database(url, pool_size=2)
    yield database
    await database.close()
    drop_pg_database(url)


def terminate(pid: int) -> None:
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    admin.dispose()


async def backend_pid(db: Database) -> int:
    async with db.read() as conn:
        return int((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def names(db: Database) -> list[str]:
    async with db.read() as conn:
        return list((await conn.execute(select(items.c.name).order_by(items.c.id))).scalars())


async def test_a_single_statement_write_is_committed_by_itself(db: Database) -> None:
    async with db.single() as conn:
        await conn.execute(insert(items), {"name": "a"})
    assert await names(db) == ["a"]
    assert db.stats.writes == 1


async def test_a_second_statement_in_a_single_write_is_a_bug(db: Database) -> None:
    with pytest.raises(RuntimeError, match=r"a second statement in Database\.single"):
        async with db.single() as conn:
            await conn.execute(insert(items), {"name": "a"})
            await conn.execute(insert(items), {"name": "b"})
    assert await names(db) == ["a"]


async def test_a_transaction_rolls_back_on_error(db: Database) -> None:
    with pytest.raises(IntegrityError):
        async with db.begin() as conn:
            await conn.execute(insert(items), {"name": "a"})
            await conn.execute(insert(items), {"name": "a"})
    assert await names(db) == []


async def test_a_constraint_error_is_not_reported_as_the_database_unavailable(
        db: Database) -> None:
    async with db.single() as conn:
        await conn.execute(insert(items), {"name": "a"})
    with pytest.raises(IntegrityError):
        async with db.single() as conn:
            await conn.execute(insert(items), {"name": "a"})


async def test_a_pooled_connection_the_server_closed_is_replaced_on_checkout(
        db: Database) -> None:
    first = await backend_pid(db)
    terminate(first)
    await asyncio.sleep(0.2)  # the termination notice reaches the idle socket
    assert await backend_pid(db) != first


async def test_a_connection_broken_mid_request_is_unavailable_and_the_next_request_works(
        db: Database) -> None:
    with pytest.raises(DatabaseUnavailable, match="The database is unavailable"):
        async with db.read() as conn:
            await conn.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
            await conn.execute(text("SELECT 1"))
    async with db.single() as conn:
        await conn.execute(insert(items), {"name": "after"})
    assert await names(db) == ["after"]


async def test_an_unreachable_server_is_unavailable_and_its_password_is_not_shown(
        caplog: pytest.LogCaptureFixture) -> None:
    port = free_tcp_port()  # nothing listens there
    database = Database(f"postgresql+psycopg://ironsight:s3cret-pw@127.0.0.1:{port}/x")
    caplog.set_level(logging.DEBUG)
    try:
        with pytest.raises(DatabaseUnavailable) as raised:
            async with database.read() as conn:
                await conn.execute(text("SELECT 1"))
    finally:
        await database.close()
    assert raised.value.code == 503
    assert "s3cret-pw" not in str(raised.value)
    assert "s3cret-pw" not in caplog.text
    assert "Database unavailable" in caplog.text


async def test_a_write_transaction_to_an_unreachable_server_is_unavailable() -> None:
    database = Database(f"postgresql+psycopg://postgres@127.0.0.1:{free_tcp_port()}/x")
    try:
        with pytest.raises(DatabaseUnavailable):
            async with database.begin() as conn:
                await conn.execute(text("SELECT 1"))
    finally:
        await database.close()
