"""Each introspection attempt's timeline: the phases seen of the node, stored per run.

One row per phase, written where the phase is seen (the API, the PXE side, the processing);
the run is the introspection's current one, read in the same statement, so a phase of a node
that is not under introspection writes nothing. Recording never fails the caller: a phase
that cannot be stored is logged and lost, as a log line would be. The last
`[introspection] timeline_history` runs of a node are kept.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    String,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.common.exceptions import NotFound
from ironsight.discoverd import diagnosis, states
from ironsight.discoverd.db.models import introspections, phases, ramdisk_logs

LOG = logging.getLogger(__name__)
STEPS_BATCH = 1000
UNOBSERVED_MAX = 10000  # ended attempts whose steps one scrape reads at most
Step = tuple[str, "dict[str, Any] | None", "dt.datetime | None"]  # (phase, details, at)
LOG_KEEP = 64 * 1024  # bytes of each attempt's ramdisk log kept (its end)


# One step into the node's current run, the run read in the same statement.
_INSERT_STEP = insert(phases).from_select(
    ["uuid", "run", "phase", "at", "source", "details"],
    select(introspections.c.uuid, introspections.c.run, bindparam("phase", type_=String),
           bindparam("at", type_=DateTime), bindparam("source", type_=String),
           bindparam("details", type_=JSON)).where(
        introspections.c.uuid == bindparam("uuid"))).returning(phases.c.run)


def _tail(text: str) -> str:
    data = text.encode()
    if len(data) <= LOG_KEEP:
        return text
    return data[-LOG_KEEP:].decode(errors="ignore")


async def phases_of(conn: Any, runs: Sequence[tuple[str, int]]
                    ) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The steps of the given (uuid, run) attempts, in one query, by attempt, in order."""
    if not runs:
        return {}
    rows = (await conn.execute(
        select(phases.c.uuid, phases.c.run, phases.c.phase, phases.c.at, phases.c.details)
        .where(or_(*[and_(phases.c.uuid == u, phases.c.run == r) for u, r in runs]))
        .order_by(phases.c.id))).mappings().all()
    found: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault((row["uuid"], int(row["run"])), []).append(dict(row))
    return found


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class Timeline:
    def __init__(self, db: Database, keep_runs: int = 5) -> None:
        self.db = db
        self.keep_runs = keep_runs
        self._pending: set[asyncio.Task[None]] = set()
        # attempts ended in this replica, by (result, failure code): /metrics
        self.ended: Counter[tuple[str, str]] = Counter()
        # told each ended attempt's step durations (diagnosis.step_durations): /metrics
        self.on_steps: Callable[[dict[str, float]], None] | None = None
        self._unobserved: list[tuple[str, int]] = []  # (uuid, run) ended, not yet observed

    async def record(self, uuid: str, phase: str, source: str,
                     details: dict[str, Any] | None = None,
                     at: dt.datetime | None = None) -> bool:
        """Store `phase` in the node's current run; False when not stored (no such
        introspection, or the database failed: logged)."""
        return await self.record_many(uuid, source, [(phase, details, at)])

    async def record_many(self, uuid: str, source: str,
                          steps: Sequence[Step]) -> bool:
        """Several phases (phase, details, at: None for now) in one statement."""
        try:
            async with self.db.single() as conn:
                return await self.write(conn, uuid, source, steps) is not None
        except Exception as exc:  # a lost phase must not fail a boot or a report
            LOG.warning("Node %s: phases %s not recorded: %s", uuid,
                        ", ".join(s[0] for s in steps), exc)
            return False

    async def record_bulk(self, source: str,
                          steps: dict[str, list[Step]]) -> list[str] | None:
        """Steps of many nodes in one transaction: the nodes whose steps were written (a node
        without an introspection has none), or None when the database failed (logged)."""
        now = utcnow()
        try:
            # two statements whatever the number of nodes: their current runs, then the rows
            async with self.db.begin() as conn:
                runs = dict((await conn.execute(
                    select(introspections.c.uuid, introspections.c.run).where(
                        introspections.c.uuid.in_(list(steps))))).all())
                rows = [{"uuid": uuid, "run": runs[uuid], "phase": phase, "at": at or now,
                         "source": source, "details": details}
                        for uuid, found in steps.items() if uuid in runs
                        for phase, details, at in found]
                if rows:
                    await conn.execute(insert(phases), rows)
        except Exception as exc:
            LOG.warning("Steps of %d nodes not recorded: %s", len(steps), exc)
            return None
        return [uuid for uuid in steps if uuid in runs]

    @staticmethod
    async def write(conn: Any, uuid: str, source: str, steps: Sequence[Step]) -> int | None:
        """Write `steps` into the node's current run (none without an introspection) on the
        caller's connection (node_cache.py writes them in its own transaction on SQLite,
        where a commit is the cost): the run, or None. The first step's statement reads the
        run itself and is compiled once; the others follow with it in one executemany."""
        now = utcnow()
        phase, details, at = steps[0]
        run = (await conn.execute(_INSERT_STEP, {
            "uuid": uuid, "phase": phase, "at": at or now, "source": source,
            "details": details})).scalar()
        if run is not None and len(steps) > 1:
            await conn.execute(insert(phases), [
                {"uuid": uuid, "run": run, "phase": phase, "at": at or now, "source": source,
                 "details": details} for phase, details, at in steps[1:]])
        return None if run is None else int(run)

    def soon(self, uuid: str, phase: str, source: str,
             details: dict[str, Any] | None = None) -> None:
        """Record in the background (a boot file is served without waiting for it)."""
        self.later(self.record(uuid, phase, source, details, at=utcnow()))

    def later(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run `work` (a recording) in the background; `drain` waits for it."""
        async def run() -> None:
            await work

        task = asyncio.get_running_loop().create_task(run())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        """Wait for the phases being recorded (tests, shutdown)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def code_for(self, uuid: str, success: bool, failure_code: str | None) -> str | None:
        """The failure code of an attempt that ends: the given one, else the stalled step's."""
        if success:
            return None
        return failure_code or await self.stalled_code(uuid)

    @staticmethod
    def end_step(success: bool, failure_code: str | None, error: str | None) -> Step:
        details = {"result": "success" if success else "failed",
                   "failure_code": None if success else failure_code, "error": error}
        return diagnosis.FINISHED, details, None

    async def prune_in(self, conn: Any, uuid: str, run: int) -> None:
        """Drop the node's runs beyond the kept ones (timelines and logs)."""
        if run > self.keep_runs:
            await conn.execute(delete(phases).where(
                phases.c.uuid == uuid, phases.c.run <= run - self.keep_runs))
            await conn.execute(delete(ramdisk_logs).where(
                ramdisk_logs.c.uuid == uuid, ramdisk_logs.c.run <= run - self.keep_runs))

    def ended_run(self, uuid: str, run: Any, success: bool, code: str | None) -> None:
        """Count an ended attempt; its step durations are read at the next scrape."""
        self.ended["success" if success else "failed", str(code or "")] += 1
        if run is not None and self.on_steps is not None:
            self._unobserved.append((uuid, int(run)))
            del self._unobserved[:-UNOBSERVED_MAX]  # nobody scrapes: keep the newest

    async def observe_steps(self) -> None:
        """The step durations of the attempts ended here since the last call, read in one
        query and told to `on_steps` (at scrape time: never on an inspection's path)."""
        if self.on_steps is None or not self._unobserved:
            return
        runs, self._unobserved = self._unobserved[:STEPS_BATCH], self._unobserved[STEPS_BATCH:]
        async with self.db.read() as conn:
            by_run = await phases_of(conn, runs)
        for found in by_run.values():
            self.on_steps(diagnosis.step_durations(found))

    async def quietest(self) -> dt.datetime | None:
        """The newest step of the running attempt that has been quiet the longest (None: no
        attempt runs): how long a stalled node has been waiting, for /metrics."""
        last = (select(func.max(phases.c.at).label("at"))
                .select_from(phases.join(introspections, and_(
                    phases.c.uuid == introspections.c.uuid,
                    phases.c.run == introspections.c.run)))
                .where(introspections.c.state.in_(states.UNFINISHED))
                .group_by(phases.c.uuid).subquery())
        async with self.db.read() as conn:
            found = (await conn.execute(select(func.min(last.c.at)))).scalar()
        return found if isinstance(found, dt.datetime) else None

    async def append_log(self, uuid: str, stage: str, text: str) -> None:
        """A progress beat of the ramdisk: its stage, and its log grown by `text` (the last
        LOG_KEEP bytes kept), in the node's current run."""
        now = utcnow()
        async with self.db.begin() as conn:
            run = (await conn.execute(select(introspections.c.run).where(
                introspections.c.uuid == uuid))).scalar()
            if run is None:
                return
            old = (await conn.execute(select(ramdisk_logs.c.log).where(
                ramdisk_logs.c.uuid == uuid, ramdisk_logs.c.run == run))).scalar()
            log = _tail((old or "") + text)
            if old is None:
                await conn.execute(insert(ramdisk_logs).values(
                    uuid=uuid, run=run, stage=stage, log=log, updated_at=now))
            else:
                await conn.execute(update(ramdisk_logs).where(
                    ramdisk_logs.c.uuid == uuid, ramdisk_logs.c.run == run).values(
                    stage=stage, log=log, updated_at=now))

    async def logs(self, uuid: str, attempt: int | None = None) -> dict[str, Any]:
        """The ramdisk's log of an attempt (default: the latest kept); NotFound when
        discoverd never introspected the node or keeps no such attempt."""
        async with self.db.read() as conn:
            run = (await conn.execute(select(introspections.c.run).where(
                introspections.c.uuid == uuid))).scalar()
            if run is None:
                raise NotFound(f"Introspection for node {uuid} not found")
            wanted = attempt if attempt is not None else run
            if not run - self.keep_runs < wanted <= run:
                raise NotFound(f"Attempt {wanted} of node {uuid} is not kept")
            row = (await conn.execute(select(ramdisk_logs).where(
                ramdisk_logs.c.uuid == uuid, ramdisk_logs.c.run == wanted))).mappings().first()
        return {"attempt": wanted, "stage": row["stage"] if row else None,
                "updated_at": _iso(row["updated_at"]) if row else None,
                "log": row["log"] if row else ""}

    async def stalled_code(self, uuid: str) -> str:
        """The code of the current run as it stands, taken for stalled."""
        return diagnosis.stall(await self._current_phases(uuid))[0]

    async def _current_phases(self, uuid: str) -> list[dict[str, Any]]:
        async with self.db.read() as conn:
            run = (await conn.execute(select(introspections.c.run).where(
                introspections.c.uuid == uuid))).scalar()
            rows = (await conn.execute(select(phases).where(
                phases.c.uuid == uuid, phases.c.run == run).order_by(phases.c.id))
            ).mappings().all()
        return [dict(r) for r in rows]

    async def attempts(self, uuid: str) -> list[dict[str, Any]]:
        """The node's kept attempts, oldest first, as the API shows them; NotFound when
        discoverd never introspected it."""
        async with self.db.read() as conn:
            intro = (await conn.execute(select(
                introspections.c.run, introspections.c.state, introspections.c.started_at,
                introspections.c.finished_at).where(introspections.c.uuid == uuid))
            ).mappings().first()
            if intro is None:
                raise NotFound(f"Introspection for node {uuid} not found")
            rows = (await conn.execute(select(phases).where(phases.c.uuid == uuid)
                                       .order_by(phases.c.run, phases.c.at, phases.c.id))
                    ).mappings().all()
        by_run: dict[int, list[dict[str, Any]]] = {}
        for row in rows:
            by_run.setdefault(int(row["run"]), []).append(dict(row))
        if intro["run"] not in by_run:  # started before timelines were recorded
            by_run[int(intro["run"])] = []
        found = []
        for run in sorted(by_run):
            steps = by_run[run]
            current = run == intro["run"]
            running = current and intro["state"] in states.UNFINISHED
            result, code = diagnosis.result_of(steps, running)
            end = next((p for p in steps if p["phase"] == diagnosis.FINISHED), None)
            start = next((p["at"] for p in steps if p["phase"] == diagnosis.STARTED),
                         intro["started_at"] if current else (steps[0]["at"] if steps else None))
            found.append({
                "attempt": run, "started_at": _iso(start),
                "finished_at": _iso(end["at"] if end else
                                    intro["finished_at"] if current and not running else None),
                "result": result, "failure_code": code,
                "diagnosis": _diagnosis(steps, result, code, end),
                "phases": [{"phase": p["phase"], "at": _iso(p["at"]), "source": p["source"],
                            **(p["details"] or {})} for p in steps]})
        return found


def _diagnosis(steps: list[dict[str, Any]], result: str, code: str | None,
               end: dict[str, Any] | None) -> dict[str, str] | None:
    """Where an attempt stands (running) or stopped (failed): {code, phrase}; the phrase names
    the furthest step seen and the one that never came, or for a failure of its own (a rule,
    the processing, power) the error it ended with. None on success."""
    if result == "success":
        return None
    stalled, phrase = diagnosis.stall(steps)
    if result == "failed" and code != stalled:
        error = ((end or {}).get("details") or {}).get("error")
        return {"code": str(code), "phrase": str(error or phrase)}
    return {"code": stalled, "phrase": phrase}
