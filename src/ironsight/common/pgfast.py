"""PostgreSQL statements run on asyncpg directly: compiled by SQLAlchemy, executed without it.

Why: a statement through SQLAlchemy's async engine (pool checkout, execution context,
greenlet bridge, result objects) costs this process 0.3-0.7 ms of CPU; the same statement
sent by asyncpg itself costs ~0.1 ms (bench/RESULTS.md, "SQLAlchemy's engine bypassed"). The
queries stay SQLAlchemy Core: each statement is compiled once per shape, in SQLAlchemy's own
compiled cache, with the asyncpg dialect; its parameters are rendered as SQLAlchemy renders
them (bind processors, Python-side column defaults, "expanding" IN lists); errors become the
SQLAlchemy exceptions the callers catch (IntegrityError and the like).

What callers get back (FastResult) is the subset of SQLAlchemy's Result that the services
use: all, first, one, one_or_none, scalar, scalar_one, scalar_one_or_none, scalars,
mappings, rowcount, inserted_primary_key.
Rows are asyncpg Records (a tuple and a mapping at once); mappings are dicts.

It relies on SQLAlchemy internals (`_compile_w_cache`, `construct_params(_collected_params)`,
`_bind_processors`, `_process_parameters_for_postcompile`, `_within_exec_param_key_getter`,
`_result_columns` with `_cached_result_processor`, the adapter's `_asyncpg_error_translate`):
pyproject.toml pins the tested minor version, and tests/unit/common/test_pgfast_internals.py
renders every statement shape of the services through them without a server, so that an
upgrade breaks `make test`, not production.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import asyncpg
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.util import LRUCache

# What asyncpg raises: the server's errors, the connection's, the socket's, a timeout.
_DRIVER_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError)
# Of those, the ones that leave the connection unusable.
_BROKEN = (asyncpg.InterfaceError, asyncpg.exceptions.ConnectionDoesNotExistError, OSError,
           TimeoutError)

# SQLAlchemy's own options of its asyncpg adapter, not asyncpg's
_ADAPTER_ONLY = ("prepared_statement_cache_size", "prepared_statement_name_func", "async_fallback")


@dataclass(frozen=True)
class _Shape:
    """What one compiled statement needs at each execution, worked out once."""

    returns_rows: bool
    implicit_returning: bool


class FastResult:
    """The part of SQLAlchemy's Result the services use."""

    __slots__ = ("_rows", "inserted_primary_key", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int,
                 inserted_primary_key: tuple[Any, ...] | None = None) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.inserted_primary_key = inserted_primary_key

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)

    def all(self) -> list[Any]:
        return list(self._rows)

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def one_or_none(self) -> Any:
        if len(self._rows) > 1:
            raise ValueError("more than one row")
        return self.first()

    def one(self) -> Any:
        if len(self._rows) != 1:
            raise ValueError(f"{len(self._rows)} rows where one was expected")
        return self._rows[0]

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalar_one_or_none(self) -> Any:
        row = self.one_or_none()
        return None if row is None else row[0]

    def scalars(self) -> FastResult:
        return FastResult([row[0] for row in self._rows], self.rowcount)

    def mappings(self) -> FastResult:
        return FastResult([dict(row.items()) for row in self._rows], self.rowcount)


class FastConn:
    """One asyncpg connection behind the `execute(statement, parameters)` of the queries."""

    __slots__ = ("_pool", "_raw")

    def __init__(self, raw: asyncpg.Connection, pool: FastPool) -> None:
        self._raw = raw
        self._pool = pool

    @property
    def dialect(self) -> Dialect:
        return self._pool.dialect

    async def execute(self, statement: Any, parameters: Any = None) -> FastResult:
        """`parameters`: a dict, or a list of them (one execution each, pipelined)."""
        many = isinstance(parameters, list | tuple)
        if many and len(parameters) == 1:
            parameters, many = parameters[0], False
        pool = self._pool
        first = parameters[0] if many else parameters
        compiled, extracted, collected, _hit = statement._compile_w_cache(
            dialect=pool.dialect, compiled_cache=pool.compiled_cache,
            column_keys=sorted(first) if first else [], for_executemany=many,
            schema_translate_map=None)
        try:
            if many:
                sql = compiled.string
                await self._raw.executemany(sql, [
                    _positional(compiled, params, extracted, collected)[1]
                    for params in parameters])
                return FastResult([], -1)
            sql, args = _positional(compiled, parameters, extracted, collected)
            shape = pool.shapes.get(compiled)
            if shape is None:
                shape = await pool.learn(self._raw, compiled, sql)
            if shape.returns_rows:
                rows = await self._raw.fetch(sql, *args)
                rowcount = len(rows)
            else:
                rows, rowcount = [], _rowcount(await self._raw.execute(sql, *args))
        except _DRIVER_ERRORS as exc:
            raise pool.translate(exc, sql) from exc
        inserted = tuple(rows[0]) if shape.implicit_returning and rows else None
        return FastResult(rows, rowcount, inserted)


def _positional(compiled: Any, parameters: Any, extracted: Any, collected: Any
                ) -> tuple[str, list[Any]]:
    """The SQL to send and its positional arguments, as SQLAlchemy renders them: bind
    processors (JSON serialised), Python-side column defaults, "expanding" IN lists."""
    sql, args, _params = render(compiled, parameters, extracted, collected)
    return sql, args


def render(compiled: Any, parameters: Any, extracted: Any, collected: Any
           ) -> tuple[str, list[Any], dict[str, Any]]:
    """_positional's SQL and arguments, and the parameters they came from (with the Python
    defaults filled in: SQLAlchemy's `compiled_parameters`, which its primary key getters
    read)."""
    params = compiled.construct_params(parameters, escape_names=False,
                                       extracted_parameters=extracted,
                                       _collected_params=collected)
    if compiled.insert_prefetch or compiled.update_prefetch:
        _python_defaults(compiled, params)
    processors = compiled._bind_processors
    if compiled.literal_execute_params or compiled.post_compile_params:
        expanded = compiled._process_parameters_for_postcompile(params)
        sql, positions = expanded.statement, expanded.positiontup
        processors = {**processors, **expanded.processors}
    else:
        sql, positions = compiled.string, compiled.positiontup
    return sql, [processors[key](params[key]) if key in processors else params[key]
                 for key in positions], params


def _rowcount(status: str) -> int:
    """Rows a command touched, from its status ("UPDATE 3", "INSERT 0 1")."""
    last = status.rpartition(" ")[2]
    return int(last) if last.isdigit() else -1


def _python_defaults(compiled: Any, params: dict[str, Any]) -> None:
    """Python-side column defaults (`default=dict`), filled in as SQLAlchemy does before it
    sends an INSERT or UPDATE that leaves their columns out."""
    key_of = compiled._within_exec_param_key_getter
    for column in compiled.insert_prefetch:
        params[key_of(column)] = _default_value(column.default)
    for column in compiled.update_prefetch:
        params[key_of(column)] = _default_value(column.onupdate)


def _default_value(default: Any) -> Any:
    if default is None:
        return None
    if default.is_scalar:
        return default.arg
    if default.is_callable:
        return default.arg(None)
    raise NotImplementedError(f"column default {default!r} (not a scalar or a callable)")


class FastPool:
    """asyncpg connections for a Database, and what it knows of the statements it ran
    (compiled statements, their shapes).

    A pool of its own rather than asyncpg's: taking a connection from asyncpg's pool and
    giving it back costs ~0.1 ms of CPU (a task per release, a timeout per acquire, a proxy
    object), as much as the statement itself. Here: at most `size` connections, opened as
    they are needed and kept; one the server closed is replaced when it is next taken
    (asyncpg notices the closed socket without a round trip); one given back broken, in a
    transaction or after an interrupted statement is closed, never reused.
    """

    def __init__(self, engine: AsyncEngine, size: int, *, wait: float = 30.0) -> None:
        dialect = engine.dialect
        _args, opts = dialect.create_connect_args(engine.url)
        for key in _ADAPTER_ONLY:
            opts.pop(key, None)
        self._connect = opts
        self._engine = engine
        self.dialect = dialect
        self.size = size
        self.wait = wait
        self.compiled_cache: LRUCache[Any, Any] = LRUCache(500)
        self.shapes: dict[Any, _Shape] = {}
        self._dbapi = dialect.loaded_dbapi
        self._ready = False
        self._opening = asyncio.Lock()
        self._idle: list[asyncpg.Connection] = []
        self._open = 0  # connections open or being opened, idle ones included
        # callers waiting for a connection: given one, or None (a slot to open one in)
        self._waiters: deque[asyncio.Future[asyncpg.Connection | None]] = deque()

    async def _learn_server(self) -> None:
        """The dialect learns the server (version, capabilities) once, through SQLAlchemy's
        engine, as it would on its own first connection."""
        async with self._opening:
            if not self._ready:
                async with self._engine.connect():
                    pass
                self._ready = True

    async def _acquire(self) -> asyncpg.Connection:
        if not self._ready:
            await self._learn_server()
        while self._idle:
            raw = self._idle.pop()
            if not raw.is_closed():
                return raw
            self._open -= 1
        if self._open >= self.size:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout(self.wait):
                    given = await waiter
            except BaseException as exc:
                if waiter.done() and not waiter.cancelled():
                    self._hand_on(waiter.result())  # given, but too late: to the next one
                else:
                    self._waiters.remove(waiter)
                if isinstance(exc, TimeoutError):
                    raise PoolTimeout(f"no free connection in {self.wait:g} s "
                                      f"({self.size} in use)") from None
                raise
            if given is not None:
                return given
        self._open += 1
        raw = None
        try:
            raw = await asyncpg.connect(statement_cache_size=512, **self._connect)
            await _codecs(raw)
        except BaseException:
            if raw is not None:
                raw.terminate()
            self._open -= 1
            self._hand_on(None)
            raise
        return raw

    def _release(self, raw: asyncpg.Connection, *, reusable: bool) -> None:
        if reusable and not raw.is_closed() and not raw.is_in_transaction():
            self._hand_on(raw)
            return
        if not raw.is_closed():
            raw.terminate()
        self._open -= 1
        self._hand_on(None)

    def _hand_on(self, raw: asyncpg.Connection | None) -> None:
        """A connection given back, or a slot freed (None): to the first waiter, else idle."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(raw)
                return
        if raw is not None:
            self._idle.append(raw)

    @asynccontextmanager
    async def connection(self, *, transaction: bool = False) -> AsyncIterator[FastConn]:
        """A pooled connection, in a transaction if asked (committed on success, rolled
        back on any error). A connection that broke, or whose statement was interrupted
        (a cancelled request), is closed, not given back for reuse."""
        try:
            raw = await self._acquire()
        except _DRIVER_ERRORS as exc:
            raise self.translate(exc, None) from exc
        reusable = False
        try:
            if transaction:
                try:
                    tx = raw.transaction()
                    await tx.start()
                except _DRIVER_ERRORS as exc:
                    raise self.translate(exc, "BEGIN") from exc
                try:
                    yield FastConn(raw, self)
                except Exception:
                    if not raw.is_closed():
                        # a rollback that fails leaves the transaction open: not reused
                        with suppress(*_DRIVER_ERRORS):
                            await tx.rollback()
                    reusable = True
                    raise
                try:
                    await tx.commit()
                except _DRIVER_ERRORS as exc:
                    raise self.translate(exc, "COMMIT") from exc
            else:
                try:
                    yield FastConn(raw, self)
                except Exception:
                    reusable = True  # a statement that failed leaves the connection idle
                    raise
            reusable = True
        finally:
            self._release(raw, reusable=reusable)

    async def learn(self, raw: asyncpg.Connection, compiled: Any, sql: str) -> _Shape:
        """A compiled statement's shape, from the server's description of it (whether it
        returns rows; the result columns' types, which SQLAlchemy's result processors
        depend on)."""
        prepared = await raw.prepare(sql)
        attributes = prepared.get_attributes()
        for attr, col in zip(attributes, compiled._result_columns, strict=False):
            if col[3]._cached_result_processor(self.dialect, attr.type.oid) is not None:
                # asyncpg's own value would differ from SQLAlchemy's: not supported (no
                # column type of the services' schemas has one; test_pgfast checks each)
                raise NotImplementedError(f"pgfast: column {attr.name} of type {col[3]!r} "
                                          "needs a result processor")
        shape = _Shape(returns_rows=bool(attributes),
                       implicit_returning=bool(compiled.isinsert and compiled.implicit_returning))
        if len(self.shapes) > 2000:  # statements built on the fly: keep the set bounded
            self.shapes.clear()
        self.shapes[compiled] = shape
        return shape

    def translate(self, exc: BaseException, sql: str | None) -> BaseException:
        """asyncpg's error as SQLAlchemy's (IntegrityError, OperationalError, ...), exactly
        as its asyncpg adapter would raise it, parameters hidden (they may hold secrets)."""
        dbapi = self._dbapi
        orig: BaseException = exc
        for cls in type(exc).__mro__:
            mapped = dbapi._asyncpg_error_translate.get(cls)
            if mapped is not None:
                orig = mapped(exc.args[0] if exc.args else str(exc), exc)
                orig.__cause__ = exc
                break
        else:
            if isinstance(exc, OSError | TimeoutError):
                orig = dbapi.OperationalError(str(exc) or type(exc).__name__)
                orig.__cause__ = exc
        disconnect = isinstance(exc, _BROKEN)
        return DBAPIError.instance(sql, None, orig, dbapi.Error, hide_parameters=True,
                                   connection_invalidated=disconnect, dialect=self.dialect)

    def status(self) -> tuple[int, int]:
        """Connections in use and idle."""
        return self._open - len(self._idle), len(self._idle)

    async def close(self) -> None:
        """Close the idle connections; those in use are closed when given back."""
        idle, self._idle = self._idle, []
        self._open -= len(idle)
        for raw in idle:
            try:
                await raw.close(timeout=5)
            except _DRIVER_ERRORS:
                raw.terminate()


async def _codecs(raw: asyncpg.Connection) -> None:
    """JSON as SQLAlchemy's asyncpg adapter sets it up: bind values arrive serialised by the
    JSON type's bind processor; results are decoded here."""
    await raw.set_type_codec("json", encoder=str.encode, decoder=json.loads,
                             schema="pg_catalog", format="binary")
    await raw.set_type_codec("jsonb", encoder=lambda s: b"\x01" + s.encode(),
                             decoder=lambda b: json.loads(b[1:]),
                             schema="pg_catalog", format="binary")
