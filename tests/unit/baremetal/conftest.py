"""The bare-metal service's database for the tests of code that runs SQL (the conductor's, the
console's ended sessions): SQLite and PostgreSQL (see databases.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ironsight.baremetal.db.models import VERSION_TABLE
from ironsight.baremetal.service import MIGRATIONS
from ironsight.common.db import Database, run_migrations

from ..databases import BACKENDS, Templates, fresh, templates


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
