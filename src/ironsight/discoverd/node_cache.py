"""The node cache: introspections, their lookup attributes and their stored data.

Each start of a node's introspection is a new run (1, 2, ...). Data is stored per run, and a
node keeps the data of its last `keep` runs: a new introspection does not hide the previous
one's data, and its report drops only runs beyond that.

Every state change is a conditional UPDATE (`WHERE state IN (allowed)`): two requests racing
for the same introspection (a callback and an abort, two replicas) cannot both win, without
any in-process lock.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ARRAY,
    String,
    and_,
    bindparam,
    delete,
    false,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    true,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.common.exceptions import Conflict, Invalid, NotFound
from ironsight.common.process import pid_alive
from ironsight.discoverd import callback_token, diagnosis, states
from ironsight.discoverd.db.models import attributes, data, introspections, phases
from ironsight.discoverd.timeline import Step, Timeline

MAC = "mac"
BMC = "bmc_address"


def owner_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class Introspection:
    uuid: str
    state: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    error: str | None
    manage_boot: bool
    owner: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in states.FINAL

    @classmethod
    def from_row(cls, row: Any) -> Introspection:
        return cls(uuid=row["uuid"], state=row["state"], started_at=row["started_at"],
                   finished_at=row["finished_at"], error=row["error"],
                   manage_boot=row["manage_boot"], owner=row["owner"])


def _allowed(event: str) -> Any:
    """`state IN (…)` for the states `event` may leave. They are our own constants, written
    into the SQL: a list of values would be an "expanding" parameter, which SQLAlchemy
    re-renders into SQL on every execution (~3% of the server's CPU in the inspection
    benchmark)."""
    allowed: list[Any] = [literal_column(f"'{state}'") for state in states.ALLOWED_FROM[event]]
    return introspections.c.state.in_(allowed)


@functools.lru_cache(maxsize=64)
def _transition_statement(event: str, keys: tuple[str, ...], one_statement: bool,
                          steps: int = 0) -> Any:
    """The conditional UPDATE of a transition. One to a final state returns the start time
    (for the duration) and drops the lookup attributes: with `one_statement` (PostgreSQL),
    in the same statement (data-modifying CTEs: one round trip instead of four), which also
    returns the run and writes the timeline's last `steps` steps (parameters p<i>_phase,
    p<i>_at, p<i>_details); else the caller deletes them in the same transaction."""
    stmt = (update(introspections)
            .where(introspections.c.uuid == bindparam("b_uuid"), _allowed(event))
            .values({k: bindparam(f"v_{k}") for k in keys}))
    if states.EVENT_TARGET[event] not in states.FINAL:
        return stmt
    if not one_statement:
        return stmt.returning(introspections.c.started_at)
    ended = stmt.returning(introspections.c.uuid, introspections.c.started_at,
                           introspections.c.run).cte("ended")
    gone = delete(attributes).where(attributes.c.uuid.in_(select(ended.c.uuid))).cte("gone")
    found = select(ended.c.started_at, ended.c.run).add_cte(gone)
    if steps:
        rows = [select(ended.c.uuid, ended.c.run,
                       bindparam(f"p{i}_phase", type_=phases.c.phase.type),
                       bindparam(f"p{i}_at", type_=phases.c.at.type),
                       literal("discoverd", phases.c.source.type),
                       bindparam(f"p{i}_details", type_=phases.c.details.type))
                for i in range(steps)]
        noted = insert(phases).from_select(
            ["uuid", "run", "phase", "at", "source", "details"],
            rows[0] if steps == 1 else union_all(*rows)).cte("noted")
        found = found.add_cte(noted)
    return found


_DELETE_ATTRIBUTES = delete(attributes).where(attributes.c.uuid == bindparam("uuid"))
_STATE = select(introspections.c.state).where(introspections.c.uuid == bindparam("uuid"))
_INSERT = insert(introspections)
_RESTART = (update(introspections)
            .where(introspections.c.uuid == bindparam("b_uuid"), _allowed("start"))
            .values(run=introspections.c.run + 1))
_INSERT_ATTRIBUTES = insert(attributes)
_START_COLUMNS = ("uuid", "state", "started_at", "finished_at", "error", "manage_boot", "owner",
                  "updated_at")


@functools.cache
def _start_new_statement() -> Any:
    """PostgreSQL: a first introspection of a node and its lookup attributes as one statement
    (one round trip where the transaction of a restart takes seven); no row when the node
    has an introspection already (a restart), nothing written then. A taken attribute fails
    it whole (the unique key)."""
    new = (pg_insert(introspections)
           .values({key: bindparam(f"v_{key}", type_=introspections.c[key].type)
                    for key in _START_COLUMNS})
           .on_conflict_do_nothing(index_elements=[introspections.c.uuid])
           .returning(introspections.c.uuid).cte("new"))
    pairs = select(func.unnest(bindparam("names", type_=ARRAY(String))).label("name"),
                   func.unnest(bindparam("values", type_=ARRAY(String))).label("value")
                   ).subquery("pairs")
    added = (insert(attributes)
             .from_select(["name", "value", "uuid"],
                          select(pairs.c.name, pairs.c.value, new.c.uuid)
                          .select_from(new.join(pairs, true())))
             .cte("added"))
    return select(new.c.uuid).add_cte(added)


def _replacing(new: Any) -> Any:
    """Stored data replaces the earlier of its kind in its run: an upsert on (uuid, run,
    processed)."""
    return new.on_conflict_do_update(
        index_elements=[data.c.uuid, data.c.run, data.c.processed],
        set_={"data": new.excluded.data, "stored_at": new.excluded.stored_at})


_DATA_COLUMNS = ["uuid", "run", "started_at", "processed", "data", "stored_at"]


def _payload() -> tuple[Any, ...]:
    return (bindparam("processed", type_=data.c.processed.type),
            bindparam("data", type_=data.c.data.type),
            bindparam("stored_at", type_=data.c.stored_at.type))


# The introspection's current run (the raw report, or data posted with a reapply).
_CURRENT_RUN = select(introspections.c.uuid, introspections.c.run, introspections.c.started_at,
                      *_payload()).where(introspections.c.uuid == bindparam("uuid"))
# The run of the latest raw data: processed data belongs to the report it came from (a
# reapply may process a run older than the current one, when that one stored no report).
_raw = data.alias("raw")
_LATEST_RAW_RUN = (select(_raw.c.uuid, _raw.c.run, _raw.c.started_at, *_payload())
                   .where(_raw.c.uuid == bindparam("uuid"), _raw.c.processed == false())
                   .order_by(_raw.c.run.desc()).limit(1))
# Upserts of a payload into the run that the source selects (no row: nothing stored).
_STORE = {(dialect, name): _replacing(dialect_insert(data).from_select(_DATA_COLUMNS, source))
          for dialect, dialect_insert in (("postgresql", pg_insert), ("sqlite", sqlite_insert))
          for name, source in (("current", _CURRENT_RUN), ("latest_raw", _LATEST_RAW_RUN))}

# Drop the data of runs beyond the `keep` newest that have data.
_kept = data.alias("kept")
_PRUNE = delete(data).where(
    data.c.uuid == bindparam("uuid"),
    data.c.run.not_in(select(_kept.c.run).where(_kept.c.uuid == bindparam("uuid"))
                      .distinct().order_by(_kept.c.run.desc()).limit(bindparam("keep"))))


@functools.lru_cache(maxsize=8)
def _accept_statement(keys: tuple[str, ...], step: bool = False) -> Any:
    """PostgreSQL: the transition to `processing`, the report's upsert and (`step`) the
    timeline's step as one statement (the report and its step are stored if and only if it
    was accepted; a round trip each would be the report's latency)."""
    moved = (_transition_statement("process", keys, False)
             .returning(introspections.c.uuid, introspections.c.run,
                        introspections.c.started_at).cte("moved"))
    new = pg_insert(data).from_select(
        _DATA_COLUMNS,
        select(moved.c.uuid, moved.c.run, moved.c.started_at, literal(False),
               bindparam("data", type_=data.c.data.type),
               bindparam("stored_at", type_=data.c.stored_at.type)))
    statement = _replacing(new).returning(data.c.uuid, data.c.run).add_cte(moved)
    if step:  # a data-modifying CTE runs whether or not the statement reads it
        noted = insert(phases).from_select(
            ["uuid", "run", "phase", "at", "source", "details"],
            select(moved.c.uuid, moved.c.run, bindparam("s_phase", type_=phases.c.phase.type),
                   bindparam("s_at", type_=phases.c.at.type),
                   bindparam("s_source", type_=phases.c.source.type),
                   bindparam("s_details", type_=phases.c.details.type))).cte("noted")
        statement = statement.add_cte(noted)
    return statement
_LOOKUP = select(attributes.c.uuid).where(or_(
    and_(attributes.c.name == MAC, attributes.c.value.in_(bindparam("macs", expanding=True))),
    and_(attributes.c.name == BMC, attributes.c.value.in_(bindparam("bmcs", expanding=True)))))

_COLUMNS = (introspections.c.uuid, introspections.c.state, introspections.c.started_at,
            introspections.c.finished_at, introspections.c.error,
            introspections.c.manage_boot, introspections.c.owner)
_GET = select(*_COLUMNS).where(introspections.c.uuid == bindparam("uuid"))
_GET_MANY = select(*_COLUMNS).where(introspections.c.uuid.in_(bindparam("uuids",
                                                                         expanding=True)))
_GET_DATA = (select(data.c.data).where(data.c.uuid == bindparam("uuid"),
                                       data.c.processed == bindparam("processed"))
             .order_by(data.c.run.desc()).limit(1))
_GET_RUN_DATA = select(data.c.data).where(data.c.uuid == bindparam("uuid"),
                                          data.c.run == bindparam("run"),
                                          data.c.processed == bindparam("processed"))
_LAST_PROCESSED = (select(data.c.run, data.c.data)
                   .where(data.c.uuid == bindparam("uuid"), data.c.processed.is_(True))
                   .order_by(data.c.run.desc()).limit(bindparam("count")))
_PROCESSED_RUNS = (select(data.c.run)
                   .where(data.c.uuid == bindparam("uuid"), data.c.processed.is_(True))
                   .order_by(data.c.run.desc()).limit(bindparam("count")))
_HISTORY = (select(data.c.run, data.c.processed, data.c.started_at, data.c.stored_at)
            .where(data.c.uuid == bindparam("uuid")).order_by(data.c.run.desc()))
_TOKEN_HASH = select(introspections.c.callback_token_hash).where(
    introspections.c.uuid == bindparam("uuid"))
_ISSUE_TOKEN = update(introspections).where(
    introspections.c.uuid == bindparam("b_uuid"),
    introspections.c.state.in_([literal_column(f"'{state}'")
                                for state in (states.STARTING, states.WAITING)]))
_ACTIVE_MACS = select(attributes.c.value).where(attributes.c.name == MAC)


@dataclass
class StoredRun:
    """One run's stored data: when its introspection started, when its raw report and its
    processed data were stored (None: not stored)."""

    run: int
    started_at: dt.datetime
    received_at: dt.datetime | None = None
    processed_at: dt.datetime | None = None


class NodeCache:
    def __init__(self, db: Database, keep: int = 5, timeline_keep: int = 5) -> None:
        self.db = db
        self.keep = keep  # runs whose data a node keeps ([processing] data_history)
        self.owner = owner_name()
        # each run's phases (timeline.py): the start and the end are recorded here
        self.timeline = Timeline(db, timeline_keep)
        # told (final state, seconds since the start) when an introspection ends here
        self.on_end: Callable[[str, float], None] | None = None

    # --- reading --------------------------------------------------------------------------

    async def get(self, uuid: str) -> Introspection:
        async with self.db.read() as conn:
            row = (await conn.execute(_GET, {"uuid": uuid})).mappings().first()
        if row is None:
            raise NotFound(f"Could not find node {uuid} in cache")
        return Introspection.from_row(row)

    async def count_by_state(self) -> dict[str, int]:
        """How many introspections are in each state (metrics)."""
        async with self.db.read() as conn:
            rows = await conn.execute(select(introspections.c.state, func.count())
                                      .group_by(introspections.c.state))
            return {state: int(count) for state, count in rows}

    async def get_many(self, uuids: Sequence[str]) -> list[Introspection]:
        async with self.db.read() as conn:
            rows = (await conn.execute(_GET_MANY, {"uuids": list(uuids)})).mappings().all()
        return [Introspection.from_row(r) for r in rows]

    async def list_recent(self, *, limit: int, marker: str | None,
                   state: Sequence[str] | None) -> list[Introspection]:
        """Newest first, by (started_at, uuid)."""
        query = select(*_COLUMNS)
        conds: list[Any] = []
        if state:
            conds.append(introspections.c.state.in_(state))
        if marker is not None:
            async with self.db.read() as conn:
                mrow = (await conn.execute(select(introspections.c.started_at)
                                           .where(introspections.c.uuid == marker))).first()
            if mrow is None:
                raise Invalid(f"marker: node {marker} could not be found in cache")
            started = mrow[0]
            conds.append(or_(introspections.c.started_at < started,
                             and_(introspections.c.started_at == started,
                                  introspections.c.uuid < marker)))
        if conds:
            query = query.where(and_(*conds))
        query = query.order_by(introspections.c.started_at.desc(),
                               introspections.c.uuid.desc()).limit(limit)
        async with self.db.read() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [Introspection.from_row(r) for r in rows]

    # --- lookup ---------------------------------------------------------------------------

    async def lookup(self, macs: Iterable[str], bmc_addresses: Iterable[str]) -> str:
        """The one introspection whose attributes best match; ambiguity is an error."""
        macs, bmcs = sorted(set(macs)), sorted(set(a for a in bmc_addresses if a))
        if not macs and not bmcs:
            raise NotFound("Could not find a node: the data has no MAC address and no BMC "
                           "address to look it up by")
        async with self.db.read() as conn:
            uuids = (await conn.execute(_LOOKUP, {"macs": macs or [""], "bmcs": bmcs or [""]})
                     ).scalars().all()
        if not uuids:
            raise NotFound(f"Could not find a node under introspection for attributes "
                           f"{{'bmc_address': {bmcs}, 'mac': {macs}}}")
        scores = Counter(uuids).most_common()
        if len(scores) > 1 and scores[0][1] == scores[1][1]:
            tied = sorted(u for u, n in scores if n == scores[0][1])
            raise Invalid(f"Multiple nodes match the same number of attributes "
                          f"{{'bmc_address': {bmcs}, 'mac': {macs}}}: {', '.join(tied)}")
        return str(scores[0][0])

    async def callback_token_hash(self, uuid: str) -> str | None:
        """The digest of the introspection's current callback token (None: none issued, or
        the introspection ended). Never part of an `Introspection`: no API answer shows it."""
        async with self.db.read() as conn:
            return (await conn.execute(_TOKEN_HASH, {"uuid": uuid})).scalar()

    # --- writing --------------------------------------------------------------------------

    async def start(self, uuid: str, *, manage_boot: bool, macs: Iterable[str],
                    bmc_addresses: Iterable[str]) -> Introspection:
        """Record a new introspection (or restart a finished one) with its lookup attributes,
        in one transaction; refuse while another step of it is running. It is `starting`
        while discoverd boots the node, else (`manage_boot` false) `waiting` at once."""
        now = utcnow()
        state = states.STARTING if manage_boot else states.WAITING
        values = {"state": state, "started_at": now, "finished_at": None,
                  "error": None, "manage_boot": manage_boot, "owner": self.owner,
                  "updated_at": now}
        attrs = [{"name": MAC, "value": m, "uuid": uuid} for m in sorted(set(macs))]
        attrs += [{"name": BMC, "value": b, "uuid": uuid} for b in sorted(set(bmc_addresses))]
        started = Introspection(uuid, state, now, None, None, manage_boot, self.owner)
        try:
            if self.db.backend == "postgresql":
                params = {f"v_{key}": value for key, value in {"uuid": uuid, **values}.items()}
                params.update(names=[a["name"] for a in attrs],
                              values=[a["value"] for a in attrs])
                async with self.db.single() as conn:
                    new = (await conn.execute(_start_new_statement(), params)).first()
                if new:  # (recorded with the connection given back: the pool may be full)
                    await self.timeline.record(uuid, diagnosis.STARTED, "discoverd",
                                               {"manage_boot": manage_boot}, at=now)
                    return started
            async with self.db.begin() as conn:
                current = (await conn.execute(_STATE, {"uuid": uuid})).first()
                if current is None:
                    await conn.execute(_INSERT, {"uuid": uuid, "run": 1, **values})
                elif not (await conn.execute(_RESTART, {"b_uuid": uuid, **values,
                                                         "callback_token_hash": None})).rowcount:
                    # not in a state to restart from (re-read: it may have moved meanwhile)
                    state = (await conn.execute(_STATE, {"uuid": uuid})).scalar()
                    raise Conflict(f"Introspection of node {uuid} is already {state}; "
                                   "wait for it or abort it first")
                await conn.execute(_DELETE_ATTRIBUTES, {"uuid": uuid})
                if attrs:
                    await conn.execute(_INSERT_ATTRIBUTES, attrs)
                if self.db.backend != "postgresql":  # its start: in the same commit
                    await Timeline.write(conn, uuid, "discoverd", [(
                        diagnosis.STARTED, {"manage_boot": manage_boot}, now)])
        except IntegrityError:
            raise Conflict(await self._attribute_conflict(uuid, attrs)) from None
        if self.db.backend == "postgresql":
            await self.timeline.record(uuid, diagnosis.STARTED, "discoverd",
                                       {"manage_boot": manage_boot}, at=now)
        return started

    async def issue_token(self, uuid: str) -> str | None:
        """A new callback token for the introspection of node `uuid`, replacing the previous
        one, while it waits for its ramdisk (`starting` or `waiting`); None otherwise. Only
        its digest is stored: the token is returned once, to the node's boot script."""
        token = callback_token.new_token()
        async with self.db.single() as conn:
            result = await conn.execute(_ISSUE_TOKEN, {
                "b_uuid": uuid, "callback_token_hash": callback_token.digest(token)})
        return token if result.rowcount else None

    async def _attribute_conflict(self, uuid: str, attrs: list[dict[str, str]]) -> str:
        conds = [and_(attributes.c.name == a["name"], attributes.c.value == a["value"])
                 for a in attrs]
        async with self.db.read() as conn:
            rows = (await conn.execute(select(attributes).where(or_(*conds)))).mappings().all()
        taken = ", ".join(f"{r['name']} {r['value']} (node {r['uuid']})" for r in rows
                          if r["uuid"] != uuid)
        return f"Node {uuid} shares lookup attributes with nodes already on introspection: {taken}"

    async def transition(self, uuid: str, event: str, *, error: str | None = None,
                         owner: str | None = None, code: str | None = None,
                         before: Sequence[Step] = (), timeline: bool = True) -> bool:
        """Apply `event` if the introspection is in a state that allows it. Final states drop
        the lookup attributes (the node can no longer be found by a callback) and end the
        run's timeline (unless `timeline` is false: a reapply's end) with the `before` steps,
        the result and, for an error, `code` (None: the stalled step's, diagnosis.py; an
        abort: ABORTED); on SQLite in the same commit."""
        target = states.EVENT_TARGET[event]
        now = utcnow()
        final = target in states.FINAL
        success = target == states.FINISHED
        if code is None and event == "abort_end":
            code = diagnosis.ABORTED
        ends = final and timeline
        if ends and not success and code is None:
            code = await self.timeline.code_for(uuid, success, code)
        values: dict[str, Any] = {"state": target, "updated_at": now,
                                  "owner": owner if target in states.ACTIVE else None}
        if target in states.FINAL:
            values.update(finished_at=now, error=error)
        if target in states.FINAL or target == states.ABORTING:
            values.update(callback_token_hash=None)  # its callback token dies with it
        elif event == "reapply":
            values.update(error=None)
        params: dict[str, Any] = {f"v_{k}": v for k, v in values.items()}
        params["b_uuid"] = uuid
        steps = [*before, Timeline.end_step(success, code, error)] if ends else []
        run = None
        async with self.db.single() as conn:
            one = conn.dialect.name == "postgresql"
            if one:
                for i, (phase, details, at) in enumerate(steps):
                    params.update({f"p{i}_phase": phase, f"p{i}_at": at or now,
                                   f"p{i}_details": details})
            result = await conn.execute(_transition_statement(
                event, tuple(sorted(values)), one, len(steps) if one else 0), params)
            ended = result.first() if final else None
            if ended is not None and not one:
                await conn.execute(_DELETE_ATTRIBUTES, {"uuid": uuid})
                if ends:
                    run = await Timeline.write(conn, uuid, "discoverd", steps)
                    if run is not None:
                        await self.timeline.prune_in(conn, uuid, run)
        if ended is not None:
            if ends and one:
                run = int(ended[1])
                if run > self.timeline.keep_runs:  # rarely: a node's sixth attempt on
                    async with self.db.begin() as conn:
                        await self.timeline.prune_in(conn, uuid, run)
            if ends:
                self.timeline.ended_run(uuid, run, success, code)
            if self.on_end is not None:
                self.on_end(target, (now - ended[0]).total_seconds())
        return ended is not None if final else bool(result.rowcount)

    async def timed_out(self, deadline: dt.datetime) -> list[tuple[str, bool]]:
        """End every unfinished introspection started before `deadline`; returns (uuid,
        manage_boot) of those it ended."""
        async with self.db.read() as conn:
            rows = (await conn.execute(
                select(introspections.c.uuid, introspections.c.manage_boot).where(
                    introspections.c.state.in_(states.UNFINISHED),
                    introspections.c.started_at < deadline))).all()
        ended = []
        for uuid, manage_boot in rows:
            if await self.transition(uuid, "timeout", error="Introspection timeout"):
                ended.append((uuid, bool(manage_boot)))
        return ended

    async def owned_by_dead_processes(self, live: set[str] | None = None
                                      ) -> list[Introspection]:
        """Active introspections whose owner is gone: not one of the `live` members, or,
        without that list, a process of this host that no longer runs (a restart)."""
        host = socket.gethostname()
        async with self.db.read() as conn:
            rows = (await conn.execute(select(*_COLUMNS).where(
                introspections.c.state.in_(states.ACTIVE)))).mappings().all()
        found = []
        for row in rows:
            owner = row["owner"] or ""
            name, _, pid = owner.rpartition(":")
            if owner == self.owner:
                continue
            if live is not None:
                dead = owner not in live
            else:
                dead = not owner or (name == host and pid.isdigit() and not pid_alive(int(pid)))
            if dead:
                found.append(Introspection.from_row(row))
        return found

    async def claim(self, intro: Introspection) -> bool:
        """Take over an active introspection left by a dead process: only while it is in
        the state and has the owner it was seen with, so that of two processes taking over
        at once, one wins."""
        owner = introspections.c.owner
        async with self.db.single() as conn:
            result = await conn.execute(
                update(introspections).where(
                    introspections.c.uuid == intro.uuid, introspections.c.state == intro.state,
                    owner.is_(None) if intro.owner is None else owner == intro.owner)
                .values(owner=self.owner, updated_at=utcnow()))
        return bool(result.rowcount)

    # --- data -----------------------------------------------------------------------------

    async def accept_report(self, uuid: str, payload: Any | None, owner: str,
                            step: Step | None = None) -> bool:
        """Move the introspection to `processing` (for `owner`) and store the ramdisk's report
        `payload` (unless None: not stored), both or neither: a report is never half-accepted,
        in `processing` with nothing stored to process (a database lost in between), which
        the ramdisk's retry could then not fix. `step` goes on the timeline (on SQLite in
        the same commit). Whether it was accepted."""
        if self.db.backend == "postgresql" and payload is not None:
            return await self._accept_pg(uuid, payload, owner, step)
        if payload is None:
            accepted = await self.transition(uuid, "process", owner=owner)
            if accepted and step is not None:
                await self.timeline.record_many(uuid, "ramdisk", [step])
            return accepted
        values, params = self._accept_params(uuid, payload, owner)
        now = params["stored_at"]
        async with self.db.begin() as conn:
            moved = await conn.execute(
                _transition_statement("process", tuple(sorted(values)), False), params)
            if not moved.rowcount:
                return False
            await conn.execute(_STORE["sqlite", "current"], {
                "uuid": uuid, "processed": False, "data": payload, "stored_at": now})
            await conn.execute(_PRUNE, {"uuid": uuid, "keep": self.keep})
            if step is not None:
                await Timeline.write(conn, uuid, "ramdisk", [step])
        return True

    @staticmethod
    def _accept_params(uuid: str, payload: Any, owner: str
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
        now = utcnow()
        values = {"state": states.EVENT_TARGET["process"], "updated_at": now, "owner": owner}
        params: dict[str, Any] = {f"v_{k}": v for k, v in values.items()}
        params.update(b_uuid=uuid, data=payload, stored_at=now)
        return values, params

    async def _accept_pg(self, uuid: str, payload: Any, owner: str,
                         step: Step | None = None) -> bool:
        values, params = self._accept_params(uuid, payload, owner)
        if step is not None:
            phase, details, at = step
            params.update(s_phase=phase, s_at=at or params["stored_at"], s_source="ramdisk",
                          s_details=details)
        async with self.db.single() as conn:
            found = (await conn.execute(
                _accept_statement(tuple(sorted(values)), step is not None), params)).first()
        if found is None:
            return False
        if found[1] > self.keep:  # runs count from 1 and are never renumbered: fewer
            await self._prune(uuid)  # runs than that cannot be more than it keeps
        return True

    async def _prune(self, uuid: str) -> None:
        async with self.db.single() as conn:
            await conn.execute(_PRUNE, {"uuid": uuid, "keep": self.keep})

    async def store_data(self, uuid: str, payload: Any, processed: bool) -> None:
        """Raw data goes to the introspection's current run; processed data to the run of the
        raw data it came from (the latest stored), or the current run when none is."""
        params = {"uuid": uuid, "processed": processed, "data": payload, "stored_at": utcnow()}
        into = "latest_raw" if processed else "current"
        async with self.db.single() as conn:
            stored = (await conn.execute(_STORE[conn.dialect.name, into], params)).rowcount
        if not stored and processed:
            async with self.db.single() as conn:
                await conn.execute(_STORE[conn.dialect.name, "current"], params)
        if not processed:
            await self._prune(uuid)

    async def introspection_macs(self) -> set[str]:
        """MACs of the introspections in progress (dropped when one ends)."""
        async with self.db.read() as conn:
            return {str(v) for v in (await conn.execute(_ACTIVE_MACS)).scalars()}

    async def get_data(self, uuid: str, processed: bool) -> Any:
        async with self.db.read() as conn:
            row = (await conn.execute(_GET_DATA, {"uuid": uuid, "processed": processed})
                   ).first()
        if row is None:
            kind = "processed" if processed else "unprocessed"
            raise NotFound(f"No {kind} introspection data stored for node {uuid}")
        return row[0]

    async def processed_runs(self, uuid: str, count: int) -> list[int]:
        """The newest `count` runs with processed data stored, newest first (their data is
        not read: a first inspection has nothing to compare with)."""
        async with self.db.read() as conn:
            return [int(run) for run in (await conn.execute(
                _PROCESSED_RUNS, {"uuid": uuid, "count": count})).scalars()]

    async def last_processed(self, uuid: str, count: int) -> list[tuple[int, Any]]:
        """The processed data of the node's newest `count` stored runs: (run, data), newest
        first."""
        async with self.db.read() as conn:
            rows = (await conn.execute(_LAST_PROCESSED, {"uuid": uuid, "count": count})).all()
        return [(int(run), body) for run, body in rows]

    async def history(self, uuid: str) -> list[StoredRun]:
        """The runs whose data the node keeps, newest first."""
        async with self.db.read() as conn:
            rows = (await conn.execute(_HISTORY, {"uuid": uuid})).all()
        runs: dict[int, StoredRun] = {}
        for run, processed, started_at, stored_at in rows:
            entry = runs.setdefault(run, StoredRun(run, started_at))
            if processed:
                entry.processed_at = stored_at
            else:
                entry.received_at = stored_at
        return list(runs.values())

    async def get_run_data(self, uuid: str, run: int, processed: bool) -> Any:
        async with self.db.read() as conn:
            row = (await conn.execute(_GET_RUN_DATA, {"uuid": uuid, "run": run,
                                                      "processed": processed})).first()
        if row is None:
            kind = "processed" if processed else "unprocessed"
            raise NotFound(f"No {kind} introspection data of run {run} stored for node {uuid}")
        return row[0]

