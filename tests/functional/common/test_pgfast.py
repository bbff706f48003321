"""pgfast runs SQLAlchemy Core statements on asyncpg itself: whatever a statement is, what it
writes and what it returns are what SQLAlchemy's own engine writes and returns (checked here
side by side on a real server), and its errors are SQLAlchemy's."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from ironsight.common.db import Database, pools_url
from ironsight.common.exceptions import DatabaseUnavailable

from ..conftest import drop_pg_database, pg_database_with

metadata = MetaData()
things = Table(
    "things", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(20), nullable=False, unique=True),
    Column("info", JSON, nullable=False, default=dict),
    Column("flag", Boolean, nullable=False, default=False),
    Column("seen", Float, nullable=True),
    Column("at", DateTime, nullable=True),
)

AT = dt.datetime(2026, 12, 3, 10, 30, 15, 123456)


@pytest.fixture
async def both() -> AsyncIterator[tuple[Database, AsyncEngine]]:
    """The Database under test, and SQLAlchemy's engine on the same database."""
    url = pg_database_with("ironsight_fast", metadata)
    database = Database(url, pool_size=2)
    reference = create_async_engine(pools_url(url))
    yield database, reference
    await database.close()
    await reference.dispose()
    drop_pg_database(url)


async def fast(db: Database, statement: Any, params: Any = None) -> Any:
    async with db.begin() as conn:
        return await conn.execute(statement, params)


async def rows_by_both(both: tuple[Database, AsyncEngine], statement: Any,
                       params: Any = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    db, reference = both
    mine = (await fast(db, statement, params)).mappings().all()
    async with reference.connect() as conn:
        theirs = [dict(row) for row in (await conn.execute(statement, params)).mappings()]
    return mine, theirs


async def seed(db: Database) -> None:
    await fast(db, insert(things), [  # the same keys in each, as SQLAlchemy wants them
        {"name": "a", "info": {"k": [1, "x"]}, "flag": True, "seen": 1.5, "at": AT},
        {"name": "b", "info": {}, "flag": False, "seen": None, "at": None},
        {"name": "c", "info": {}, "flag": False, "seen": 0.25, "at": AT}])


async def test_rows_of_every_column_type_are_sqlalchemys(
        both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    mine, theirs = await rows_by_both(both, select(things).order_by(things.c.id))
    assert mine == theirs
    assert mine[0]["info"] == {"k": [1, "x"]} and mine[0]["at"] == AT


async def test_python_side_column_defaults_are_filled_in(
        both: tuple[Database, AsyncEngine]) -> None:
    await fast(both[0], insert(things).values(name="d"))
    row = (await fast(both[0], select(things.c.info, things.c.flag))).one()
    assert tuple(row) == ({}, False)


async def test_an_expanding_in_list_of_any_length_selects_the_same_rows(
        both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    for names in (["a", "c"], ["b"], []):
        statement = select(things.c.name).where(things.c.name.in_(names)).order_by(things.c.name)
        mine, theirs = await rows_by_both(both, statement)
        assert mine == theirs == [{"name": n} for n in sorted(names)]


async def test_named_parameters_bind_at_execution(both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    statement = select(things.c.name).where(things.c.name == bindparam("wanted"))
    assert (await fast(both[0], statement, {"wanted": "b"})).scalar() == "b"


async def test_a_list_of_parameters_inserts_one_row_per_item(
        both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    count = (await fast(both[0], select(func.count()).select_from(things))).scalar_one()
    assert count == 3


async def test_rowcount_is_the_rows_an_update_touched(both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    result = await fast(both[0], update(things).where(things.c.flag.is_(False))
                        .values(seen=2.0))
    assert result.rowcount == 2
    assert (await fast(both[0], delete(things).where(things.c.name == "zz"))).rowcount == 0


async def test_returning_rows_come_back(both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    result = await fast(both[0], update(things).where(things.c.name == "b")
                        .values(seen=3.0).returning(things.c.name, things.c.seen))
    assert [tuple(r) for r in result.all()] == [("b", 3.0)]
    assert result.rowcount == 1


async def test_an_insert_reports_its_new_primary_key(both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    result = await fast(both[0], insert(things).values(name="e"))
    new_id = (await fast(both[0], select(things.c.id).where(things.c.name == "e"))).scalar()
    assert result.inserted_primary_key == (new_id,)


async def test_a_constraint_violation_is_sqlalchemys_integrity_error(
        both: tuple[Database, AsyncEngine]) -> None:
    await seed(both[0])
    with pytest.raises(IntegrityError, match="things_name_key") as raised:
        await fast(both[0], insert(things).values(name="a", info={"secret": "s3cr3t"}))
    assert "s3cr3t" not in str(raised.value)  # parameters are never shown


async def test_reads_run_outside_a_transaction_and_begin_inside_one(
        both: tuple[Database, AsyncEngine]) -> None:
    db = both[0]
    async with db.single() as conn:
        await conn.execute(insert(things).values(name="f"))
    async with db.read() as conn:
        xacts = [(await conn.execute(select(func.txid_current()))).scalar() for _ in (1, 2)]
    assert xacts[0] != xacts[1]  # autocommit: each statement is its own transaction
    async with db.begin() as conn:
        xacts = [(await conn.execute(select(func.txid_current()))).scalar() for _ in (1, 2)]
    assert xacts[0] == xacts[1]
    assert (await fast(db, select(func.count()).select_from(things))).scalar() == 1


async def test_a_request_finding_every_connection_busy_gets_the_next_one_given_back(
        both: tuple[Database, AsyncEngine]) -> None:
    db = both[0]  # pool_size=2: three connections
    held = [db.read() for _ in range(3)]
    conns = [await h.__aenter__() for h in held]
    waiting = asyncio.create_task(fast(db, select(func.count()).select_from(things)))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await held[0].__aexit__(None, None, None)
    assert (await asyncio.wait_for(waiting, 5)).scalar() == 0
    for h in held[1:]:
        await h.__aexit__(None, None, None)
    assert len(conns) == 3 and db.pool_status() == {"in_use": 0, "idle": 3}


async def test_no_free_connection_in_time_is_the_database_unavailable(
        both: tuple[Database, AsyncEngine]) -> None:
    db = both[0]
    db.fast.wait = 0.2
    held = [db.read() for _ in range(3)]
    for h in held:
        await h.__aenter__()
    with pytest.raises(DatabaseUnavailable):
        await fast(db, select(func.count()).select_from(things))
    for h in held:
        await h.__aexit__(None, None, None)


async def test_a_connection_whose_statement_was_cancelled_is_closed_not_reused(
        both: tuple[Database, AsyncEngine]) -> None:
    db = both[0]
    slow = asyncio.create_task(fast(db, select(func.pg_sleep(5))))
    await asyncio.sleep(0.3)
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    assert db.pool_status() == {"in_use": 0, "idle": 0}
    assert (await fast(db, select(func.count()).select_from(things))).scalar() == 0
