"""SQLite statements run on the sqlite3 connection directly: compiled by SQLAlchemy, executed
without its engine (the SQLite counterpart of pgfast).

Why: a statement through SQLAlchemy's Connection.execute (execution context, cursor result
metadata, Row objects, events) costs this process ~70 µs of CPU more than the sqlite3 call it
makes: a node read by UUID 105 -> 66 µs, a one-row UPDATE with its commit 101 -> 72 µs (the
rest is sqlite3 and the JSON and DATETIME result processors); the 200-node inspection flow runs
~50 statements per node. The queries stay
SQLAlchemy Core: each statement is compiled once per shape, in the engine's own compiled cache;
its parameters are rendered as SQLAlchemy renders them (pgfast's `_positional`: bind
processors, Python-side column defaults, expanding IN lists); its result values go through
the same result processors (SQLite's DATETIME strings, JSON text, booleans); the inserted
primary key is SQLAlchemy's own (its lastrowid getter); errors are the SQLAlchemy exceptions
the callers catch. The connection, its transaction and its commit stay SQLAlchemy's.

Anything else takes SQLAlchemy's own path, unchanged: executemany, and results whose columns
SQLAlchemy would match by name rather than by position (textual SQL).

Like pgfast it relies on SQLAlchemy internals (besides pgfast's: `_result_columns`,
`_ordered_columns`, `_textual_ordered_columns`, the compiled statement's primary key getters,
the engine's `_compiled_cache`), under the same version pin; tests/functional/common/
test_litefast.py runs every kind of statement side by side with SQLAlchemy's engine.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from ironsight.common.pgfast import FastResult, render


class LiteRow(tuple[Any, ...]):
    """A result row: a tuple that is also read by column name, as SQLAlchemy's Row
    (`row.name`, `row._mapping`) and asyncpg's Record (`row["name"]`, `items()`) are, so
    that the services' code reads rows the same way on either database."""

    __slots__ = ()
    _index: dict[str, int] = {}
    _keys: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if type(key) is str:
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def __getattr__(self, name: str) -> Any:
        try:
            return tuple.__getitem__(self, self._index[name])
        except KeyError:
            raise AttributeError(name) from None

    def keys(self) -> tuple[str, ...]:
        return self._keys

    def values(self) -> tuple[Any, ...]:
        return tuple(self)

    def items(self) -> list[tuple[str, Any]]:
        return list(zip(self._keys, self, strict=True))

    def get(self, key: str, default: Any = None) -> Any:
        index = self._index.get(key)
        return default if index is None else tuple.__getitem__(self, index)

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


@dataclass(frozen=True)
class _Rows:
    """How a compiled statement's rows are built: their class (names) and the result
    processors to apply, by column index."""

    row: type[LiteRow]
    processors: tuple[tuple[int, Any], ...]


_SLOW = object()  # a statement SQLAlchemy's own path runs (its results are name-matched)


class LiteStatements:
    """What one Database knows of the statements it ran: compiled statements (the engine's
    cache) and how their rows are built."""

    def __init__(self, connection_dialect: Any, compiled_cache: Any) -> None:
        self.dialect = connection_dialect
        self.compiled_cache = compiled_cache
        self.rows: dict[Any, Any] = {}

    def rows_of(self, compiled: Any, description: Any) -> _Rows:
        """How the rows of a compiled statement (whose columns SQLAlchemy matches by
        position) are built, learnt from its first result."""
        shape = self.rows.get(compiled)
        if not isinstance(shape, _Rows):
            shape = self._learn(compiled, description)
            if len(self.rows) > 2000:  # statements built on the fly: keep the map bounded
                self.rows.clear()
            self.rows[compiled] = shape
        return shape

    def _learn(self, compiled: Any, description: Any) -> _Rows:
        columns = compiled._result_columns
        if len(columns) != len(description):
            # SQLAlchemy would match them by name: not done here (no statement of the
            # services does this; tests/functional/common/test_litefast.py)
            raise NotImplementedError(f"litefast: {len(description)} result columns where "
                                      f"the statement names {len(columns)}")
        keys = tuple(column[0] for column in columns)
        index: dict[str, int] = {}
        for i, key in enumerate(keys):
            index.setdefault(key, i)
        processors = tuple(
            (i, processor) for i, column in enumerate(columns)
            if (processor := column[3]._cached_result_processor(self.dialect, description[i][1]))
            is not None)
        row = type("LiteRow", (LiteRow,), {"__slots__": (), "_index": index, "_keys": keys})
        return _Rows(row, processors)


def execute(conn: Connection, statements: LiteStatements, statement: Any,
            parameters: Any = None) -> Any:
    """Run `statement` on the SQLAlchemy connection `conn` (inside whatever transaction it
    has): a FastResult, or SQLAlchemy's own CursorResult for what is not done here."""
    if parameters is not None and not isinstance(parameters, dict):
        if len(parameters) != 1:  # executemany: SQLAlchemy's path
            return conn.execute(statement, parameters)
        parameters = parameters[0]
    compiled, extracted, collected, _hit = statement._compile_w_cache(
        dialect=statements.dialect, compiled_cache=statements.compiled_cache,
        column_keys=sorted(parameters) if parameters else [], for_executemany=False,
        schema_translate_map=None)
    known = statements.rows.get(compiled)
    if known is _SLOW:
        return conn.execute(statement, parameters)
    if known is None and not _positional_rows(compiled):
        statements.rows[compiled] = _SLOW  # textual SQL: its columns are matched by name
        return conn.execute(statement, parameters)
    sql, args, params = render(compiled, parameters, extracted, collected)
    raw = conn.connection.dbapi_connection
    assert raw is not None
    try:
        cursor = raw.execute(sql, args)
        description = cursor.description
        fetched = cursor.fetchall() if description is not None else None
    except sqlite3.Error as exc:
        raise _translate(conn, statements, exc, sql) from exc
    if fetched is None:
        inserted = None
        if compiled.isinsert:
            inserted = tuple(compiled._inserted_primary_key_from_lastrowid_getter(
                cursor.lastrowid if compiled.postfetch_lastrowid else None, params))
        return FastResult([], cursor.rowcount, inserted)
    shape = known or statements.rows_of(compiled, description)
    row, processors = shape.row, shape.processors
    if processors:
        rows = []
        for values in fetched:
            values = list(values)
            for i, processor in processors:
                values[i] = processor(values[i])
            rows.append(row(values))
    else:
        rows = [row(values) for values in fetched]
    if compiled.isinsert and compiled.implicit_returning and rows:
        inserted = tuple(compiled._inserted_primary_key_from_returning_getter(rows[0], params))
        return FastResult(rows, len(rows), inserted)
    return FastResult(rows, cursor.rowcount if compiled.isupdate or compiled.isdelete
                      else len(rows))


def _positional_rows(compiled: Any) -> bool:
    """Whether the rows the statement may return are matched to its compiled columns by
    position, as SQLAlchemy does for a construct's own columns (a SELECT, DML's RETURNING;
    DML without RETURNING has none): not textual SQL, whose columns it matches by name."""
    return bool(not compiled.isplaintext and compiled._ordered_columns
                and not compiled._textual_ordered_columns)


def _translate(conn: Connection, statements: LiteStatements, exc: sqlite3.Error,
               sql: str) -> BaseException:
    """sqlite3's error as SQLAlchemy's (IntegrityError, OperationalError, ...), parameters
    hidden (they may hold secrets); a connection the dialect deems lost is invalidated, as
    SQLAlchemy's own error handling does."""
    dialect = statements.dialect
    raw = conn.connection.dbapi_connection
    disconnect = bool(dialect.is_disconnect(exc, raw, None))
    if disconnect:
        conn.invalidate(exc)
    return DBAPIError.instance(sql, None, exc, sqlite3.Error, hide_parameters=True,
                               connection_invalidated=disconnect, dialect=dialect)
