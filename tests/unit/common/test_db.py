"""The SQLite transaction discipline of `Database`: one writer and one reader connection
kept open, with the isolation a fresh pooled connection per transaction gave."""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select, text
from sqlalchemy.exc import DBAPIError

from ironsight.common import db as dbmodule
from ironsight.common.db import Database
from ironsight.common.exceptions import DatabaseUnavailable, StorageFull

metadata = MetaData()
items = Table("items", metadata, Column("id", Integer, primary_key=True),
              Column("name", String(20), nullable=False, unique=True))


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'test.sqlite'}")
    assert database.sync_engine is not None
    metadata.create_all(database.sync_engine)
    yield database
    await database.close()


async def names(db: Database) -> list[str]:
    async with db.read() as conn:
        return list((await conn.execute(select(items.c.name).order_by(items.c.id))).scalars())


async def test_a_read_sees_what_a_committed_transaction_wrote(db: Database) -> None:
    async with db.begin() as conn:
        await conn.execute(insert(items), {"name": "a"})
    assert await names(db) == ["a"]


async def test_a_read_does_not_see_an_open_write_transaction(db: Database) -> None:
    async with db.begin() as conn:
        await conn.execute(insert(items), {"name": "a"})
        assert await names(db) == []
    assert await names(db) == ["a"]


async def test_a_failed_transaction_leaves_nothing_and_the_writer_works_on(db: Database) -> None:
    with pytest.raises(RuntimeError):
        async with db.begin() as conn:
            await conn.execute(insert(items), {"name": "a"})
            raise RuntimeError("boom")
    async with db.begin() as conn:
        await conn.execute(insert(items), {"name": "b"})
    assert await names(db) == ["b"]


async def test_a_constraint_error_rolls_back_the_whole_transaction(db: Database) -> None:
    async with db.begin() as conn:
        await conn.execute(insert(items), {"name": "a"})
    with pytest.raises(Exception, match="UNIQUE"):
        async with db.begin() as conn:
            await conn.execute(insert(items), {"name": "b"})
            await conn.execute(insert(items), {"name": "a"})
    assert await names(db) == ["a"]


async def test_a_write_through_a_read_connection_does_not_keep_the_database_locked(
        db: Database) -> None:
    async with db.read() as conn:
        await conn.execute(text("INSERT INTO items (name) VALUES ('stray')"))
    # The stray write was rolled back, and no lock is left for the writer to wait on.
    async with db.begin() as conn:
        await conn.execute(insert(items), {"name": "a"})
    assert await names(db) == ["a"]


async def test_another_handle_on_the_file_sees_committed_writes_at_once(db: Database,
                                                                       tmp_path: Path) -> None:
    # what another process (a second conductor, the CLI) has: its own connections
    other = Database(f"sqlite:///{tmp_path / 'test.sqlite'}")
    try:
        assert await names(other) == []
        async with db.begin() as conn:
            await conn.execute(insert(items), {"name": "a"})
        assert await names(other) == ["a"]
    finally:
        await other.close()


async def test_close_then_use_reopens_the_connections(db: Database) -> None:
    await db.close()
    async with db.begin() as conn:
        await conn.execute(insert(items), {"name": "a"})
    assert await names(db) == ["a"]


def _raised_through(orig: Exception) -> BaseException:
    with pytest.raises(Exception) as raised, dbmodule._unavailable():
        raise DBAPIError("INSERT ...", None, orig)
    return raised.value


def test_postgresql_disk_full_is_storage_full_507() -> None:
    found = _raised_through(asyncpg.exceptions.DiskFullError("could not extend file"))
    assert isinstance(found, StorageFull) and found.code == 507


def test_enospc_is_storage_full() -> None:
    assert isinstance(_raised_through(OSError(errno.ENOSPC, "No space left")), StorageFull)


def test_other_insufficient_resources_stay_503() -> None:
    found = _raised_through(asyncpg.exceptions.TooManyConnectionsError("too many"))
    assert isinstance(found, DatabaseUnavailable) and not isinstance(found, StorageFull)
