"""The bare-metal service in-process (real database, real conductor, real drivers), driven
through its HTTP API with httpx. Every test runs against SQLite and against PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from ironsight.baremetal.service import BaremetalService, upgrade_database
from ironsight.common import config

LATEST = {"X-OpenStack-Ironic-API-Version": "1.115"}


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bm.sqlite'}"
    url = request.getfixturevalue("pg_database")
    engine = create_engine(url)
    with engine.begin() as conn:  # a clean slate for each test
        for table in ("bm_node_history", "bm_ports", "bm_portgroups", "bm_volume_connectors",
                      "bm_volume_targets", "bm_allocations", "bm_node_traits", "bm_nodes",
                      "bm_chassis", "bm_deploy_templates", "bm_runbooks", "bm_conductors"):
            conn.execute(text(f"DELETE FROM {table}")) if _has_table(conn, table) else None
    engine.dispose()
    return url


def _has_table(conn: Any, table: str) -> bool:
    return bool(conn.execute(text("SELECT to_regclass(:t)"), {"t": table}).scalar())


def make_conf(db_url: str, tmp_path: Any, **overrides: dict[str, str]) -> config.Config:
    sections: dict[str, dict[str, str]] = {
        "DEFAULT": {"state_dir": str(tmp_path), "host": "test-conductor"},
        "database": {"connection": db_url},
        "conductor": {"sync_power_state_interval": "0", "heartbeat_interval": "60"},
    }
    for section, values in overrides.items():
        sections.setdefault(section, {}).update(values)
    return config.load(overrides=sections)


@pytest.fixture
def conf_overrides() -> dict[str, dict[str, str]]:
    return {}


@pytest.fixture
async def service(db_url: str, tmp_path: Any,
                  conf_overrides: dict[str, dict[str, str]]) -> AsyncIterator[BaremetalService]:
    conf = make_conf(db_url, tmp_path, **conf_overrides)
    upgrade_database(conf)
    svc = BaremetalService(conf)
    await svc.start()
    try:
        yield svc
    finally:
        await svc.stop()


@pytest.fixture
async def api(service: BaremetalService) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bm.test",
                                 headers=LATEST) as client:
        yield client
