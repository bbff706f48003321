"""What each inspection changed of a node's hardware, kept and listed.

After a report is processed and stored, its data is compared with the node's previous run's
(components.py): each component added, removed or changed is a row here, with the run it
came from. Rows outlive the data they were computed from (only `[processing] data_history`
runs are kept), so "which nodes lost a DIMM since last month" is answered from here.
Processing the same run again (a reapply) replaces that run's events: never twice the same
change. Listed by `GET /v1/fleet/events` and `ironsight fleet events`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, insert, select

from ironsight.common.clock import utcnow
from ironsight.common.db import Conn, Database
from ironsight.discoverd.components import ComponentEvent
from ironsight.discoverd.db.models import component_events as table

SEVERITIES = ("critical", "warning", "info")
CHANGES = ("added", "removed", "changed")


@dataclass(frozen=True)
class Filters:
    nodes: Sequence[str] = ()
    since: dt.datetime | None = None
    severity: str | None = None  # this one or worse
    component: str | None = None
    change: str | None = None


def _row(uuid: str, run: int, at: dt.datetime, event: ComponentEvent) -> dict[str, Any]:
    body = event.as_dict()
    return {"uuid": uuid, "run": run, "at": at, "component": body["component"],
            "key": str(body["key"])[:255], "change": body["change"],
            "severity": body["severity"], "before": body.get("before"),
            "after": body.get("after"), "fields": body.get("fields") or None,
            "message": str(body["message"])}


class ComponentEvents:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, conn: Conn, uuid: str, run: int,
                     events: Sequence[ComponentEvent]) -> list[dict[str, Any]]:
        """In the caller's transaction: `run`'s events replace any it had. The rows
        written, as the API shows them (without ids)."""
        await conn.execute(delete(table).where(and_(table.c.uuid == uuid, table.c.run == run)))
        at = utcnow()
        rows = [_row(uuid, run, at, e) for e in events]
        if rows:
            await conn.execute(insert(table), rows)
        return [_shown({**r, "id": None}) for r in rows]

    async def has_run(self, uuid: str, run: int) -> bool:
        async with self.db.read() as conn:
            return (await conn.execute(
                select(table.c.id).where(and_(table.c.uuid == uuid, table.c.run == run))
                .limit(1))).first() is not None

    async def list(self, filters: Filters, *, limit: int,
                   marker: int | None = None) -> list[dict[str, Any]]:
        """Newest first."""
        query = select(table)
        conds: list[Any] = []
        if filters.nodes:
            conds.append(table.c.uuid.in_(list(filters.nodes)))
        if filters.since is not None:
            conds.append(table.c.at >= filters.since)
        if filters.severity is not None:
            worse = SEVERITIES[:SEVERITIES.index(filters.severity) + 1]
            conds.append(table.c.severity.in_(worse))
        if filters.component is not None:
            conds.append(table.c.component == filters.component)
        if filters.change is not None:
            conds.append(table.c.change == filters.change)
        if marker is not None:
            conds.append(table.c.id < marker)
        if conds:
            query = query.where(and_(*conds))
        query = query.order_by(table.c.id.desc()).limit(limit)
        async with self.db.read() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_shown(dict(r)) for r in rows]


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    at = row["at"]
    if isinstance(at, dt.datetime):
        at = (at if at.tzinfo else at.replace(tzinfo=dt.UTC)).isoformat()
    return {"id": row.get("id"), "node_uuid": row["uuid"], "run": row["run"], "at": at,
            "component": row["component"], "key": row["key"], "change": row["change"],
            "severity": row["severity"], "before": row["before"], "after": row["after"],
            "fields": row["fields"] or [], "message": row["message"]}
