"""The conductor's pieces on a real database, SQLite and PostgreSQL (see databases.py): node
rows written and read with the db api, locks taken by a TaskManager."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.db.models import VERSION_TABLE
from ironsight.baremetal.service import MIGRATIONS
from ironsight.common.db import Database, run_migrations
from ironsight.common.workers import WorkerPool

from ...databases import BACKENDS, Templates, fresh, templates
from .helpers import OTHER, OWNER


@pytest.fixture(scope="session")
def baremetal_db_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Templates]:
    yield from templates(tmp_path_factory, "ironsight.sqlite",
                         lambda url: run_migrations(url, MIGRATIONS, VERSION_TABLE))


@pytest.fixture(params=BACKENDS)
async def db(request: pytest.FixtureRequest, baremetal_db_templates: Templates,
             tmp_path: Path) -> AsyncIterator[Database]:
    """A fresh, migrated bare-metal database of this test, on each backend."""
    async with fresh(request.param, baremetal_db_templates, tmp_path) as database:
        yield database


@pytest.fixture
async def workers() -> AsyncIterator[WorkerPool]:
    pool = WorkerPool(10)
    yield pool
    await pool.drain(timeout=5)


@pytest.fixture
def tasks(db: Database, workers: WorkerPool) -> TaskManager:
    """The locks of conductor OWNER."""
    return TaskManager(db, OWNER, workers)


@pytest.fixture
def other(db: Database, workers: WorkerPool) -> TaskManager:
    """The locks of another conductor, OTHER."""
    return TaskManager(db, OTHER, workers)
