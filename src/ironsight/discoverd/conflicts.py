"""The discovery conflict inbox: reports that named known nodes ambiguously, kept with the
nodes and the signals that matched until an operator resolves them.

A conflict is a refused-callback record (rejections.py, reason `discovery_conflict`) with
more columns, not a second store: `GET /v1/rejected` lists it among the other refusals.
One open record per machine (`key`): the same machine booting again counts a repeat.
Resolutions (recorded on the record and in the history of the nodes they touch):
- `same_machine`: the machine is the matched node with a replaced board; the node's ports
  become the machine's MACs (those of the report that identify it);
- `new_machine`: a new node is created from the stored report, as discovery would have;
- `ignore`: nothing changes; the record stays, resolved, and the machine's next boots
  count repeats of it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, insert, select, update

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.common.exceptions import Conflict, Invalid, NotFound
from ironsight.discoverd import diagnosis
from ironsight.discoverd.db.models import rejected
from ironsight.discoverd.identity import Identity

REASON = diagnosis.DISCOVERY_CONFLICT
RESOLUTIONS = ("same_machine", "new_machine", "ignore")


@dataclass(frozen=True)
class Signal:
    """One reason a report names a known node."""

    kind: str  # mac, bmc, serial, bmc_probe
    value: str
    node: str

    def to_dict(self) -> dict[str, str]:
        return {"signal": self.kind, "value": self.value, "node": self.node}


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def key_of(identity: Identity) -> str:
    return identity.system_key or "macs:" + ",".join(sorted(identity.macs or
                                                            identity.all_macs))[:240]


def _view(row: Any) -> dict[str, Any]:
    return {"id": row["id"], "at": _iso(row["at"]), "kind": row["kind"],
            "signals": row["signals"] or [], "matched": row["matched"] or [],
            "macs": list(row["macs"] or []), "bmc_address": row["bmc_address"],
            "serial": row["serial"], "system_uuid": row["system_uuid"],
            "source_address": row["source_address"], "message": row["message"],
            "repeats": row["repeats"], "resolution": row["resolution"],
            "resolved_at": _iso(row["resolved_at"]), "resolved_by": row["resolved_by"]}


class Conflicts:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, identity: Identity, signals: Sequence[Signal], *,
                     source: str | None, message: str, data: Any) -> tuple[int, bool]:
        """Store the conflict, or count a repeat of the machine's open (or ignored) one.
        (its id, whether it is new)."""
        key = key_of(identity)
        now = utcnow()
        async with self.db.begin() as conn:
            found = (await conn.execute(select(rejected.c.id).where(
                rejected.c.reason == REASON, rejected.c.key == key,
                (rejected.c.resolution.is_(None)) | (rejected.c.resolution == "ignore"))
                .order_by(rejected.c.id.desc()).limit(1))).scalar()
            if found is not None:
                await conn.execute(update(rejected).where(rejected.c.id == found).values(
                    repeats=rejected.c.repeats + 1, at=now))
                return int(found), False
            result = await conn.execute(insert(rejected), {
                "at": now, "kind": "report", "reason": REASON, "key": key,
                "uuid": signals[0].node if signals else None,
                "macs": list(identity.all_macs)[:16],
                "bmc_address": identity.bmc_hosts[0] if identity.bmc_hosts else None,
                "source_address": source, "message": message[:1024],
                "signals": [s.to_dict() for s in signals],
                "matched": sorted({s.node for s in signals}),
                "serial": identity.serial, "system_uuid": identity.system_uuid,
                "data": data, "repeats": 0})
            assert result.inserted_primary_key is not None
            return int(result.inserted_primary_key[0]), True

    async def list(self, *, unresolved: bool, limit: int) -> list[dict[str, Any]]:
        query = select(rejected).where(rejected.c.reason == REASON)
        if unresolved:
            query = query.where(rejected.c.resolution.is_(None))
        async with self.db.read() as conn:
            rows = (await conn.execute(query.order_by(rejected.c.id.desc()).limit(limit))
                    ).mappings().all()
        return [_view(r) for r in rows]

    async def get(self, conflict_id: int) -> tuple[dict[str, Any], Any]:
        """The conflict and its stored report."""
        async with self.db.read() as conn:
            row = (await conn.execute(select(rejected).where(
                rejected.c.id == conflict_id, rejected.c.reason == REASON))).mappings().first()
        if row is None:
            raise NotFound(f"Discovery conflict {conflict_id} could not be found.")
        return _view(row), row["data"]

    async def resolve(self, conflict_id: int, resolution: str, user: str | None) -> None:
        """Mark it resolved, once: a second resolution of the same record is refused."""
        if resolution not in RESOLUTIONS:
            raise Invalid(f"Invalid value for resolution: {resolution!r} (one of "
                          f"{', '.join(RESOLUTIONS)})")
        async with self.db.single() as conn:
            done = await conn.execute(update(rejected).where(and_(
                rejected.c.id == conflict_id, rejected.c.reason == REASON,
                rejected.c.resolution.is_(None))).values(
                resolution=resolution, resolved_at=utcnow(), resolved_by=user))
        if not done.rowcount:
            view, _ = await self.get(conflict_id)
            raise Conflict(f"Discovery conflict {conflict_id} is resolved already "
                           f"({view['resolution']})")
