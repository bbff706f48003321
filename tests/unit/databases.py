"""Real SQLite databases for unit tests: migrated once per session into a template, copied
for each test (a copy costs a file copy; migrating costs Alembic's start-up)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from ironsight.common.db import Database


def migrated_template(factory: pytest.TempPathFactory, name: str,
                      migrate: Callable[[str], None]) -> Path:
    """A database file `name`, created by `migrate(url)`."""
    path = factory.mktemp(name.split(".")[0]) / name
    migrate(f"sqlite:///{path}")
    return path


@asynccontextmanager
async def copy_of(template: Path, directory: Path) -> AsyncIterator[Database]:
    """A fresh copy of `template` in `directory`, open for the test, closed after it."""
    path = directory / template.name
    shutil.copyfile(template, path)
    database = Database(f"sqlite:///{path}")
    try:
        yield database
    finally:
        await database.close()
