"""The inspection board: every running attempt by the step it waits for, and the attempts
that have been quiet the longest first, with the deadline each is held to (deadlines.py).
What an operator watching a fleet's inspection asks: how many nodes are where, and which
one is stuck. Read in two queries (the running attempts' current steps; their models)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, select

from ironsight.common.db import Database
from ironsight.discoverd import states
from ironsight.discoverd.db.models import introspections, phases
from ironsight.discoverd.deadlines import Deadline, Deadlines, models_of, step_order, waiting_for


@dataclass(frozen=True)
class Attempt:
    """A running attempt: `step` is the boot step it waits for, or its state when it waits
    for none (starting, processing, reapplying, aborting); `since`, its newest step."""

    uuid: str
    state: str
    step: str
    since: dt.datetime
    deadline: Deadline | None

    def quiet(self, now: dt.datetime) -> float:
        return max((now - self.since).total_seconds(), 0.0)

    def overdue(self, now: dt.datetime) -> bool:
        return self.deadline is not None and self.quiet(now) > self.deadline.seconds

    def as_dict(self, now: dt.datetime) -> dict[str, Any]:
        return {"uuid": self.uuid, "state": self.state, "step": self.step,
                "since": self.since.isoformat(), "quiet_seconds": round(self.quiet(now), 1),
                "deadline_seconds": (round(self.deadline.seconds, 1)
                                     if self.deadline is not None else None),
                "overdue": self.overdue(now)}


async def running(db: Database, deadlines: Deadlines | None,
                  now: dt.datetime) -> list[Attempt]:
    """Every running attempt, the quiet the longest first."""
    current = and_(phases.c.uuid == introspections.c.uuid,
                   phases.c.run == introspections.c.run)
    async with db.read() as conn:
        rows = (await conn.execute(
            select(introspections.c.uuid, introspections.c.state, introspections.c.started_at,
                   phases.c.phase, phases.c.at)
            .select_from(introspections.outerjoin(phases, current))
            .where(introspections.c.state.in_(states.UNFINISHED))
            .order_by(introspections.c.uuid, phases.c.id))).mappings().all()
        by_node: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_node.setdefault(row["uuid"], []).append(dict(row))
        models = await models_of(conn, list(by_node)) if deadlines is not None else {}
    if deadlines is not None:
        await deadlines.current(now)
    found = []
    for uuid, seen in by_node.items():
        state = str(seen[0]["state"])
        wait = waiting_for(seen) if state == states.WAITING else None
        times = [r["at"] for r in seen if isinstance(r["at"], dt.datetime)]
        since = wait.since if wait else max(times, default=seen[0]["started_at"])
        limit = (deadlines.deadline(wait.step, models.get(uuid))
                 if wait is not None and deadlines is not None else None)
        found.append(Attempt(uuid, state, wait.step if wait else state, since, limit))
    found.sort(key=lambda a: (a.since, a.uuid))
    return found


def board(found: list[Attempt], now: dt.datetime, limit: int) -> dict[str, Any]:
    """`{"running", "steps": [{"step", "count", "overdue"}] (in the order of the
    steps), "attempts": [the `limit` quiet the longest]}`."""
    counts = Counter(a.step for a in found)
    late = Counter(a.step for a in found if a.overdue(now))
    return {"running": len(found),
            "steps": [{"step": step, "count": counts[step], "overdue": late[step]}
                      for step in sorted(counts, key=lambda s: (step_order(s), s))],
            "attempts": [a.as_dict(now) for a in found[:limit]]}
