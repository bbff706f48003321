"""Real databases for the tests of code that runs SQL: SQLite always, and PostgreSQL too where
`IRONSIGHT_TEST_PG_URL` names a server (make test starts one), so that each specification
holds on both backends (the PostgreSQL path runs other statements: see
baremetal/db/combined.py). Migrated once per session into a template, copied for each test
(a copy costs a file copy or a CREATE DATABASE ... TEMPLATE; migrating costs Alembic's
start-up)."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from ironsight.common.db import Database

PG_URL = os.environ.get("IRONSIGHT_TEST_PG_URL", "")

# `params` of a database fixture: PostgreSQL's run needs a server, so it is functional.
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.functional)]


def migrate_to(url: str, revision: str, migrations: str, version_table: str) -> None:
    """Run a service's migrations (`migrations`: their package, as `pkg:dir`) up to
    `revision`, for a test of what a migration does to stored rows."""
    from alembic import command
    from alembic.config import Config as AlembicConfig

    from ironsight.common.db import engine_url

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", migrations)
    cfg.attributes["url"] = engine_url(url)
    cfg.attributes["version_table"] = version_table
    command.upgrade(cfg, revision)


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


def _admin(statement: str) -> None:
    engine = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(statement))
    finally:
        engine.dispose()


def _url(name: str) -> str:
    return PG_URL.rsplit("/", 1)[0] + "/" + name


@dataclass
class Templates:
    """A service's migrated template on each backend (PostgreSQL's made on first use)."""

    sqlite: Path
    migrate: Callable[[str], None]
    pg_name: str | None = None

    def pg_template(self) -> str:
        if not PG_URL:
            pytest.skip("IRONSIGHT_TEST_PG_URL is not set (make test sets it)")
        if self.pg_name is None:
            name = f"ironsight_tpl_{uuid.uuid4().hex[:8]}"
            _admin(f'CREATE DATABASE "{name}"')
            self.migrate(_url(name))
            self.pg_name = name
        return self.pg_name

    def drop(self) -> None:
        if self.pg_name is not None:
            _admin(f'DROP DATABASE IF EXISTS "{self.pg_name}" WITH (FORCE)')


def templates(factory: pytest.TempPathFactory, name: str,
              migrate: Callable[[str], None]) -> Iterator[Templates]:
    """Body of a session fixture: the templates of one service, dropped at the end."""
    made = Templates(migrated_template(factory, name, migrate), migrate)
    yield made
    made.drop()


@asynccontextmanager
async def fresh(backend: str, made: Templates, directory: Path) -> AsyncIterator[Database]:
    """A fresh, migrated database of this test on `backend`."""
    if backend == "sqlite":
        async with copy_of(made.sqlite, directory) as database:
            yield database
        return
    template = made.pg_template()
    name = f"ironsight_t_{uuid.uuid4().hex[:10]}"
    _admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    database = Database(_url(name))
    try:
        yield database
    finally:
        await database.close()
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
