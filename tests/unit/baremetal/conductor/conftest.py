"""The conductor's pieces on a real database, SQLite and PostgreSQL (see databases.py): node
rows written and read with the db api, locks taken by a TaskManager."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ironsight.baremetal.conductor.task import TaskManager
from ironsight.common.db import Database
from ironsight.common.workers import WorkerPool

from .helpers import OTHER, OWNER


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
