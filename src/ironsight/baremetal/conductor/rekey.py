"""Encrypting every node's secret driver_info fields again: `ironsight secrets encrypt`
(plain values of nodes enrolled before the key file was configured) and `rotate-key` (all
of them with a new key), while the services may be running.

Each node is rewritten like the API's unlocked writes (records.py): only while nobody holds
its lock and it is unchanged since it was read, raising its lock epoch, so a concurrent
change of the node is never lost; a node locked meanwhile is tried again until `patience`
runs out. Nothing else of the node changes (not even `updated_at`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from sqlalchemy import bindparam, select, update

from ironsight.baremetal.db.models import nodes
from ironsight.baremetal.secrets import DriverSecrets
from ironsight.common.db import Database

PAGE = 500
_READ = (select(nodes.c.id, nodes.c.uuid, nodes.c.driver_info, nodes.c.lock_epoch,
                nodes.c.reservation)
         .where(nodes.c.id > bindparam("after")).order_by(nodes.c.id)
         .limit(bindparam("limit")))
_READ_ONE = select(nodes.c.id, nodes.c.uuid, nodes.c.driver_info, nodes.c.lock_epoch,
                   nodes.c.reservation).where(nodes.c.id == bindparam("node_id"))
_WRITE = (update(nodes)
          .where(nodes.c.id == bindparam("node_id"), nodes.c.reservation.is_(None),
                 nodes.c.lock_epoch == bindparam("epoch"))
          .values(driver_info=bindparam("info"), lock_epoch=nodes.c.lock_epoch + 1))


@dataclass
class Resealed:
    """What a pass did: nodes rewritten, and the UUIDs of those it could not rewrite
    (locked all along)."""

    rewritten: int = 0
    seen: int = 0
    locked: list[str] = field(default_factory=list)


async def reseal_all(db: Database, secrets: DriverSecrets, *, patience: float = 120.0,
                     interval: float = 0.5) -> Resealed:
    """Encrypt every node's secret fields with the key file's newest key (those that are
    already are left alone)."""
    done = Resealed()
    retry: list[int] = []
    after = 0
    while True:
        async with db.read() as conn:
            rows = (await conn.execute(_READ, {"after": after, "limit": PAGE})).mappings().all()
        if not rows:
            break
        after = rows[-1]["id"]
        for row in rows:
            done.seen += 1
            outcome = await _reseal_one(db, secrets, dict(row))
            if outcome is None:
                retry.append(row["id"])
            else:
                done.rewritten += outcome
    deadline = time.monotonic() + patience
    while retry:
        await asyncio.sleep(interval)
        waiting: list[int] = []
        for node_id in retry:
            async with db.read() as conn:
                row = (await conn.execute(_READ_ONE, {"node_id": node_id})).mappings().first()
            if row is None:
                continue  # deleted meanwhile
            outcome = await _reseal_one(db, secrets, dict(row))
            if outcome is None:
                waiting.append(node_id)
            else:
                done.rewritten += outcome
        retry = waiting
        if retry and time.monotonic() > deadline:
            async with db.read() as conn:
                for node_id in retry:
                    found = (await conn.execute(_READ_ONE, {"node_id": node_id})
                             ).mappings().first()
                    if found is not None:
                        done.locked.append(str(found["uuid"]))
            break
    return done


async def _reseal_one(db: Database, secrets: DriverSecrets, row: dict[str, object]) -> int | None:
    """1 when rewritten, 0 when there was nothing to do, None when it must wait (locked,
    or changed since read: read again)."""
    info = row["driver_info"]
    new = secrets.reseal(info if isinstance(info, dict) else {})
    if new is None:
        return 0
    if row["reservation"] is not None:
        return None
    async with db.single() as conn:
        result = await conn.execute(_WRITE, {"node_id": row["id"], "epoch": row["lock_epoch"],
                                             "info": new})
    return 1 if result.rowcount else None
