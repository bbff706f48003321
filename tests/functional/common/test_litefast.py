"""litefast runs SQLAlchemy Core statements on sqlite3 itself: whatever a statement is, what it
writes and what it returns are what SQLAlchemy's own engine writes and returns (checked here
side by side on the same file), rows read as SQLAlchemy's Rows and asyncpg's Records are read,
and its errors are SQLAlchemy's."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    create_engine,
    delete,
    func,
    insert,
    literal_column,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError

from ironsight.common.db import Database

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
async def both(tmp_path: Path) -> AsyncIterator[tuple[Database, Engine]]:
    """The Database under test, and SQLAlchemy's engine on the same file."""
    url = f"sqlite:///{tmp_path / 'lite.db'}"
    reference = create_engine(url)
    metadata.create_all(reference)
    database = Database(url)
    yield database, reference
    await database.close()
    reference.dispose()


async def fast(db: Database, statement: Any, params: Any = None) -> Any:
    async with db.begin() as conn:
        return await conn.execute(statement, params)


async def rows_by_both(both: tuple[Database, Engine], statement: Any,
                       params: Any = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    db, reference = both
    mine = (await fast(db, statement, params)).mappings().all()
    with reference.connect() as conn:
        theirs = [dict(row) for row in conn.execute(statement, params).mappings()]
    return mine, theirs


async def seed(db: Database) -> None:
    await fast(db, insert(things), [  # executemany: SQLAlchemy's own path
        {"name": "a", "info": {"k": [1, "x"]}, "flag": True, "seen": 1.5, "at": AT},
        {"name": "b", "info": {}, "flag": False, "seen": None, "at": None},
        {"name": "c", "info": {}, "flag": False, "seen": 0.25, "at": AT}])


async def test_rows_of_every_column_type_are_sqlalchemys(both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    mine, theirs = await rows_by_both(both, select(things).order_by(things.c.id))
    assert mine == theirs
    assert mine[0]["info"] == {"k": [1, "x"]} and mine[0]["at"] == AT
    assert mine[0]["flag"] is True and mine[1]["flag"] is False


async def test_a_row_reads_by_index_name_and_attribute(both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    row = (await fast(both[0], select(things.c.name, things.c.at)
                      .where(things.c.name == "a"))).first()
    name, at = row
    assert (name, at) == ("a", AT) == (row[0], row[1]) == (row["name"], row["at"])
    assert (row.name, row.at) == ("a", AT) and row._mapping == {"name": "a", "at": AT}
    assert dict(row.items()) == row._asdict() == {"name": "a", "at": AT}
    assert row.get("missing") is None and tuple(row.keys()) == ("name", "at")
    with pytest.raises(AttributeError):
        _ = row.missing


async def test_labels_and_duplicate_names_are_keyed_as_sqlalchemy_keys_them(
        both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    other = things.alias("other")
    statement = (select(things.c.id, other.c.id, func.count().label("n"))
                 .join(other, other.c.id == things.c.id).group_by(things.c.id, other.c.id)
                 .order_by(things.c.id))
    mine, theirs = await rows_by_both(both, statement)
    assert mine == theirs and len(mine) == 3


async def test_python_side_column_defaults_are_filled_in(both: tuple[Database, Engine]) -> None:
    await fast(both[0], insert(things).values(name="d"))
    row = (await fast(both[0], select(things.c.info, things.c.flag))).one()
    assert tuple(row) == ({}, False)


async def test_an_expanding_in_list_of_any_length_selects_the_same_rows(
        both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    for names in (["a", "c"], ["b"], []):
        statement = select(things.c.name).where(things.c.name.in_(names)).order_by(things.c.name)
        mine, theirs = await rows_by_both(both, statement)
        assert mine == theirs == [{"name": n} for n in sorted(names)]


async def test_named_parameters_bind_at_execution(both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    statement = select(things.c.name).where(things.c.name == bindparam("wanted"))
    assert (await fast(both[0], statement, {"wanted": "b"})).scalar() == "b"
    assert (await fast(both[0], statement, [{"wanted": "c"}])).scalar() == "c"


async def test_rowcount_is_the_rows_an_update_touched(both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    result = await fast(both[0], update(things).where(things.c.flag.is_(False))
                        .values(seen=2.0))
    assert result.rowcount == 2
    assert (await fast(both[0], delete(things).where(things.c.name == "zz"))).rowcount == 0


async def test_returning_rows_come_back(both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    result = await fast(both[0], update(things).where(things.c.name == "b")
                        .values(seen=3.0, at=AT).returning(things.c.name, things.c.at))
    assert [tuple(r) for r in result.all()] == [("b", AT)]
    assert result.rowcount == 1


async def test_an_insert_reports_its_new_primary_key(both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    result = await fast(both[0], insert(things).values(name="e"))
    new_id = (await fast(both[0], select(things.c.id).where(things.c.name == "e"))).scalar()
    assert result.inserted_primary_key == (new_id,)
    given = await fast(both[0], insert(things), {"id": 40, "name": "f"})
    assert given.inserted_primary_key == (40,)


async def test_textual_sql_takes_sqlalchemys_path(both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    rows = (await fast(both[0], text("SELECT name, seen FROM things ORDER BY id"))).all()
    assert [tuple(r) for r in rows] == [("a", 1.5), ("b", None), ("c", 0.25)]
    col = select(literal_column("name")).select_from(things).order_by(things.c.id)
    assert (await fast(both[0], col)).scalars().all() == ["a", "b", "c"]


async def test_a_constraint_violation_is_sqlalchemys_integrity_error(
        both: tuple[Database, Engine]) -> None:
    await seed(both[0])
    with pytest.raises(IntegrityError, match="UNIQUE") as raised:
        await fast(both[0], insert(things).values(name="a", info={"secret": "s3cr3t"}))
    assert "s3cr3t" not in str(raised.value)  # parameters are never shown
    assert (await fast(both[0], select(func.count()).select_from(things))).scalar() == 3


async def test_a_failed_transaction_is_rolled_back_whole(both: tuple[Database, Engine]) -> None:
    db = both[0]
    with pytest.raises(IntegrityError):
        async with db.begin() as conn:
            await conn.execute(insert(things).values(name="g"))
            await conn.execute(insert(things).values(name="g"))
    assert (await fast(db, select(func.count()).select_from(things))).scalar() == 0


async def test_a_write_through_a_read_connection_is_not_kept(
        both: tuple[Database, Engine]) -> None:
    db = both[0]
    async with db.read() as conn:  # a bug, but it must not hold SQLite's write lock
        await conn.execute(insert(things).values(name="h"))
    assert (await fast(db, select(func.count()).select_from(things))).scalar() == 0
    await fast(db, insert(things).values(name="i"))
    assert (await fast(db, select(func.count()).select_from(things))).scalar() == 1
