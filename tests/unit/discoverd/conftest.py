"""discoverd's parts over a real SQLite node cache (migrated once per session, copied per
test) and a `FakeBareMetal` (see helpers.py for why a stand-in is right here)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ironsight.common.db import Database, run_migrations
from ironsight.common.process import pid_alive
from ironsight.discoverd import lifecycle
from ironsight.discoverd.db.models import VERSION_TABLE
from ironsight.discoverd.node_cache import NodeCache

from ..databases import BACKENDS, Templates, fresh, templates
from .helpers import Build, Discoverd, FastClock, conf_with

MIGRATIONS = "ironsight.discoverd.db:migrations"


@pytest.fixture(scope="session")
def discoverd_db_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Templates]:
    yield from templates(tmp_path_factory, "discoverd.sqlite",
                         lambda url: run_migrations(url, MIGRATIONS, VERSION_TABLE))


@pytest.fixture
async def db(discoverd_db_templates: Templates, tmp_path: Path) -> AsyncIterator[Database]:
    """A fresh, migrated discoverd database of this test (SQLite; the modules whose SQL
    differs by backend use `db_each` instead, through their own `db`)."""
    async with fresh("sqlite", discoverd_db_templates, tmp_path) as database:
        yield database


@pytest.fixture(params=BACKENDS)
async def db_each(request: pytest.FixtureRequest, discoverd_db_templates: Templates,
                  tmp_path: Path) -> AsyncIterator[Database]:
    """A fresh, migrated discoverd database of this test, on each backend."""
    async with fresh(request.param, discoverd_db_templates, tmp_path) as database:
        yield database


@pytest.fixture
def cache(db: Database) -> NodeCache:
    return NodeCache(db)


@pytest.fixture
async def build(cache: NodeCache, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Build]:
    """`build(workers_size=100, **sections)`: a Discoverd with those config overrides; all
    share this test's database and one FastClock, which power-off waits run on."""
    clock = FastClock()
    monkeypatch.setattr(lifecycle, "asyncio", clock)
    built: list[Discoverd] = []

    def make(workers_size: int = 100, **sections: dict[str, str]) -> Discoverd:
        parts = Discoverd.wire(conf_with(tmp_path, **sections), cache, clock, workers_size)
        built.append(parts)
        return parts

    yield make
    for parts in built:
        await parts.workers.drain(timeout=5)


@pytest.fixture
def di(build: Build) -> Discoverd:
    """discoverd with the default configuration."""
    return build()


@pytest.fixture
def dead_owner() -> str:
    """The `owner` a process of this host that no longer runs left on its introspections."""
    pid = 2**22 + 12345  # above Linux's largest pid_max: never a live process
    assert not pid_alive(pid)
    return f"{socket.gethostname()}:{pid}"
