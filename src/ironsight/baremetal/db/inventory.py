"""Queries on the stored inventory resources (chassis, portgroups, deploy templates, runbooks,
volume connectors and targets, allocations): one set of statements for all of them, driven
by a `Kind`. Every function takes an open connection; nothing here commits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db.models import chassis, nodes
from ironsight.common.clock import utcnow
from ironsight.common.db import Conn
from ironsight.common.exceptions import Conflict, InvalidParameterValue, NotFound
from ironsight.common.ids import is_uuid_like, new_uuid

Row = dict[str, Any]


@dataclass(frozen=True)
class Kind:
    """One stored resource: its table, how Ironic names it in messages ("Portgroup"), whether
    it is addressed by name too, and the texts of its duplicates (a word of the violated
    constraint → a template over the row's values), checked in order."""

    table: Table
    what: str
    named: bool = False
    duplicates: tuple[tuple[str, str], ...] = ()
    json_defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def has_node(self) -> bool:
        return "node_id" in self.table.c

    def select(self) -> Any:
        """The rows with their node's UUID (`node_uuid`), as the API shows them."""
        t = self.table
        if not self.has_node:
            return select(t)
        return select(*t.c, nodes.c.uuid.label("node_uuid")).select_from(
            t.outerjoin(nodes, nodes.c.id == t.c.node_id))

    def not_found(self, ident: str) -> NotFound:
        return NotFound(f"{self.what} {ident} could not be found.")


def _duplicate(kind: Kind, exc: IntegrityError, values: Row) -> Conflict:
    text = str(exc.orig).lower()
    for needle, template in kind.duplicates:
        if needle in text:
            return Conflict(template.format(**values))
    if "uuid" in text:
        return Conflict(f"A {kind.what.lower()} with UUID {values.get('uuid')} already exists.")
    return Conflict(f"Conflicting {kind.what.lower()}: {exc.orig}")


async def get(conn: Conn, kind: Kind, ident: str, lock: bool = False) -> Row:
    t = kind.table
    if is_uuid_like(ident):
        cond = t.c.uuid == ident.lower()
    elif kind.named:
        cond = t.c.name == ident
    else:
        raise kind.not_found(ident)
    query = kind.select().where(cond)
    if lock:
        query = query.with_for_update(of=kind.table)
    row = (await conn.execute(query)).mappings().first()
    if row is None:
        raise kind.not_found(ident)
    return dict(row)


async def list_(conn: Conn, kind: Kind, *, filters: Row, limit: int, marker: str | None,
                sort_key: str, sort_dir: str) -> list[Row]:
    t = kind.table
    conds = [t.c[key].is_(None) if value is None else t.c[key] == value
             for key, value in filters.items() if not key.startswith("_")]
    # a project's caller (baremetal/api/project_scope.py): what its nodes have, what it owns
    if "_node" in filters:
        conds.append(t.c.node_id.in_(dbapi.project_nodes(filters["_node"])))
    if "_owner" in filters:
        conds.append(t.c.owner == filters["_owner"])
    if "_owner_or_public" in filters:
        conds.append(or_(t.c.owner == filters["_owner_or_public"], t.c.public.is_(True)))
    if marker is not None and not is_uuid_like(marker):
        raise InvalidParameterValue(f"marker: {kind.what} {marker} could not be found.")
    return await dbapi._page(conn, t, kind.select(), conds, limit=limit, marker=marker,
                             sort_key=sort_key, sort_dir=sort_dir, what=kind.what.lower())


async def create(conn: Conn, kind: Kind, values: Row) -> Row:
    row: Row = {c.name: None for c in kind.table.c if c.name != "id"}
    row.update(kind.json_defaults)
    row.update({k: v for k, v in values.items() if k in kind.table.c})
    row.setdefault("uuid", None)
    row["uuid"] = row["uuid"] or new_uuid()
    row["created_at"] = utcnow()
    try:
        result = await conn.execute(insert(kind.table), row)
    except IntegrityError as exc:
        raise _duplicate(kind, exc, row) from None
    assert result.inserted_primary_key is not None
    row["id"] = result.inserted_primary_key[0]
    return row


async def update_(conn: Conn, kind: Kind, row: Row, values: Row) -> None:
    values = {"updated_at": utcnow(), **values}
    try:
        await conn.execute(update(kind.table).where(kind.table.c.id == row["id"])
                           .values(**values))
    except IntegrityError as exc:
        raise _duplicate(kind, exc, {**row, **values}) from None


async def delete_(conn: Conn, kind: Kind, row_id: int) -> None:
    await conn.execute(delete(kind.table).where(kind.table.c.id == row_id))


async def node_id(conn: Conn, ident: str, field_name: str) -> int:
    """The id of the node a request names in `field_name`; a 400 naming the field when there
    is none (as Ironic answers)."""
    try:
        return int((await dbapi.get_node(conn, ident))["id"])
    except NotFound as exc:
        raise InvalidParameterValue(f"{field_name}: {exc.message}") from None


async def chassis_id(conn: Conn, chassis_uuid: str) -> int:
    """The id of the chassis a node joins, its row held (FOR SHARE) to the end of the
    transaction, so that it cannot be deleted under the node (`chassis_empty` takes it FOR
    UPDATE); a 400 when there is none, in Ironic's words for a node request."""
    query = select(chassis.c.id).where(chassis.c.uuid == chassis_uuid.lower())
    found = (await conn.execute(query.with_for_update(read=True))).scalar()
    if found is None:
        raise InvalidParameterValue(f"Chassis {chassis_uuid} could not be found.")
    return int(found)


async def chassis_uuids_of(conn: Conn, chassis_ids: Iterable[int]) -> dict[int, str]:
    """Each chassis's UUID, by id (the nodes' `chassis_uuid`)."""
    return await dbapi.uuids_by_id(conn, chassis, chassis_ids)
