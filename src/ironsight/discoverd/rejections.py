"""Callbacks refused before they changed anything, kept for the operator to read.

A ramdisk whose report or hello is refused (its MACs match no introspection or several, the
introspection is in no state to take it, its callback token is wrong or missing) would
otherwise leave only a log line on one replica: its node "never reported". Each refusal is
stored with what identifies the machine (its MACs, its BMC address), where it came from and
why, in the background (within milliseconds: the refusal is answered at once), and the
newest `[introspection] rejected_history` are kept. Listed by `GET /v1/rejected` and
`ironsight inspection rejected`; counted by reason in `/metrics`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, or_, select

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.discoverd.db.models import rejected
from ironsight.discoverd.diagnosis import DISCOVERY_CONFLICT

LOG = logging.getLogger(__name__)

# The reasons are diagnosis.REASONS.
PRUNE_EVERY = 50  # records between two prunings


def _iso(value: dt.datetime) -> str:
    return value.isoformat()


class Rejections:
    def __init__(self, db: Database, keep: int = 1000) -> None:
        self.db = db
        self.keep = keep
        self.counts: Counter[str] = Counter()  # by reason, since this replica started
        self._pending: set[asyncio.Task[None]] = set()
        self._since_prune = 0

    def note(self, kind: str, reason: str, message: str, *, macs: Sequence[str],
             bmc_address: str | None = None, source_address: str | None = None,
             uuid: str | None = None) -> None:
        """Store a refusal in the background; never raises."""
        self.counts[reason] += 1
        row = {"at": utcnow(), "kind": kind, "reason": reason, "uuid": uuid,
               "macs": [str(m)[:64] for m in macs][:16],
               "bmc_address": (bmc_address or None) and str(bmc_address)[:64],
               "source_address": source_address, "message": message[:1024]}
        task = asyncio.get_running_loop().create_task(self._store(row))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _store(self, row: dict[str, Any]) -> None:
        try:
            async with self.db.single() as conn:
                await conn.execute(insert(rejected), row)
            self._since_prune += 1
            if self._since_prune >= PRUNE_EVERY:
                self._since_prune = 0
                await self.prune()
        except Exception as exc:  # a lost record must not change the answer
            LOG.warning("A refused %s (%s) was not recorded: %s", row["kind"], row["reason"],
                        exc)

    async def prune(self) -> None:
        """Keep the newest `keep` records."""
        async with self.db.single() as conn:
            newest = (await conn.execute(select(rejected.c.id).order_by(
                rejected.c.id.desc()).offset(self.keep).limit(1))).scalar()
            if newest is not None:  # open discovery conflicts stay until resolved
                await conn.execute(delete(rejected).where(
                    rejected.c.id <= newest,
                    or_(rejected.c.reason != DISCOVERY_CONFLICT,
                        rejected.c.resolution.is_not(None))))

    async def drain(self) -> None:
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def list(self, *, limit: int = 100, reason: str | None = None,
                   macs: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The newest first; `reason` and a MAC narrow them."""
        query = select(rejected).order_by(rejected.c.id.desc())
        if reason is not None:
            query = query.where(rejected.c.reason == reason)
        async with self.db.read() as conn:
            rows = (await conn.execute(query.limit(limit if not macs else 10 * limit))
                    ).mappings().all()
        found = [{"id": r["id"], "at": _iso(r["at"]), "kind": r["kind"],
                  "reason": r["reason"], "uuid": r["uuid"], "macs": list(r["macs"] or []),
                  "bmc_address": r["bmc_address"], "source_address": r["source_address"],
                  "message": r["message"]} for r in rows]
        if macs:
            wanted = {m.lower() for m in macs}
            found = [f for f in found if wanted & {m.lower() for m in f["macs"]}]
        return found[:limit]
