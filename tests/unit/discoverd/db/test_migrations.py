"""discoverd's migrations keep what was stored: data written before the data history
(revision 0004) is the first run of its node, still readable, and kept by a new run."""

from __future__ import annotations

import datetime as dt
import json
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from ironsight.common.db import Database, engine_url
from ironsight.discoverd.db.models import VERSION_TABLE
from ironsight.discoverd.node_cache import NodeCache

from ...databases import BACKENDS, PG_URL, _admin, _url, migrate_to

UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
STARTED = dt.datetime(2025, 1, 2, 3, 4, 5)


def migrate(url: str, revision: str) -> None:
    migrate_to(url, revision, "ironsight.discoverd.db:migrations", VERSION_TABLE)


@pytest.fixture(params=BACKENDS)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'discoverd.sqlite'}"
        return
    if not PG_URL:
        pytest.skip("IRONSIGHT_TEST_PG_URL is not set (make test sets it)")
    name = f"ironsight_m_{uuidlib.uuid4().hex[:10]}"
    _admin(f'CREATE DATABASE "{name}"')
    yield _url(name)
    _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def store_before_history(url: str) -> None:
    """An introspection with both kinds of data, as revision 0003 stored them."""
    migrate(url, "0003")
    engine = create_engine(engine_url(url))
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO di_introspections (uuid, state, started_at, finished_at, manage_boot) "
            "VALUES (:u, 'finished', :s, :s, true)"), {"u": UUID, "s": STARTED})
        for processed in (False, True):
            conn.execute(text(
                "INSERT INTO di_data (uuid, processed, data, stored_at) "
                "VALUES (:u, :p, :d, :s)"),
                {"u": UUID, "p": processed, "d": json.dumps({"processed": processed}),
                 "s": STARTED})
    engine.dispose()


async def test_data_stored_before_the_history_is_the_first_run(empty_url: str) -> None:
    store_before_history(empty_url)
    migrate(empty_url, "head")
    db = Database(empty_url)
    try:
        cache = NodeCache(db)
        assert await cache.get_data(UUID, processed=True) == {"processed": True}
        [run] = await cache.history(UUID)
        assert (run.run, run.started_at) == (1, STARTED)
        await cache.start(UUID, manage_boot=False, macs=["52:54:00:12:34:56"],
                          bmc_addresses=[])
        assert (await cache.get(UUID)).started_at > STARTED
        assert await cache.get_run_data(UUID, 1, processed=False) == {"processed": False}
    finally:
        await db.close()
