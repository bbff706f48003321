"""CPU of this process per statement on PostgreSQL: SQLAlchemy's async engine (asyncpg
dialect, an autocommit pool, as the services used up to 36368be) against `Database` (pgfast:
the same Core statement compiled by SQLAlchemy, sent by asyncpg itself).

    .venv/bin/python bench/bench_statement.py --db-url postgresql://postgres@127.0.0.1:5432/postgres

Three statements of the inspection's hot path, on the bare-metal service's schema (a fresh
database, ironsight_bench_stmt, with 200 nodes): a node read by UUID (its 35 columns, five of
them JSON), a conditional UPDATE of a node, and the node and port reads the API's port list
makes. Each is run N times in a row, each time with a connection taken from the pool and given
back, as a request does; interleaved rounds, the median per statement printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import uvloop
from pgstats import fresh_databases
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from ironsight.baremetal.db.models import nodes, ports
from ironsight.baremetal.service import MIGRATIONS, VERSION_TABLE
from ironsight.common.db import Database, pools_url, run_migrations

Run = Callable[[Any, int], Awaitable[None]]


def statements(uuids: list[str]) -> dict[str, Callable[[int], Any]]:
    return {
        "select node by uuid": lambda i: select(nodes).where(nodes.c.uuid == uuids[i % 200]),
        "update node if unlocked, returning": lambda i: update(nodes).where(
            nodes.c.uuid == uuids[i % 200], nodes.c.reservation.is_(None)).values(
            properties={"cpus": i % 64, "memory_mb": 4096}).returning(nodes.c.lock_epoch),
        "select ports of a node": lambda i: select(ports).where(
            ports.c.node_id == select(nodes.c.id).where(
                nodes.c.uuid == uuids[i % 200]).scalar_subquery()),
    }


async def by_engine(engine: AsyncEngine, make: Callable[[int], Any], n: int) -> float:
    t0 = time.process_time()
    for i in range(n):
        async with engine.connect() as conn:
            (await conn.execute(make(i))).mappings().all()
    return (time.process_time() - t0) / n * 1e6


async def by_database(db: Database, make: Callable[[int], Any], n: int) -> float:
    t0 = time.process_time()
    for i in range(n):
        async with db.read() as conn:
            (await conn.execute(make(i))).mappings().all()
    return (time.process_time() - t0) / n * 1e6


async def main(url: str, n: int, rounds: int) -> None:
    engine = create_async_engine(pools_url(url), isolation_level="AUTOCOMMIT",
                                 pool_reset_on_return=None, pool_size=4)
    db = Database(url, pool_size=4)
    uuids = [str(uuid.uuid4()) for _ in range(200)]
    async with db.begin() as conn:
        for i, ident in enumerate(uuids):
            await conn.execute(insert(nodes).values(
                uuid=ident, name=f"n{i}", driver="fake", provision_state="enroll",
                created_at=dt.datetime.now()))
    results: dict[str, dict[str, list[float]]] = {}
    for _ in range(rounds):
        for name, make in statements(uuids).items():
            per = results.setdefault(name, {"engine": [], "pgfast": []})
            await by_engine(engine, make, 50)  # warm: compiled, prepared
            await by_database(db, make, 50)
            per["engine"].append(await by_engine(engine, make, n))
            per["pgfast"].append(await by_database(db, make, n))
    print(f"CPU of this process per statement, µs (median of {rounds} interleaved rounds of "
          f"{n}; connection taken from the pool and given back each time)")
    print(f"  {'statement':28} {'SQLAlchemy engine':>18} {'pgfast':>8} {'ratio':>6}")
    for name, per in results.items():
        a, b = statistics.median(per["engine"]), statistics.median(per["pgfast"])
        print(f"  {name:28} {a:18.0f} {b:8.0f} {a / b:6.1f}")
    await engine.dispose()
    await db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db-url", required=True)
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    (url,) = fresh_databases(args.db_url, ["ironsight_bench_stmt"])
    run_migrations(url, MIGRATIONS, VERSION_TABLE)
    uvloop.run(main(url, args.n, args.rounds))
