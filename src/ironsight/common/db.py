"""Database engines shared by both services: SQLite (WAL) by default, PostgreSQL for scale-out.

Each service owns its own tables; this module only knows how to open an engine on a URL, how
to run a query on it without stalling the event loop, and how to run a service's Alembic
migrations.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import asyncpg
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import (
    DBAPIError,
    InterfaceError,
    OperationalError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from ironsight.common import litefast
from ironsight.common.exceptions import ConfigError, DatabaseUnavailable, StorageFull
from ironsight.common.files import prepare_sqlite
from ironsight.common.pgfast import FastPool

LOG = logging.getLogger(__name__)


def engine_url(url: str) -> URL:
    """The configured URL with a synchronous driver (pysqlite, or psycopg 3), for Alembic's
    migrations and for the PXE ownership lock's connection; a Database's own PostgreSQL
    pools use asyncpg instead (see pools_url). The URL's driver part is not the operator's
    choice: any postgresql URL works."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise ConfigError(f"[database] connection: not a database URL ({exc})") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return parsed.set(drivername="sqlite")
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg")
    raise ConfigError(f"[database] connection: unsupported database {backend!r} "
                      "(use sqlite or postgresql+psycopg)")


def pools_url(url: str) -> URL:
    """The URL of a Database's PostgreSQL pools: asyncpg, which costs ~15-18 % less CPU per
    inspected node than psycopg's async mode behind SQLAlchemy (bench/RESULTS.md)."""
    return engine_url(url).set(drivername="postgresql+asyncpg")


def _sqlite_path(url: URL) -> Path | None:
    if url.database and url.database != ":memory:":
        return Path(url.database)
    return None


class Conn(Protocol):
    """What queries need of a connection: Conn (PostgreSQL) and SyncConn (SQLite)
    both fit."""

    async def execute(self, statement: Any, parameters: Any = None) -> Any: ...

    @property
    def dialect(self) -> Any: ...


@dataclass
class DbStats:
    """What a Database did, counted (metrics; the benchmarks' statements per node)."""

    statements: int = 0
    writes: int = 0  # write transactions


class CountedConn:
    """An async connection whose statements are counted."""

    __slots__ = ("_conn", "_stats")

    def __init__(self, conn: Any, stats: DbStats) -> None:
        self._conn = conn
        self._stats = stats

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        self._stats.statements += 1
        return await self._conn.execute(statement, parameters)

    @property
    def dialect(self) -> Any:
        return self._conn.dialect


class OneStatement:
    """A connection that runs one statement only (Database.single): a second is a bug, as
    it would not be in the same transaction as the first."""

    __slots__ = ("_conn", "_used")

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        self._used = False

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        if self._used:
            raise RuntimeError("bug: a second statement in Database.single()")
        self._used = True
        return await self._conn.execute(statement, parameters)

    @property
    def dialect(self) -> Any:
        return self._conn.dialect


class SyncConn:
    """A synchronous SQLAlchemy connection behind the async `execute` the queries use.

    For SQLite only: a statement there takes tens of microseconds, while a hop to a worker
    thread and back (what aiosqlite does) costs several times that (bench/RESULTS.md), so
    running it on the event loop's own thread is both faster and, with WAL and our own write
    lock, short. Statements are run by litefast (SQLAlchemy's compilation, sqlite3's
    execution), within the connection's SQLAlchemy transaction.
    """

    __slots__ = ("_conn", "_statements", "_stats")

    def __init__(self, conn: Connection, stats: DbStats,
                 statements: litefast.LiteStatements) -> None:
        self._conn = conn
        self._stats = stats
        self._statements = statements

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        self._stats.statements += 1
        return litefast.execute(self._conn, self._statements, statement, parameters)

    @property
    def dialect(self) -> Any:
        return self._conn.dialect


class Database:
    """An engine plus the transaction discipline each backend needs.

    SQLite: a synchronous engine used on the event loop's thread (see SyncConn); it allows one
    writer, so write transactions of this process are serialised by an asyncio lock (a
    read-then-write transaction then never hits SQLITE_BUSY), and other processes are waited
    for with `busy_timeout`. PostgreSQL: one asyncpg pool (pgfast), used so as to spare
    round trips (each costs the server and this process CPU, and a remote database its
    latency): reads and single-statement writes run in autocommit (no BEGIN, no COMMIT or
    ROLLBACK), and a pooled connection is given out without a check (asyncpg marks one the
    server closed as closed, and the pool replaces it). A connection lost mid-request
    raises DatabaseUnavailable (503, retry) and is replaced.
    """

    def __init__(self, url: str, *, pool_size: int = 8, busy_timeout_ms: int = 10000) -> None:
        self.url = url
        aurl = engine_url(url)
        self._write_lock = asyncio.Lock()
        self.engine: AsyncEngine | None = None
        self.sync_engine: Engine | None = None
        # SQLite: one connection for write transactions (used under the write lock) and one
        # for reads, kept open (see begin/read).
        self._writer: Connection | None = None
        self._reader: Connection | None = None
        self.stats = DbStats()
        if aurl.get_backend_name() == "sqlite":
            path = _sqlite_path(aurl)
            if path is not None:
                prepare_sqlite(path)
            self.sync_engine = create_engine(aurl, pool_size=pool_size, max_overflow=pool_size,
                                             hide_parameters=True)
            self._setup_sqlite(self.sync_engine, busy_timeout_ms)
            self._lite = litefast.LiteStatements(self.sync_engine.dialect,
                                                 self.sync_engine._compiled_cache)
        else:
            # One asyncpg pool (see pgfast: the statements are SQLAlchemy's, their execution
            # is asyncpg's own). It opens connections as they are needed and keeps them, up
            # to its bound (a connection opened under load and closed on its return would
            # cost the server a backend's start, several milliseconds of CPU, each time).
            # The engine only gives the dialect its server's facts, at the first connection.
            self.engine = create_async_engine(pools_url(url), poolclass=NullPool,
                                              hide_parameters=True)
            self.fast = FastPool(self.engine, pool_size + pool_size // 2)

    @property
    def backend(self) -> str:
        """"sqlite" or "postgresql": which statements a query may use before it has a
        connection to ask."""
        return "sqlite" if self.sync_engine is not None else "postgresql"

    @staticmethod
    def _setup_sqlite(engine: Engine, busy_timeout_ms: int) -> None:
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            cur.close()

    def _sqlite_conn(self, which: str) -> Connection:
        """The process's SQLite writer or reader connection, (re)opened when needed.

        Kept open rather than checked out of the pool per transaction: the checkout, the
        Connection object and its event dispatch cost more CPU than a short statement
        (bench/RESULTS.md). Everything runs on the event loop's thread, so two connections
        suffice: the writer is only used under the write lock; the reader runs statements
        outside any transaction (pysqlite begins one only before a write), so each read sees
        the last committed state, as a fresh pooled connection did.
        """
        assert self.sync_engine is not None
        conn: Connection | None = getattr(self, which)
        if conn is None or conn.closed or conn.invalidated:
            conn = self.sync_engine.connect()
            setattr(self, which, conn)
        return conn

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[Conn]:
        """A write transaction: committed on success, rolled back on any error."""
        self.stats.writes += 1
        if self.sync_engine is not None:
            async with self._write_lock:
                conn = self._sqlite_conn("_writer")
                with _unavailable(), conn.begin():
                    yield SyncConn(conn, self.stats, self._lite)
        else:
            with _unavailable():
                async with self.fast.connection(transaction=True) as fconn:
                    yield CountedConn(fconn, self.stats)

    @asynccontextmanager
    async def single(self) -> AsyncIterator[Conn]:
        """A write of exactly one statement on PostgreSQL, committed by itself: as atomic as
        a transaction, and two round trips (BEGIN, COMMIT) cheaper. Locks, state changes and
        (see baremetal/db/combined.py) writes with their history row are such writes. On
        SQLite, a transaction (its statements are local calls: no need to make them one)."""
        if self.sync_engine is not None:
            async with self.begin() as conn:
                yield conn
            return
        self.stats.writes += 1
        with _unavailable():
            async with self.fast.connection() as fconn:
                yield OneStatement(CountedConn(fconn, self.stats))

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Conn]:
        """A read-only connection (no write lock taken). Each statement sees what was
        committed when it began (PostgreSQL's READ COMMITTED: the same in a transaction)."""
        if self.sync_engine is not None:
            conn = self._sqlite_conn("_reader")
            try:
                with _unavailable():
                    yield SyncConn(conn, self.stats, self._lite)
            finally:
                # A connection that only read has no database transaction open, so nothing
                # is held between reads; one that wrote by mistake must not keep the lock.
                raw = (None if conn.closed or conn.invalidated
                       else conn.connection.dbapi_connection)
                if raw is not None and raw.in_transaction:
                    conn.rollback()
                    if raw.in_transaction:  # begun by sqlite3 alone (litefast), not SQLAlchemy
                        raw.rollback()
        else:
            with _unavailable():
                async with self.fast.connection() as fconn:
                    yield CountedConn(fconn, self.stats)

    def pool_status(self) -> dict[str, int]:
        """Connections in use and idle (PostgreSQL's pool; SQLite keeps its two open)."""
        if self.sync_engine is None:
            in_use, idle = self.fast.status()
            return {"in_use": in_use, "idle": idle}
        return {"in_use": int(self._write_lock.locked()), "idle": 2 - int(
            self._write_lock.locked())}

    async def close(self) -> None:
        if self.sync_engine is not None:
            for which in ("_writer", "_reader"):
                conn = getattr(self, which)
                if conn is not None:
                    conn.close()
                    setattr(self, which, None)
            self.sync_engine.dispose()
        if self.sync_engine is None:
            await self.fast.close()
            assert self.engine is not None
            await self.engine.dispose()


@contextmanager
def _unavailable() -> Iterator[None]:
    """The database could not be reached, the connection broke, or the pool had no free
    connection in time: a DatabaseUnavailable (503: retry later; SQLAlchemy has already
    dropped a broken connection). Errors about the statement or the data (a constraint, a
    bad value) pass unchanged."""
    try:
        yield
    except PoolTimeout as exc:  # every connection of the pool busy for pool_timeout (30 s)
        LOG.warning("Database unavailable: no free connection in the pool: %s", exc)
        raise DatabaseUnavailable(exc) from exc
    except DBAPIError as exc:
        if _is_full(exc):
            LOG.error("Database storage full: %s", _first_line(exc))
            raise StorageFull(exc) from exc
        if not _is_outage(exc):
            raise
        # The driver's own text only: SQLAlchemy's adds the statement (its parameters are
        # hidden: hide_parameters, as they may hold secrets such as a BMC password).
        first = str(exc.orig).strip().splitlines()[:1]
        LOG.warning("Database unavailable: %s: %s", type(exc.orig).__name__,
                    first[0] if first else "")
        raise DatabaseUnavailable(exc) from exc


# SQLSTATE classes of a server that cannot serve now: 08 connection exception, 53
# insufficient resources (too many connections, disk full, out of memory), 57 operator
# intervention (shutdown, crash recovery, "the database system is starting up"); 55000 is
# also what a database that refuses connections (ALLOW_CONNECTIONS false) answers.
_OUTAGE_CLASSES = ("08", "53", "57")
_OUTAGE_STATES = ("55000",)


def _first_line(exc: DBAPIError) -> str:
    first = str(exc.orig).strip().splitlines()[:1]
    return f"{type(exc.orig).__name__}: {first[0] if first else ''}"


_SQLITE_FULL = 13  # SQLITE_FULL: "database or disk is full" (also max_page_count reached)
_ENOSPC = 28


def _is_full(exc: DBAPIError) -> bool:
    """Whether a driver error says the database's storage is full: SQLite's SQLITE_FULL,
    PostgreSQL's SQLSTATE 53100 (disk_full), or ENOSPC anywhere in the exception chain."""
    seen: BaseException | None = exc.orig
    for _ in range(5):
        if seen is None:
            return False
        if getattr(seen, "sqlite_errorcode", None) == _SQLITE_FULL:
            return True
        if str(getattr(seen, "sqlstate", "") or "") == "53100":
            return True
        if isinstance(seen, OSError) and seen.errno == _ENOSPC:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _is_outage(exc: DBAPIError) -> bool:
    """Whether a driver error means the database is unreachable or cannot serve now (rather
    than a fault of the statement or the data): by SQLAlchemy's classification, then by the
    SQLSTATE or the OS error anywhere in the driver's exception chain (asyncpg's errors
    reach SQLAlchemy as generic DBAPIErrors)."""
    if isinstance(exc, OperationalError | InterfaceError) or exc.connection_invalidated:
        return True
    seen: BaseException | None = exc.orig
    for _ in range(5):
        if seen is None:
            break
        if isinstance(seen, OSError | TimeoutError):
            return True
        state = str(getattr(seen, "sqlstate", "") or "")
        if state[:2] in _OUTAGE_CLASSES or state in _OUTAGE_STATES:
            return True
        if isinstance(seen, asyncpg.InterfaceError):  # "connection is closed" and the like
            return True
        seen = seen.__cause__ or seen.__context__
    return False


T = TypeVar("T")


async def through_outages(fn: Callable[[], Awaitable[T]], *, attempts: int | None,
                          waiting: Callable[[float], None],
                          sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                          first: float = 0.5, most: float = 10.0) -> T:
    """Run `fn`, and again from its start after a pause (`first` seconds, doubling up to
    `most`) each time it meets an unavailable database, `attempts` times in all (None: until
    it gets through); the last DatabaseUnavailable is raised. `waiting(delay)` is told
    before each pause (to log it). For work that can run again from its start."""
    delay, attempt = first, 1
    while True:
        try:
            return await fn()
        except DatabaseUnavailable:
            if attempts is not None and attempt >= attempts:
                raise
        waiting(delay)
        await sleep(delay)
        delay, attempt = min(delay * 2, most), attempt + 1


def run_migrations(url: str, script_location: str, version_table: str) -> None:
    """Bring a service's tables to the newest revision (synchronous; run before serving)."""
    from alembic import command
    from alembic.config import Config as AlembicConfig

    surl = engine_url(url)
    if surl.get_backend_name() == "sqlite":
        path = _sqlite_path(surl)
        if path is not None:
            prepare_sqlite(path)
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", script_location)
    cfg.attributes["url"] = surl
    cfg.attributes["version_table"] = version_table
    command.upgrade(cfg, "head")


def current_revision(url: str, version_table: str) -> str | None:
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    engine = create_engine(engine_url(url))
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"version_table": version_table})
            return ctx.get_current_revision()
    finally:
        engine.dispose()


def run_alembic_env(target_metadata: Any) -> None:
    """Body of each service's Alembic env.py: the URL and version table come from the caller
    (`run_migrations`), so no alembic.ini is needed."""
    from alembic import context
    from sqlalchemy import create_engine

    config = context.config
    engine = create_engine(config.attributes["url"])
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata,
                          version_table=config.attributes["version_table"],
                          render_as_batch=True)
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Replicas starting together migrate one after the other: the first does
                # the work, the next find the tables at the newest revision. (PostgreSQL's
                # DDL is transactional, so the lock and the migration commit together.)
                connection.exec_driver_sql(
                    "SELECT pg_advisory_xact_lock(hashtext('ironsight-migrations'))")
            context.run_migrations()
    engine.dispose()
