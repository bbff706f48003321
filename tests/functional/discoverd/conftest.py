"""Both services in-process, in one event loop: the bare-metal service (fake driver, real
conductor) and discoverd, whose bare-metal calls go over real HTTP to the real bare-metal app
(served by uvicorn on a loopback socket in the same loop, so that it works whatever HTTP
client discoverd uses: it takes only `[introspection] ironic_url`). Each test gets fresh
databases: SQLite files in tmp_path (copied from migrated templates), or (for the tests marked
with `BOTH_DBS`) two PostgreSQL databases emptied before the test. Clients: `bm` (Ironic API,
version 1.115) and `di` (discoverd API), both httpx over ASGI.

Config knobs: `@pytest.mark.discoverd_conf(processing={"add_ports": "all"}, ...)` on a test
(sections as keyword arguments), or `@pytest.mark.parametrize("conf_overrides", [{section:
{option: value}}, ...])` to run a test under several configurations."""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import shutil
import socket
import uuid as uuidlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import uvloop
from sqlalchemy import create_engine, inspect, text

from ironsight.baremetal.service import BaremetalService
from ironsight.baremetal.service import upgrade_database as upgrade_bm
from ironsight.common import config
from ironsight.discoverd.service import DiscoverdService
from ironsight.discoverd.service import upgrade_database as upgrade_di

from ..api.conftest import LATEST, make_conf
from ..conftest import PG_URL, drop_pg_database, fresh_pg_database

DI_TABLES = ("di_data", "di_attributes", "di_introspections", "inspection_rules", "di_claims",
             "di_discovered", "di_non_unique_macs", "di_manifest", "di_rejected",
             "di_component_events", "di_webhook_deliveries")
BM_TABLES = ("bm_node_history", "bm_ports", "bm_nodes", "bm_conductors")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "discoverd_conf(**sections): config overrides for the discoverd fixtures")


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item
                                  ) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """uvloop, as `ironsight serve` runs. Also needed for speed: uvicorn on the standard
    asyncio loop answers loopback HTTP/1.1 requests only after a ~40 ms delayed-ACK stall
    (measured: ~40 ms per request with httpx and aiohttp alike, ~0.5 ms under uvloop)."""
    return {"uvloop": uvloop.new_event_loop}


_ENTRY_POINTS = functools.lru_cache(maxsize=None)(importlib.metadata.entry_points)


@pytest.fixture(scope="module", autouse=True)
def _cached_entry_points() -> Iterator[None]:
    """Speed only: both services look up their plugins (hardware types, processing hooks)
    with `importlib.metadata.entry_points`, a scan of every installed package (~35 ms per
    test here). The installed packages do not change during a run, so scan once (patched
    for this folder's modules only)."""
    from ironsight.baremetal.drivers import loader
    from ironsight.discoverd.plugins import base

    with pytest.MonkeyPatch.context() as mp:
        for module in (loader, base):
            if getattr(module, "entry_points", None) is importlib.metadata.entry_points:
                mp.setattr(module, "entry_points", _ENTRY_POINTS)
        yield


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


@pytest.fixture(scope="session")
def sqlite_templates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Migrated SQLite databases, copied for each test (alembic once, not per test)."""
    where = tmp_path_factory.mktemp("discoverd-templates")
    bm_file, di_file = where / "bm.sqlite", where / "di.sqlite"
    template_conf = make_conf(f"sqlite:///{bm_file}", where,
                              introspection={"connection": f"sqlite:///{di_file}"})
    upgrade_bm(template_conf)
    upgrade_di(template_conf)
    return bm_file, di_file


@pytest.fixture
def db_urls(db_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, str]:
    if db_kind == "sqlite":
        templates = request.getfixturevalue("sqlite_templates")
        found = []
        for template, name in zip(templates, ("bm.sqlite", "di.sqlite"), strict=True):
            shutil.copyfile(template, tmp_path / name)
            found.append(f"sqlite:///{tmp_path / name}")
        return found[0], found[1]
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
def bm_socket() -> Iterator[socket.socket]:
    """The loopback socket the bare-metal API is served on (bound before the config is
    written, so that the config can name its port)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    with sock:
        yield sock


@pytest.fixture
def conf(db_urls: tuple[str, str], tmp_path: Any, request: pytest.FixtureRequest,
         conf_overrides: dict[str, dict[str, Any]], bm_socket: socket.socket) -> config.Config:
    port = bm_socket.getsockname()[1]
    overrides: dict[str, dict[str, str]] = {
        # The tests post reports from no booted node: tokenless reports are allowed unless a
        # test says otherwise (test_callback_token.py).
        "introspection": {"connection": db_urls[1], "ironic_retry_interval": "0.05",
                          "ironic_url": f"http://127.0.0.1:{port}",
                          "allow_tokenless_reports": "true"},
    }
    marker = request.node.get_closest_marker("discoverd_conf")
    for source in conf_overrides, (marker.kwargs if marker else {}):  # a test's own last
        for section, values in source.items():
            overrides.setdefault(section, {}).update({k: str(v) for k, v in values.items()})
    return make_conf(db_urls[0], tmp_path, **overrides)


@pytest.fixture
async def bm_service(conf: config.Config, bm_socket: socket.socket, db_kind: str
                     ) -> AsyncIterator[BaremetalService]:
    """The bare-metal service, its API served over HTTP at `[introspection] ironic_url`.

    uvicorn's own `serve()` is not used: its main loop and its shutdown each sleep 0.1 s,
    which would cost ~0.2 s per test. The listener is started and closed directly."""
    if db_kind != "sqlite":  # SQLite files are copied from migrated templates
        upgrade_bm(conf)
    svc = BaremetalService(conf)
    await svc.start()
    uv_conf = uvicorn.Config(svc.app, log_config=None, access_log=False, lifespan="off")
    uv_conf.load()
    server = uvicorn.Server(uv_conf)
    server.lifespan = uv_conf.lifespan_class(uv_conf)
    await server.startup(sockets=[bm_socket])
    try:
        yield svc
    finally:
        for listener in server.servers:
            listener.close()
        for connection in list(server.server_state.connections):
            connection.shutdown()
        await svc.stop()


class Discoverds:
    """Starts DiscoverdServices on the test's database, talking to the test's bare-metal
    service; `restart` stops one and starts another (a new process, as far as discoverd
    can tell apart from the pid). Whatever is still running is stopped at the end."""

    def __init__(self, conf: config.Config) -> None:
        self.conf = conf
        self.running: list[DiscoverdService] = []

    async def start(self) -> DiscoverdService:
        svc = DiscoverdService(self.conf)
        await svc.start()
        self.running.append(svc)
        return svc

    async def restart(self, old: DiscoverdService) -> DiscoverdService:
        self.running.remove(old)
        await old.stop()
        return await self.start()

    async def stop_all(self) -> None:
        while self.running:
            await self.running.pop().stop()


@pytest.fixture
async def discoverds(conf: config.Config, bm_service: BaremetalService, db_kind: str
                     ) -> AsyncIterator[Discoverds]:
    if db_kind != "sqlite":  # SQLite files are copied from migrated templates
        upgrade_di(conf)
    found = Discoverds(conf)
    try:
        yield found
    finally:
        await found.stop_all()


@pytest.fixture
async def di_service(discoverds: Discoverds) -> DiscoverdService:
    return await discoverds.start()


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
