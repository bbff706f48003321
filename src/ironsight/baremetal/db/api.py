"""Queries on the bare-metal service's tables. Every function takes an open connection, so
callers decide the transaction; nothing here commits."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    String,
    and_,
    bindparam,
    cast,
    delete,
    exists,
    false,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from ironsight.baremetal.db import combined
from ironsight.baremetal.db.models import (
    allocations,
    chassis,
    conductors,
    history,
    node_traits,
    nodes,
    portgroups,
    ports,
    volume_connectors,
    volume_targets,
)
from ironsight.common.auth.identity import acting_user
from ironsight.common.bmc import hosts_text
from ironsight.common.clock import utcnow
from ironsight.common.db import Conn
from ironsight.common.exceptions import Conflict, InvalidParameterValue, NotFound
from ironsight.common.ids import is_uuid_like, new_uuid

Row = dict[str, Any]

NODE_COLUMNS = {c.name: c for c in nodes.c}
PORT_COLUMNS = {c.name: c for c in ports.c}


def _duplicate(exc: IntegrityError, what: str, values: Row) -> Conflict:
    text = str(exc.orig).lower()
    if "name" in text and values.get("name"):
        return Conflict(f"A node with name {values['name']} already exists.")
    if "address" in text and values.get("address"):
        return Conflict(f"A port with MAC address {values['address']} already exists.")
    if "uuid" in text and values.get("uuid"):
        return Conflict(f"A {what} with UUID {values['uuid']} already exists.")
    return Conflict(f"Conflicting {what}: {exc.orig}")


# --- nodes ----------------------------------------------------------------------------------


# Statements built once: building SQLAlchemy constructs per request costs more than the query.
_INSERT_NODE = insert(nodes)
_INSERT_PORT = insert(ports)
_INSERT_HISTORY = insert(history)


def _defaults(table: Any) -> Row:
    """Every column's value when not given: its scalar default, else NULL (all columns are
    always given, so that one prepared statement serves every insert)."""
    return {c.name: (c.default.arg if c.default is not None and c.default.is_scalar else None)
            for c in table.c if c.name != "id"}


_NODE_DEFAULTS: Row = _defaults(nodes)
_PORT_DEFAULTS: Row = _defaults(ports)


def _full_row(defaults: Row, values: Row) -> Row:
    row = {**defaults, **values}
    for key, value in row.items():
        if value is None and key in _JSON_DEFAULTS:
            row[key] = {}
    return row


_JSON_DEFAULTS = {"driver_info", "driver_internal_info", "properties", "extra",
                  "instance_info", "local_link_connection"}


def one_statement(conn: Conn) -> bool:
    """Whether a write and its history row go in one statement (PostgreSQL, see combined.py);
    elsewhere they are two, in the caller's transaction (Database.single on SQLite is one)."""
    return bool(conn.dialect.name == "postgresql")


def history_row(node_id: int | None, event: str, *, severity: str = "INFO",
                event_type: str = "provisioning", conductor: str | None = None) -> Row:
    return {"uuid": new_uuid(), "node_id": node_id, "created_at": utcnow(),
            "severity": severity, "event_type": event_type, "event": event,
            "conductor": conductor, "user": acting_user()}


async def _insert(conn: Conn, stmt: Any, defaults: Row, values: Row,
                  what: str) -> Row:
    row = _full_row(defaults, {"created_at": utcnow(), "uuid": new_uuid(), **values})
    try:
        result = await conn.execute(stmt, row)
    except IntegrityError as exc:
        raise _duplicate(exc, what, row) from None
    assert result.inserted_primary_key is not None
    row["id"] = result.inserted_primary_key[0]
    return row


async def _combined(conn: Conn, stmt: Any, row: Row, event: Row, what: str,
                    **params: Any) -> Any:
    """Run a combined statement (combined.py) on `row`'s values and history row `event`: its
    first row, or None."""
    params.update({f"_v_{key}": value for key, value in row.items()},
                  **combined.history_params(event))
    try:
        return (await conn.execute(stmt, params)).first()
    except IntegrityError as exc:
        raise _duplicate(exc, what, row) from None


def _with_bmc_hosts(values: Row) -> Row:
    """A write of driver_info writes the BMC hosts it names too (models.py, bmc_hosts)."""
    if "driver_info" not in values:
        return values
    return {**values, "bmc_hosts": hosts_text(values["driver_info"])}


async def create_node(conn: Conn, values: Row, event: Row | None = None) -> Row:
    """Insert the node, and with `event` (a history_row) its history row too."""
    values = _with_bmc_hosts({"maintenance": False, "lock_epoch": 0, **values})
    if event is None or not one_statement(conn):
        row = await _insert(conn, _INSERT_NODE, _NODE_DEFAULTS, values, "node")
        if event is not None:
            await _add_history_row(conn, {**event, "node_id": row["id"]})
        return row
    row = _full_row(_NODE_DEFAULTS, {"created_at": utcnow(), "uuid": new_uuid(), **values})
    found = await _combined(conn, combined.insert_node(tuple(row)), row, event, "node")
    row["id"] = found[0]
    return row


def _by_ident(ident: str) -> tuple[str, str]:
    """(which column, its value): a node is named by UUID or by name."""
    return ("uuid", ident.lower()) if is_uuid_like(ident) else ("name", ident)


# Hot statements, built once with bound parameters (see the note on _INSERT_NODE).
_GET = {key: select(nodes).where(nodes.c[key] == bindparam("ident")) for key in ("uuid", "name")}
# Taking a lock raises the node's lock epoch: a write under an older epoch is refused even
# when the same conductor holds the node again (a paused conductor that came back).
_RESERVE = {key: update(nodes).where(nodes.c[key] == bindparam("ident"),
                                     nodes.c.reservation.is_(None))
            .values(reservation=bindparam("_lock_owner"), lock_epoch=nodes.c.lock_epoch + 1)
            .returning(*nodes.c)
            for key in ("uuid", "name")}
_HELD = (nodes.c.reservation == bindparam("_owner"), nodes.c.lock_epoch == bindparam("_epoch"))
# A node written without its lock: nobody holds it, and nobody took it or wrote it so since it
# was read at `_epoch` (such a write raises the epoch too, as a lock does).
_FREE = (nodes.c.reservation.is_(None), nodes.c.lock_epoch == bindparam("_epoch"))
_RELEASE = (update(nodes).where(nodes.c.id == bindparam("_row_id"), *_HELD)
            .values(reservation=None))
# A write to the node's ports or history under its lock first checks, in the same
# transaction, that the lock is still held (and on PostgreSQL locks the row until commit).
_FENCE = (update(nodes).where(nodes.c.id == bindparam("_row_id"), *_HELD)
          .values(lock_epoch=nodes.c.lock_epoch))


@functools.lru_cache(maxsize=256)
def _update_statement(table: Any, keys: tuple[str, ...], fenced: bool = False,
                      free: bool = False) -> Any:
    stmt = update(table).where(table.c.id == bindparam("_row_id"))
    if fenced:
        stmt = stmt.where(*(_FREE if free else _HELD))
    return stmt.values({key: bindparam(f"_v_{key}") for key in keys})


async def _update(conn: Conn, table: Any, row_id: int, values: Row, what: str,
                  held: tuple[str | None, int] | None = None) -> bool:
    """Update one row by id with a statement built once per set of columns; with `held`
    (owner, epoch), a node only while that lock is held (owner None: while it is free at
    that epoch). Whether a row was written."""
    params: Row = {"_row_id": row_id}
    if held is not None:
        params["_owner"], params["_epoch"] = held
    fenced, free = held is not None, held is not None and held[0] is None
    return await _write(conn, lambda keys: _update_statement(table, keys, fenced, free),
                        values, what, params)


async def _write(conn: Conn, statement: Any, values: Row, what: str, params: Row) -> bool:
    """Run the UPDATE `statement(keys)` builds for the columns of `values` (with
    `updated_at`), `_v_*` their parameters; a duplicate is the API's error naming `what`.
    Whether a row was written."""
    values = {"updated_at": utcnow(), **values}
    params = {**params, **{f"_v_{key}": value for key, value in values.items()}}
    try:
        result = await conn.execute(statement(tuple(sorted(values))), params)
    except IntegrityError as exc:
        raise _duplicate(exc, what, values) from None
    return bool(result.rowcount)


async def get_node(conn: Conn, ident: str) -> Row:
    key, value = _by_ident(ident)
    row = (await conn.execute(_GET[key], {"ident": value})).mappings().first()
    if row is None:
        raise NotFound(f"Node {ident} could not be found.")
    return dict(row)


async def _page(conn: Conn, table: Any, query: Any, conds: list[Any], *,
                limit: int, marker: str | None, sort_key: str, sort_dir: str,
                what: str) -> list[Row]:
    """Keyset pagination: rows after `marker` in (sort_key, id) order, at most `limit`."""
    sort_col = table.c[sort_key]
    asc = sort_dir == "asc"
    if marker is not None:
        mrow = (await conn.execute(
            select(table.c.id, sort_col).where(table.c.uuid == marker))).first()
        if mrow is None:
            raise InvalidParameterValue(f"marker: {what} {marker} could not be found.")
        mid, mval = mrow
        after_id = table.c.id > mid if asc else table.c.id < mid
        if sort_key == "id":
            conds.append(after_id)
        elif mval is None:  # NULLs sort first ascending: everything non-NULL comes after
            conds.append(or_(sort_col.is_not(None), and_(sort_col.is_(None), after_id)))
        else:
            conds.append(or_(sort_col > mval if asc else sort_col < mval,
                             and_(sort_col == mval, after_id)))
    if conds:
        query = query.where(and_(*conds))
    order = [sort_col.asc() if asc else sort_col.desc()]
    if sort_key != "id":
        order.append(table.c.id.asc() if asc else table.c.id.desc())
    return [dict(r) for r in (await conn.execute(query.order_by(*order).limit(limit))).mappings()]


async def uuids_by_id(conn: Conn, table: Any, row_ids: Iterable[int | None]) -> dict[int, str]:
    """Each row's UUID, by id: what a node shows of the rows its ids point to (its
    `allocation_uuid`, `chassis_uuid`)."""
    ids = [i for i in set(row_ids) if i is not None]
    if not ids:
        return {}
    rows = await conn.execute(select(table.c.id, table.c.uuid).where(table.c.id.in_(ids)))
    return {int(i): str(u) for i, u in rows}


async def list_nodes(conn: Conn, *, columns: Sequence[Any], filters: Row,
                     limit: int, marker: str | None, sort_key: str, sort_dir: str) -> list[Row]:
    conds: list[ColumnElement[bool]] = []
    for key, value in filters.items():
        if key == "associated":
            col = nodes.c.instance_uuid
            conds.append(col.is_not(None) if value else col.is_(None))
        elif key == "reserved":
            col = nodes.c.reservation
            conds.append(col.is_not(None) if value else col.is_(None))
        elif key == "auto_discovered":
            col = nodes.c.discovery
            conds.append(col.is_not(None) if value else col.is_(None))
        elif key == "sharded":
            col = nodes.c.shard
            conds.append(col.is_not(None) if value else col.is_(None))
        elif key == "chassis_uuid":
            conds.append(nodes.c.chassis_id == select(chassis.c.id).where(
                chassis.c.uuid == value).scalar_subquery())
        elif key == "description_contains":
            conds.append(nodes.c.description.contains(value, autoescape=True))
        elif key in ("project", "_project"):  # _project: the caller's, besides ?project=
            conds.append(or_(nodes.c.owner == value, nodes.c.lessee == value))
        elif key == "fault":
            conds.append(false())  # no node has one: nothing records faults
        elif key == "shard":  # a list (Ironic's string_list): any of them
            conds.append(nodes.c.shard.in_(list(value)))
        else:
            conds.append(NODE_COLUMNS[key] == value)
    return await _page(conn, nodes, select(*columns), conds, limit=limit, marker=marker,
                       sort_key=sort_key, sort_dir=sort_dir, what="node")


def project_nodes(project: str) -> Any:
    """The IDs of the nodes a project owns or leases (a subquery)."""
    return select(nodes.c.id).where(or_(nodes.c.owner == project, nodes.c.lessee == project))


# As the database's text: compared by the caller, never parsed (10,000 rows in one answer).
_STAMP = cast(func.coalesce(nodes.c.updated_at, nodes.c.created_at), String)
_NODE_STAMPS = select(nodes.c.uuid, _STAMP)
_NODE_STAMPS_SINCE = _NODE_STAMPS.where(or_(nodes.c.updated_at >= bindparam("since"),
                                            nodes.c.created_at >= bindparam("since")))
_NODE_COUNT = select(func.count()).select_from(nodes)


@dataclass(frozen=True)
class Stamps:
    nodes: list[tuple[str, str]]  # (uuid, when it last changed), all or since a time
    count: int  # how many nodes there are


async def node_stamps(conn: Conn, since: dt.datetime | None = None) -> Stamps:
    """Every node's UUID and when it last changed, or those of the nodes changed or created
    at or after `since` (by index), with how many nodes there are (fleet queries' change
    detection: a count that differs tells of deletions)."""
    if since is None:
        rows = (await conn.execute(_NODE_STAMPS)).all()
    else:
        rows = (await conn.execute(_NODE_STAMPS_SINCE, {"since": since})).all()
    count = (await conn.execute(_NODE_COUNT)).scalar_one()
    return Stamps([(str(u), str(w)) for u, w in rows], int(count))


async def shard_counts(conn: Conn) -> list[tuple[str | None, int]]:
    """How many nodes each shard has (None: the nodes in none), most first."""
    query = select(nodes.c.shard, func.count()).group_by(nodes.c.shard)
    found = [(shard, int(count)) for shard, count in await conn.execute(query)]
    return sorted(found, key=lambda item: (-item[1], item[0] or ""))


async def update_node(conn: Conn, node_id: int, values: Row) -> None:
    await _update(conn, nodes, node_id, _with_bmc_hosts(values), "node")


async def update_locked_node(conn: Conn, node_id: int, owner: str | None, epoch: int,
                             values: Row, event: Row | None = None) -> bool:
    """Update the node only while `owner` holds its lock of `epoch`, and with `event` (a
    history_row) add its history row; False (nothing written) when the lock is not held.
    `owner` None: a write without the lock, only while the node is unlocked and still at
    `epoch` (which it raises, as taking the lock would)."""
    values = _with_bmc_hosts(values)
    if owner is None:
        values = {**values, "lock_epoch": epoch + 1}
    if event is None or not one_statement(conn):
        if not await _update(conn, nodes, node_id, values, "node", (owner, epoch)):
            return False
        if event is not None:
            await _add_history_row(conn, {**event, "node_id": node_id})
        return True
    values = {"updated_at": utcnow(), **values}
    stmt = combined.update_locked_node(tuple(sorted(values)), free=owner is None)
    return await _combined(conn, stmt, values, event, "node", _row_id=node_id, _owner=owner,
                           _epoch=epoch) is not None


async def still_locked(conn: Conn, node_id: int, owner: str, epoch: int) -> bool:
    """Whether `owner` still holds the node's lock of `epoch` (see _FENCE)."""
    result = await conn.execute(_FENCE, {"_row_id": node_id, "_owner": owner, "_epoch": epoch})
    return bool(result.rowcount)


async def delete_node(conn: Conn, node_id: int) -> None:
    await conn.execute(delete(ports).where(ports.c.node_id == node_id))
    # what belongs to the node goes with it, as in Ironic; its allocation is released
    for table in (portgroups, volume_connectors, volume_targets, node_traits):
        await conn.execute(delete(table).where(table.c.node_id == node_id))
    await conn.execute(delete(allocations).where(allocations.c.node_id == node_id))
    await conn.execute(delete(history).where(history.c.node_id == node_id))
    await conn.execute(delete(nodes).where(nodes.c.id == node_id))


# --- reservations (node locks) --------------------------------------------------------------


async def reserve_node(conn: Conn, ident: str, owner: str) -> Row | None:
    """Take the lock atomically; None when someone else holds it (or the node is gone)."""
    key, value = _by_ident(ident)
    result = await conn.execute(_RESERVE[key], {"ident": value, "_lock_owner": owner})
    row = result.mappings().first()
    return dict(row) if row is not None else None


async def release_node(conn: Conn, node_id: int, owner: str, epoch: int) -> bool:
    """Give the lock back, if `owner` still holds it (never someone else's)."""
    result = await conn.execute(_RELEASE, {"_row_id": node_id, "_owner": owner,
                                           "_epoch": epoch})
    return bool(result.rowcount)


# --- ports ----------------------------------------------------------------------------------


async def create_port(conn: Conn, node: str, values: Row, event: Row) -> Row | None:
    """Insert a port on the node named `node` (UUID or name) and its history row `event` (a
    history_row); None when there is no such node."""
    key, ident = _by_ident(node)
    values = {"pxe_enabled": True, **values}
    if not one_statement(conn):
        found = (await conn.execute(_GET[key], {"ident": ident})).first()
        if found is None:
            return None
        row = await _insert(conn, _INSERT_PORT, _PORT_DEFAULTS,
                            {**values, "node_id": found.id}, "port")
        await _add_history_row(conn, {**event, "node_id": found.id})
        return row
    row = _full_row({k: v for k, v in _PORT_DEFAULTS.items() if k != "node_id"},
                    {"created_at": utcnow(), "uuid": new_uuid(), **values})
    found = await _combined(conn, combined.insert_port(tuple(row), key), row, event, "port",
                            _node=ident)
    if found is None:
        return None
    row["node_id"], row["id"] = found
    return row


# A port with its node's UUID, as the API shows it.
_PORT_SELECT = select(*ports.c, nodes.c.uuid.label("node_uuid"),
                      portgroups.c.uuid.label("portgroup_uuid")).select_from(
    ports.join(nodes, nodes.c.id == ports.c.node_id)
    .outerjoin(portgroups, portgroups.c.id == ports.c.portgroup_id))
_GET_PORT = _PORT_SELECT.where(ports.c.uuid == bindparam("uuid"))
_DELETE_PORT = delete(ports).where(ports.c.id == bindparam("port_id"))
_PORTS_OF_NODE = (_PORT_SELECT.where(ports.c.node_id == bindparam("node_id"))
                  .order_by(ports.c.id).limit(bindparam("limit")))
# A node and its ports: one row per port, or one without a port (its columns NULL).
_PORTS_OF_NAMED_NODE = {
    key: select(nodes.c.id.label("_node_id"), *ports.c, nodes.c.uuid.label("node_uuid"),
                portgroups.c.uuid.label("portgroup_uuid"))
    .select_from(nodes.outerjoin(ports, ports.c.node_id == nodes.c.id)
                 .outerjoin(portgroups, portgroups.c.id == ports.c.portgroup_id))
    .where(nodes.c[key] == bindparam("ident")).order_by(ports.c.id).limit(bindparam("limit"))
    for key in ("uuid", "name")}

# The same with the whole node: its columns on every row, the ports' as `p_<column>`.
_NODE_WITH_PORTS = {
    key: select(*nodes.c, *(c.label(f"p_{c.name}") for c in ports.c),
                portgroups.c.uuid.label("p_portgroup_uuid"))
    .select_from(nodes.outerjoin(ports, ports.c.node_id == nodes.c.id)
                 .outerjoin(portgroups, portgroups.c.id == ports.c.portgroup_id))
    .where(nodes.c[key] == bindparam("ident")).order_by(ports.c.id).limit(bindparam("limit"))
    for key in ("uuid", "name")}
_NODE_COLUMNS = tuple(c.name for c in nodes.c)
_PORT_COLUMNS = (*(c.name for c in ports.c), "portgroup_uuid")


async def node_with_ports(conn: Conn, ident: str, limit: int) -> tuple[Row, list[Row]]:
    """The node named `ident` (UUID or name) and its ports (id order, at most `limit`, each
    with `node_uuid` and `portgroup_uuid`), in one statement."""
    key, value = _by_ident(ident)
    rows = (await conn.execute(_NODE_WITH_PORTS[key],
                               {"ident": value, "limit": limit})).mappings().all()
    if not rows:
        raise NotFound(f"Node {ident} could not be found.")
    node = {k: rows[0][k] for k in _NODE_COLUMNS}
    found = [{**{k: r[f"p_{k}"] for k in _PORT_COLUMNS}, "node_uuid": node["uuid"]}
             for r in rows if r["p_id"] is not None]
    return node, found


async def get_port(conn: Conn, ident: str) -> Row:
    if not is_uuid_like(ident):
        raise NotFound(f"Port {ident} could not be found.")
    row = (await conn.execute(_GET_PORT, {"uuid": ident.lower()})).mappings().first()
    if row is None:
        raise NotFound(f"Port {ident} could not be found.")
    return dict(row)


async def port_by_address(conn: Conn, address: str) -> int | None:
    """The ID of the port with this MAC (lower case), or None."""
    found = await conn.execute(select(ports.c.id).where(ports.c.address == address))
    return found.scalar()


async def list_ports(conn: Conn, *, filters: Row, limit: int, marker: str | None,
                     sort_key: str, sort_dir: str) -> list[Row]:
    if set(filters) == {"node_id"} and marker is None and (sort_key, sort_dir) == ("id", "asc"):
        # The common case (a node's ports, as discoverd asks), from a prebuilt statement.
        result = await conn.execute(_PORTS_OF_NODE, {"node_id": filters["node_id"],
                                                     "limit": limit})
        return [dict(r) for r in result.mappings()]
    conds = [PORT_COLUMNS[key] == value for key, value in filters.items()
             if key not in ("shard", "project")]
    if "shard" in filters:  # the ports of the nodes in any of these shards
        conds.append(ports.c.node_id.in_(
            select(nodes.c.id).where(nodes.c.shard.in_(list(filters["shard"])))))
    if "project" in filters:  # the ports of the nodes the project owns or leases
        conds.append(ports.c.node_id.in_(project_nodes(filters["project"])))
    return await _page(conn, ports, _PORT_SELECT, conds, limit=limit, marker=marker,
                       sort_key=sort_key, sort_dir=sort_dir, what="port")


async def update_port(conn: Conn, port_id: int, values: Row) -> None:
    await _update(conn, ports, port_id, values, "port")


# A port written while its node is unlocked and the port is as it was read: the node row is
# share-locked by the check, so a lock taken meanwhile waits for the write, or, taken first,
# fails it; a concurrent change of the port fails it too (the writer reads it again).
_NODE_FREE = exists(select(nodes.c.id).where(nodes.c.id == bindparam("_node_id"),
                                             nodes.c.reservation.is_(None))
                    .with_for_update(read=True))


@functools.lru_cache(maxsize=64)
def _unlocked_port_update(keys: tuple[str, ...]) -> Any:
    return (update(ports)
            .where(ports.c.id == bindparam("_row_id"),
                   ports.c.updated_at.is_not_distinct_from(bindparam("_seen")), _NODE_FREE)
            .values({key: bindparam(f"_v_{key}") for key in keys}))


async def update_port_if_unlocked(conn: Conn, port: Row, values: Row) -> bool:
    """Update `port` (a row as read) in one statement without taking its node's lock: only
    while nobody holds that lock and the port is unchanged since it was read (what the lock
    would have ensured). Whether it was written."""
    return await _write(conn, _unlocked_port_update, values, "port", {
        "_row_id": port["id"], "_node_id": port["node_id"], "_seen": port["updated_at"]})


async def ports_of_node(conn: Conn, ident: str, limit: int) -> list[Row] | None:
    """The ports of the node named `ident` (UUID or name), in id order, in one statement (the
    node found with its ports); None when there is no such node."""
    key, value = _by_ident(ident)
    rows = (await conn.execute(_PORTS_OF_NAMED_NODE[key],
                               {"ident": value, "limit": limit})).mappings().all()
    if not rows:
        return None
    return [{k: v for k, v in r.items() if k != "_node_id"} for r in rows if r["id"] is not None]


async def delete_port(conn: Conn, port_id: int) -> None:
    await conn.execute(_DELETE_PORT, {"port_id": port_id})


# --- history --------------------------------------------------------------------------------


async def add_history(conn: Conn, node_id: int, event: str, *, severity: str = "INFO",
                      event_type: str = "provisioning", conductor: str | None = None) -> None:
    await _add_history_row(conn, history_row(node_id, event, severity=severity,
                                             event_type=event_type, conductor=conductor))


async def _add_history_row(conn: Conn, row: Row) -> None:
    await conn.execute(_INSERT_HISTORY, row)


async def add_history_rows(conn: Conn, rows: Sequence[Row]) -> None:
    """History rows made by `history_row`, in one statement (none: nothing)."""
    if rows:
        await conn.execute(_INSERT_HISTORY, list(rows))


async def list_history(conn: Conn, node_id: int, limit: int = 1000) -> list[Row]:
    query = (select(history).where(history.c.node_id == node_id)
             .order_by(history.c.id.asc()).limit(limit))
    return [dict(r) for r in (await conn.execute(query)).mappings()]


# --- conductors -----------------------------------------------------------------------------


async def register_conductor(conn: Conn, name: str, hostname: str, pid: int,
                             drivers: list[str], group: str = "") -> None:
    now = utcnow()
    await conn.execute(delete(conductors).where(conductors.c.name == name))
    await conn.execute(insert(conductors).values(
        name=name, hostname=hostname, pid=pid, drivers=drivers, started_at=now, heartbeat_at=now,
        conductor_group=group))


async def heartbeat(conn: Conn, name: str) -> bool:
    result = await conn.execute(update(conductors).where(conductors.c.name == name)
                                .values(heartbeat_at=utcnow()))
    return bool(result.rowcount)


async def unregister_conductor(conn: Conn, name: str) -> None:
    await conn.execute(delete(conductors).where(conductors.c.name == name))


async def list_conductors(conn: Conn) -> list[Row]:
    return [dict(r) for r in (await conn.execute(select(conductors))).mappings()]
