"""Discovered nodes: the bare-metal side of auto-discovery.

discoverd decides that a report comes from a machine nobody enrolled; the node itself is
created here, because only here can "no node has these MACs or this BMC" and "create it" be
one transaction (on PostgreSQL under an advisory lock, so that replicas creating at once
take turns; SQLite has one writer). A discovered node carries its approval in `discovery`:
`pending` and `rejected` nodes are quarantined (no power, management or provisioning action
by anyone: `check_not_quarantined`), until an admin approves them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import func, or_, select, text

from ironsight.baremetal import states
from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db.models import nodes, ports
from ironsight.common.db import Conn, Database
from ironsight.common.exceptions import Conflict, Invalid, IronsightError

PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"
STATUSES = (PENDING, APPROVED, REJECTED)
QUARANTINED = (PENDING, REJECTED)
# One key for every creation by discovery (PostgreSQL's advisory locks take a bigint).
_ADVISORY_KEY = 0x49524F4E44495343  # "IRONDISC"
# What the discovered nodes' listing shows of each.
_FIELDS_SHOWN = ("uuid", "name", "provision_state", "driver", "discovery", "created_at",
                 "resource_class")


class NodeQuarantined(Conflict):
    """An action on a discovered node nobody approved."""


class TooManyPending(IronsightError):
    code = 429


@dataclass(frozen=True)
class Match:
    """A known node one of a report's signals names."""

    node: str
    signal: str  # mac, bmc
    value: str
    provision_state: str
    discovery: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DiscoveryConflict(Conflict):
    """Known nodes match: nothing was created."""

    def __init__(self, matches: Sequence[Match]) -> None:
        names = ", ".join(sorted({f"{m.node} ({m.signal} {m.value})" for m in matches}))
        super().__init__(f"Not created: known nodes match: {names}")
        self.matches = list(matches)


def check_not_quarantined(node: dict[str, Any], action: str) -> None:
    status = node.get("discovery")
    if status in QUARANTINED:
        why = ("is waiting for an admin's approval" if status == PENDING
               else "was rejected by an admin")
        raise NodeQuarantined(
            f"Node {node['uuid']} is quarantined: it was auto-discovered and {why}, so no "
            f"{action} is allowed (approve it first: ironsight discovery approve "
            f"{node['uuid']})")


class Discovery:
    def __init__(self, db: Database, tasks: TaskManager) -> None:
        self.db = db
        self.tasks = tasks

    async def lookup(self, macs: Iterable[str], bmc_hosts: Iterable[str]) -> list[Match]:
        """Every node (in any state) with a port of one of `macs` or a BMC at one of
        `bmc_hosts` (canonical hosts, common/bmc.py)."""
        async with self.db.read() as conn:
            return await _lookup(conn, sorted(set(macs)), sorted(set(bmc_hosts)))

    async def create(self, values: dict[str, Any], *, macs: Sequence[str],
                     bmc_hosts: Sequence[str], status: str, max_pending: int,
                     event: str) -> dict[str, Any]:
        """Create a discovered node in `enroll` unless a known node matches (a
        DiscoveryConflict naming them) or `max_pending` nodes wait for approval already
        (TooManyPending, 429). `values` were checked by the caller (Records.check_driver)."""
        if status not in STATUSES:
            raise Invalid(f"Invalid value for status: {status!r} (one of {', '.join(STATUSES)})")
        values = {**values, "discovery": status, "provision_state": states.ENROLL,
                  "power_state": None, "maintenance": False, "driver_internal_info": {},
                  "driver_info": self.tasks.secrets.seal(values.get("driver_info"))}
        async with self.db.begin() as conn:
            if self.db.backend == "postgresql":
                await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                                   {"key": _ADVISORY_KEY})
            found = await _lookup(conn, sorted(set(macs)), sorted(set(bmc_hosts)))
            if found:
                raise DiscoveryConflict(found)
            if status == PENDING:
                pending = (await conn.execute(select(func.count()).select_from(nodes).where(
                    nodes.c.discovery == PENDING))).scalar() or 0
                if pending >= max_pending:
                    raise TooManyPending(f"{pending} discovered nodes wait for approval "
                                         f"(the limit is {max_pending}): none is created")
            history = dbapi.history_row(None, event, event_type="discovery",
                                        conductor=self.tasks.owner)
            return await dbapi.create_node(conn, values, history)

    async def set_status(self, idents: Sequence[str], status: str) -> list[dict[str, Any]]:
        """Approve or reject discovered nodes, each under its lock with a history event;
        all named nodes are checked first, so that one that is no discovered node changes
        nothing."""
        if status not in (APPROVED, REJECTED):
            raise Invalid(f"Invalid value for status: {status!r} (approved or rejected)")
        rows = []
        for ident in idents:
            async with self.db.read() as conn:
                row = await dbapi.get_node(conn, ident)
            if row.get("discovery") is None:
                raise Invalid(f"Node {row['uuid']} was not auto-discovered: it has nothing to "
                              f"{'approve' if status == APPROVED else 'reject'}")
            rows.append(row)
        done = []
        for row in rows:
            if row["discovery"] == status:
                done.append(row)
                continue
            async with self.tasks.locked(row["uuid"]) as task:
                verb = "approved" if status == APPROVED else "rejected"
                await task.save(f"Discovered node {verb} (was {row['discovery']})",
                                event_type="discovery", release=True, discovery=status)
            done.append({**row, "discovery": status})
        return done

    async def list(self, *, status: str | None, limit: int,
                   marker: str | None = None) -> list[dict[str, Any]]:
        query = select(nodes.c.id, *(nodes.c[c] for c in _FIELDS_SHOWN)).where(
            nodes.c.discovery.is_not(None))
        if status is not None:
            query = query.where(nodes.c.discovery == status)
        if marker is not None:
            query = query.where(nodes.c.id > select(nodes.c.id).where(
                nodes.c.uuid == marker).scalar_subquery())
        async with self.db.read() as conn:
            found = (await conn.execute(query.order_by(nodes.c.id).limit(limit))
                     ).mappings().all()
        return [{k: (v.isoformat() if k == "created_at" and v is not None else v)
                 for k, v in row.items() if k != "id"} for row in found]

    async def count(self) -> dict[str, int]:
        async with self.db.read() as conn:
            rows = await conn.execute(select(nodes.c.discovery, func.count()).where(
                nodes.c.discovery.is_not(None)).group_by(nodes.c.discovery))
            return {str(status): int(n) for status, n in rows}


async def _lookup(conn: Conn, macs: list[str], hosts: list[str]) -> list[Match]:
    found: list[Match] = []
    if macs:
        # the ports by their unique address, then their nodes by id: two index lookups,
        # whatever the planner's statistics say (a join planned on the statistics of a
        # freshly filled table scanned every node once per port)
        owned = (await conn.execute(select(ports.c.node_id, ports.c.address).where(
            ports.c.address.in_(macs)))).all()
        if owned:
            by_id = {r[0]: r for r in (await conn.execute(
                select(nodes.c.id, nodes.c.uuid, nodes.c.provision_state, nodes.c.discovery)
                .where(nodes.c.id.in_(sorted({o[0] for o in owned}))))).all()}
            found += [Match(by_id[n][1], "mac", a, by_id[n][2], by_id[n][3])
                      for n, a in owned if n in by_id]
    if hosts:
        # bmc_hosts (" h1 h2 ", written with driver_info) names each host between spaces
        rows = await conn.execute(
            select(nodes.c.uuid, nodes.c.bmc_hosts, nodes.c.provision_state,
                   nodes.c.discovery)
            .where(or_(*(nodes.c.bmc_hosts.contains(f" {h} ", autoescape=True)
                         for h in hosts))))
        wanted = set(hosts)
        for r in rows:
            for host in sorted(set(str(r[1]).split()) & wanted):
                found.append(Match(r[0], "bmc", host, r[2], r[3]))
    return found
