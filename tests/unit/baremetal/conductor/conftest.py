"""The conductor's pieces on a real SQLite database (migrated once per session, copied per
test): node rows written and read with the db api, locks taken by a TaskManager."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.service import upgrade_database
from ironsight.common import config
from ironsight.common.db import Database
from ironsight.common.workers import WorkerPool

from .helpers import OTHER, OWNER


@pytest.fixture(scope="session")
def baremetal_db_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("baremetal-db") / "ironsight.sqlite"
    upgrade_database(config.load(overrides={"database": {"connection": f"sqlite:///{path}"}}))
    return path


@pytest.fixture
async def db(baremetal_db_template: Path, tmp_path: Path) -> AsyncIterator[Database]:
    """A fresh, migrated bare-metal database of this test."""
    path = tmp_path / "ironsight.sqlite"
    shutil.copyfile(baremetal_db_template, path)
    database = Database(f"sqlite:///{path}")
    yield database
    await database.close()


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
