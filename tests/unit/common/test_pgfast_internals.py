"""pgfast's use of SQLAlchemy's private internals, without a server: every statement shape
the services send through it is compiled and rendered the way pgfast renders it, with the
asyncpg dialect, so that a SQLAlchemy upgrade that moves an internal fails `make test`
instead of production (the side-by-side checks against a real server are in
tests/functional/common/test_pgfast.py).

The internals (common/pgfast.py): `ClauseElement._compile_w_cache`, `Compiled.construct_params`
with `_collected_params`, `Compiled._bind_processors`,
`Compiled._process_parameters_for_postcompile`, `Compiled._within_exec_param_key_getter`,
`Compiled._result_columns` with `TypeEngine._cached_result_processor`, and the adapter's
`_asyncpg_error_translate`.

The shapes: every statement built at import time by the services' modules (module-level,
and in module-level dicts), and every statement factory, each with the keys it is called
with (a node's, a port's, an introspection's columns)."""

from __future__ import annotations

import datetime as dt
import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    Integer,
    String,
    Text,
    bindparam,
    insert,
    select,
)
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.elements import ClauseElement

import ironsight
from ironsight.baremetal.db import api as bmapi
from ironsight.baremetal.db import combined
from ironsight.baremetal.db.models import metadata as bm_metadata
from ironsight.baremetal.db.models import nodes, ports
from ironsight.common import pgfast
from ironsight.discoverd import node_cache, states
from ironsight.discoverd.db.models import introspections
from ironsight.discoverd.db.models import metadata as di_metadata

# PostgreSQL's type OIDs for the column types of both services' schemas
OIDS = {JSON: 114, DateTime: 1114, Boolean: 16, Integer: 23, String: 1043, Text: 25,
        Float: 701}
AT = dt.datetime(2026, 12, 6, 12, 0, 0)


@pytest.fixture(scope="module")
def pool() -> Iterator[pgfast.FastPool]:
    """pgfast's pool on an engine that never connects (nothing here talks to a server)."""
    engine = create_async_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")
    yield pgfast.FastPool(engine, size=1)


def _value(bind: Any) -> Any:
    if bind.expanding:
        return [_scalar(bind.type), _scalar(bind.type)]
    return _scalar(bind.type)


def _scalar(type_: Any) -> Any:
    for kind, value in ((JSON, {"a": [1]}), (DateTime, AT), (Boolean, True), (Integer, 7),
                        (Float, 1.5), (String, "x"), (Text, "x")):
        if isinstance(type_, kind):
            return value
    return "x"


def _render(pool: pgfast.FastPool, statement: Any, params: dict[str, Any] | None = None,
            many: bool = False) -> tuple[str, list[Any]]:
    """What FastConn.execute does before it sends a statement: compile it through the
    dialect's cache, fill in its parameters, render them positionally."""
    compiled, extracted, collected, _hit = statement._compile_w_cache(
        dialect=pool.dialect, compiled_cache=pool.compiled_cache,
        column_keys=sorted(params) if params else [], for_executemany=many,
        schema_translate_map=None)
    given = dict(params or {})
    for name, bind in compiled.binds.items():
        key = bind.key
        if key not in given and bind.callable is None and bind.value is None \
                and not name.startswith("%("):
            given[key] = _value(bind)
    sql, args = pgfast._positional(compiled, given, extracted, collected)
    for column in getattr(compiled, "_result_columns", ()):
        type_ = column[3]
        oid = next((o for kind, o in OIDS.items() if isinstance(type_, kind)), None)
        assert type_._cached_result_processor(pool.dialect, oid) is None, (
            f"{type_!r}: a result processor pgfast does not apply")
    return sql, args


def _modules() -> Iterator[Any]:
    for found in pkgutil.walk_packages(ironsight.__path__, "ironsight."):
        name = found.name
        if any(part in name for part in (".lab", ".cli", ".agent", ".ramdisk", "migrations")):
            continue
        yield importlib.import_module(name)


def _prebuilt() -> list[tuple[str, Any]]:
    """Statements the services build at import time (module-level, or in module dicts)."""
    found = []
    for module in _modules():
        for attr, value in vars(module).items():
            values = value.items() if isinstance(value, dict) else [(None, value)]
            for key, each in values:
                if "sqlite" in str(key):  # SQLite's own statements never reach pgfast
                    continue
                if isinstance(each, Executable) and isinstance(each, ClauseElement):
                    found.append((f"{module.__name__}.{attr}[{key}]", each))
    return found


PREBUILT = _prebuilt()
# Inserts rendered with only some of their columns: SQLAlchemy warns of missing keys
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


def test_the_services_build_statements_at_import_time() -> None:
    names = {name.rsplit("[", 1)[0] for name, _ in PREBUILT}
    assert "ironsight.baremetal.db.api._INSERT_NODE" in names
    assert len(PREBUILT) > 30


@pytest.mark.parametrize(("name", "statement"), PREBUILT, ids=[n for n, _ in PREBUILT])
def test_every_prebuilt_statement_renders_as_pgfast_sends_it(
        pool: pgfast.FastPool, name: str, statement: Any) -> None:
    sql, args = _render(pool, statement)
    assert sql and all("%(" not in part for part in sql.split("'"))  # positional: $1, $2...
    assert sql.count("$") >= len(args) or not args


def _node_keys() -> tuple[str, ...]:
    return tuple(sorted(c.name for c in nodes.c if c.name != "id"))


def _port_keys() -> tuple[str, ...]:
    return tuple(sorted(c.name for c in ports.c if c.name not in ("id", "node_id")))


FACTORIES = [
    ("combined.update_locked_node", lambda: combined.update_locked_node(("name", "extra"))),
    ("combined.update_locked_node free", lambda: combined.update_locked_node(("name",), True)),
    ("combined.insert_node", lambda: combined.insert_node(_node_keys())),
    ("combined.insert_port", lambda: combined.insert_port(_port_keys(), "uuid")),
    ("bmapi._update_statement", lambda: bmapi._update_statement(nodes, ("name", "extra"))),
    ("bmapi._update_statement fenced", lambda: bmapi._update_statement(nodes, ("name",),
                                                                       True, True)),
    ("bmapi._unlocked_port_update", lambda: bmapi._unlocked_port_update(("extra",))),
    ("node_cache._start_new_statement", node_cache._start_new_statement),
    ("node_cache._accept_statement", lambda: node_cache._accept_statement(
        ("owner", "state", "updated_at"), True)),
    *((f"node_cache._transition_statement {event}",
       (lambda event=event: node_cache._transition_statement(
           event, ("state", "updated_at"), True, 2)))
      for event in states.ALLOWED_FROM),
]


@pytest.mark.parametrize(("name", "factory"), FACTORIES, ids=[n for n, _ in FACTORIES])
def test_every_statement_factory_renders_as_pgfast_sends_it(
        pool: pgfast.FastPool, name: str, factory: Any) -> None:
    sql, args = _render(pool, factory())
    assert args and "$1" in sql


def test_an_expanding_in_list_is_rendered_one_parameter_per_item(
        pool: pgfast.FastPool) -> None:
    statement = select(introspections.c.uuid).where(
        introspections.c.uuid.in_(bindparam("uuids", expanding=True)))
    sql, args = _render(pool, statement, {"uuids": ["a", "b", "c"]})
    assert args == ["a", "b", "c"] and "$3" in sql


def test_python_side_defaults_are_filled_in_as_sqlalchemy_does(pool: pgfast.FastPool) -> None:
    _, args = _render(pool, insert(nodes), {"uuid": "u", "driver": "fake",
                                              "provision_state": "enroll",
                                              "created_at": AT})
    assert "{}" in [a for a in args if isinstance(a, str)]  # JSON columns' default=dict


def test_an_executemany_renders_each_row(pool: pgfast.FastPool) -> None:
    compiled, extracted, collected, _ = insert(ports)._compile_w_cache(
        dialect=pool.dialect, compiled_cache=pool.compiled_cache,
        column_keys=["address", "node_id", "uuid", "created_at"], for_executemany=True,
        schema_translate_map=None)
    rows = [{"address": f"52:54:00:00:00:0{i}", "node_id": i, "uuid": f"u{i}",
             "created_at": AT} for i in range(3)]
    rendered = [pgfast._positional(compiled, r, extracted, collected)[1] for r in rows]
    assert all(f"52:54:00:00:00:0{i}" in args for i, args in enumerate(rendered))


def test_no_column_type_of_either_schema_needs_a_result_processor(
        pool: pgfast.FastPool) -> None:
    for metadata in (bm_metadata, di_metadata):
        for table in metadata.tables.values():
            for column in table.c:
                oid = next((o for kind, o in OIDS.items() if isinstance(column.type, kind)),
                           None)
                assert column.type._cached_result_processor(pool.dialect, oid) is None, (
                    f"{table.name}.{column.name}")


def test_asyncpgs_errors_become_sqlalchemys(pool: pgfast.FastPool) -> None:
    unique = asyncpg.exceptions.UniqueViolationError("duplicate key value")
    assert isinstance(pool.translate(unique, "INSERT ..."), IntegrityError)
    assert isinstance(pool.translate(ConnectionResetError("gone"), None), OperationalError)
