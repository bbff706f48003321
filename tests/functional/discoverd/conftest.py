"""Both services in-process, in one event loop: the bare-metal service (fake driver, real
conductor) and discoverd, whose bare-metal calls go over HTTP (httpx's ASGI transport) to the
real bare-metal app. Each test gets fresh databases: SQLite files in tmp_path, or (for the
tests marked with `BOTH_DBS`) two PostgreSQL databases emptied before the test.

Config knobs: `@pytest.mark.discoverd_conf(processing={"add_ports": "all"}, ...)` on a test
(sections as keyword arguments), or `@pytest.mark.parametrize("conf_overrides", [{section:
{option: value}}, ...])` to run a test under several configurations."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, inspect, text

from ironsight.baremetal.service import BaremetalService
from ironsight.baremetal.service import upgrade_database as upgrade_bm
from ironsight.common import config
from ironsight.discoverd.service import DiscoverdService
from ironsight.discoverd.service import upgrade_database as upgrade_di

from ..api.conftest import LATEST, make_conf
from ..conftest import PG_URL, drop_pg_database, fresh_pg_database

DI_TABLES = ("di_data", "di_attributes", "di_introspections")
BM_TABLES = ("bm_node_history", "bm_ports", "bm_nodes", "bm_conductors")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "discoverd_conf(**sections): config overrides for the discoverd fixtures")


# --- databases ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def di_pg_urls() -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL databases (bare-metal, discoverd) for this session."""
    if not PG_URL:
        pytest.skip("IRONSIGHT_TEST_PG_URL is not set (make test sets it)")
    tag = uuidlib.uuid4().hex[:8]
    urls = (fresh_pg_database(f"ironsight_ditest_{tag}_bm"),
            fresh_pg_database(f"ironsight_ditest_{tag}_di"))
    yield urls
    for url in urls:
        drop_pg_database(url)


def _empty(url: str, tables: tuple[str, ...]) -> None:
    engine = create_engine(url)
    try:
        existing = set(inspect(engine).get_table_names())
        with engine.begin() as conn:
            for table in tables:
                if table in existing:
                    conn.execute(text(f"DELETE FROM {table}"))
    finally:
        engine.dispose()


@pytest.fixture
def db_kind(request: pytest.FixtureRequest) -> str:
    """sqlite unless a test is parametrized with BOTH_DBS."""
    return str(getattr(request, "param", "sqlite"))


BOTH_DBS = pytest.mark.parametrize("db_kind", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture
def db_urls(db_kind: str, tmp_path: Any, request: pytest.FixtureRequest) -> tuple[str, str]:
    if db_kind == "sqlite":
        return f"sqlite:///{tmp_path / 'bm.sqlite'}", f"sqlite:///{tmp_path / 'di.sqlite'}"
    bm_url, di_url = request.getfixturevalue("di_pg_urls")
    _empty(bm_url, BM_TABLES)
    _empty(di_url, DI_TABLES)
    return bm_url, di_url


# --- configuration and services -----------------------------------------------------------


@pytest.fixture
def conf_overrides() -> dict[str, dict[str, Any]]:
    """Parametrize this (directly) to vary the configuration."""
    return {}


@pytest.fixture
def conf(db_urls: tuple[str, str], tmp_path: Any, request: pytest.FixtureRequest,
         conf_overrides: dict[str, dict[str, Any]]) -> config.Config:
    overrides: dict[str, dict[str, str]] = {
        "introspection": {"connection": db_urls[1], "ironic_retry_interval": "0.05",
                          "ironic_url": "http://bm.test"},
    }
    marker = request.node.get_closest_marker("discoverd_conf")
    for source in (marker.kwargs if marker else {}), conf_overrides:
        for section, values in source.items():
            overrides.setdefault(section, {}).update({k: str(v) for k, v in values.items()})
    return make_conf(db_urls[0], tmp_path, **overrides)


@pytest.fixture
async def bm_service(conf: config.Config) -> AsyncIterator[BaremetalService]:
    upgrade_bm(conf)
    svc = BaremetalService(conf)
    await svc.start()
    try:
        yield svc
    finally:
        await svc.stop()


MakeDiscoverd = Callable[[], Awaitable[DiscoverdService]]


@pytest.fixture
async def make_discoverd(conf: config.Config, bm_service: BaremetalService
                         ) -> AsyncIterator[MakeDiscoverd]:
    """Factory: a started DiscoverdService on the test's database, talking to `bm_service`
    (call it again to simulate a restart). Every one made is stopped at the end."""
    made: list[DiscoverdService] = []
    upgrade_di(conf)

    async def make() -> DiscoverdService:
        svc = DiscoverdService(conf, ironic_transport=httpx.ASGITransport(app=bm_service.app))
        made.append(svc)
        await svc.start()
        return svc

    try:
        yield make
    finally:
        for svc in reversed(made):
            await svc.stop()


@pytest.fixture
async def di_service(make_discoverd: MakeDiscoverd) -> DiscoverdService:
    return await make_discoverd()


@pytest.fixture
async def bm(bm_service: BaremetalService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=bm_service.app),
                                 base_url="http://bm.test", headers=LATEST) as client:
        yield client


@pytest.fixture
async def di(di_service: DiscoverdService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=di_service.app),
                                 base_url="http://di.test") as client:
        yield client
