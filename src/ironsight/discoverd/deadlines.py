"""Phase deadlines: each boot step of a running attempt gets as long as this fleet's own
recent attempts needed for it (the p95 of that step over the last successful attempts, per
hardware model where enough of them are known, times a factor, within bounds), and an attempt
that misses one ends then, with the step's failure code, rather than at the inspection's one
long timeout. Learned from the timelines (timeline.py), never configured per step; a step
with too few samples has no deadline, and the overall timeouts stay the last resort.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, select

from ironsight.common.config import DeadlinesSection
from ironsight.common.db import Conn, Database
from ironsight.discoverd import diagnosis, states
from ironsight.discoverd.db.models import introspections, phases
from ironsight.discoverd.timeline import phases_of

# The step a running attempt waits for, after the furthest phase it reached (a PXE boot;
# virtual media waits for the ramdisk's hello once the node is on).
_NEXT_PXE = (
    (diagnosis.HELLO, diagnosis.REPORT_RECEIVED),
    (diagnosis.RAMDISK_FETCHED, diagnosis.HELLO),
    (diagnosis.KERNEL_FETCHED, diagnosis.RAMDISK_FETCHED),
    (diagnosis.SCRIPT_FETCHED, diagnosis.KERNEL_FETCHED),
    (diagnosis.LOADER_FETCHED, diagnosis.SCRIPT_FETCHED),
    (diagnosis.DHCP_LEASE, diagnosis.LOADER_FETCHED),
    (diagnosis.DHCP_REQUEST, diagnosis.DHCP_LEASE),
    (diagnosis.POWERED_ON, diagnosis.DHCP_REQUEST),
)
_MEDIA_SKIPS = (diagnosis.DHCP_REQUEST, diagnosis.DHCP_LEASE)  # the ramdisk's own DHCP
FLEET = "*"  # the model of a deadline learned from every model's attempts


def model_of(inventory: Mapping[str, Any]) -> str | None:
    """The hardware model a report names ("vendor product"), or None."""
    vendor = inventory.get("system_vendor")
    if not isinstance(vendor, Mapping):
        return None
    words = [str(vendor.get(k) or "").strip() for k in ("manufacturer", "product_name")]
    found = " ".join(w for w in words if w)
    return found[:128] or None


def p95(values: Sequence[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass(frozen=True)
class Deadline:
    step: str
    model: str  # FLEET: learned from all models
    seconds: float
    p95: float
    samples: int

    def as_dict(self) -> dict[str, Any]:
        return {"step": self.step, "model": self.model, "seconds": round(self.seconds, 3),
                "p95": round(self.p95, 3), "samples": self.samples}


@dataclass(frozen=True)
class Waiting:
    """What a running attempt waits for: `step`, since `since`, after `reached`."""

    step: str
    since: dt.datetime
    reached: str


def waiting_for(found: Sequence[Mapping[str, Any]]) -> Waiting | None:
    """The boot step a running attempt waits for (None: none with a deadline: not booted
    yet, or processing). Timed from the latest step seen, as step_durations measures."""
    seen: dict[str, dt.datetime] = {}
    for p in found:
        at = p.get("at")
        if isinstance(at, dt.datetime) and p.get("phase") not in seen:
            seen[str(p["phase"])] = at
    if diagnosis.REPORT_RECEIVED in seen or diagnosis.FINISHED in seen:
        return None
    media = any(p in seen for p in (diagnosis.MEDIA_REQUESTED, diagnosis.MEDIA_BUILT,
                                    diagnosis.MEDIA_INSERTED))
    for reached, step in _NEXT_PXE:
        if media and reached in _MEDIA_SKIPS:
            continue
        if reached in seen:
            if media and reached == diagnosis.POWERED_ON:
                step = diagnosis.HELLO
            starts = [at for phase, at in seen.items() if phase != diagnosis.POWERED_ON]
            since = max(starts) if starts else seen[reached]
            return Waiting(step, since, reached)
    return None


@dataclass(frozen=True)
class Late:
    """An attempt past its deadline, with the failure code and error it ends with."""

    uuid: str
    manage_boot: bool
    wait: Waiting
    deadline: Deadline
    code: str
    error: str


class Deadlines:
    """The learned deadlines, relearned every `learn_interval`, and the attempts past one."""

    def __init__(self, conf: DeadlinesSection, db: Database) -> None:
        self.conf = conf
        self.db = db
        self.learned: dict[tuple[str, str], Deadline] = {}
        self.learned_at: dt.datetime | None = None

    def learn_from(self, attempts: Iterable[tuple[str | None, Mapping[str, float]]]
                   ) -> dict[tuple[str, str], Deadline]:
        """Deadlines from (model, step durations) of successful attempts, newest first."""
        by: dict[tuple[str, str], list[float]] = {}
        for model, durations in attempts:
            for step, seconds in durations.items():
                if step not in self.conf.steps or seconds < 0:
                    continue
                by.setdefault((step, FLEET), []).append(seconds)
                if model:
                    by.setdefault((step, model), []).append(seconds)
        found = {}
        for (step, model), values in by.items():
            if len(values) < self.conf.min_samples:
                continue
            high = p95(values)
            seconds = min(max(high * self.conf.factor, self.conf.min_seconds),
                          self.conf.max_seconds)
            found[step, model] = Deadline(step, model, seconds, high, len(values))
        return found

    def deadline(self, step: str, model: str | None) -> Deadline | None:
        """The model's own deadline for the step if learned, else the fleet's."""
        if model is not None and (step, model) in self.learned:
            return self.learned[step, model]
        return self.learned.get((step, FLEET))

    async def learn(self, now: dt.datetime) -> list[Deadline]:
        """Relearn from the last `samples` successful attempts (read in two queries)."""
        async with self.db.read() as conn:
            ends = (await conn.execute(
                select(phases.c.uuid, phases.c.run, phases.c.details)
                .where(phases.c.phase == diagnosis.FINISHED)
                .order_by(phases.c.id.desc()).limit(self.conf.samples * 4))).all()
            runs = [(uuid, int(run)) for uuid, run, details in ends
                    if (details or {}).get("result") == "success"][:self.conf.samples]
            by_run = await phases_of(conn, runs)
        self.learned = self.learn_from(
            (_model(found), diagnosis.step_durations(found))
            for found in (by_run[r] for r in runs if r in by_run))
        self.learned_at = now
        return self.listed()

    async def current(self, now: dt.datetime) -> Deadlines:
        """Itself, relearned first when its deadlines are older than `learn_interval`."""
        if self.learned_at is None or (
                now - self.learned_at).total_seconds() >= self.conf.learn_interval:
            await self.learn(now)
        return self

    def listed(self) -> list[Deadline]:
        """The learned deadlines, by model, then in the order of the steps."""
        return sorted(self.learned.values(), key=lambda d: (d.model, step_order(d.step)))

    async def overdue(self, now: dt.datetime) -> list[Late]:
        """The waiting attempts past their step's deadline, read in two queries (their
        current runs' steps; their models)."""
        await self.current(now)
        if not self.learned:
            return []
        current = and_(phases.c.uuid == introspections.c.uuid,
                       phases.c.run == introspections.c.run)
        async with self.db.read() as conn:
            rows = (await conn.execute(
                select(phases.c.uuid, phases.c.phase, phases.c.at,
                       introspections.c.manage_boot)
                .select_from(phases.join(introspections, current))
                .where(introspections.c.state == states.WAITING)
                .order_by(phases.c.id))).mappings().all()
            by_node: dict[str, list[dict[str, Any]]] = {}
            for row in rows:
                by_node.setdefault(row["uuid"], []).append(dict(row))
            waits = {uuid: w for uuid, found in by_node.items()
                     if (w := waiting_for(found)) is not None}
            models = await models_of(conn, list(waits))
        late = []
        for uuid, wait in waits.items():
            limit = self.deadline(wait.step, models.get(uuid))
            if limit is not None and (now - wait.since).total_seconds() > limit.seconds:
                code, phrase = diagnosis.stall(by_node[uuid])
                late.append(Late(uuid, bool(by_node[uuid][0]["manage_boot"]), wait, limit,
                                 code, f"{code}: {self.message(wait, limit, phrase, now)}"))
        return late

    def message(self, wait: Waiting, limit: Deadline, phrase: str, now: dt.datetime) -> str:
        """The error of an attempt ended at a deadline: the stalled step's phrase and the
        numbers it was held to."""
        took = (now - wait.since).total_seconds()
        whose = "this fleet's" if limit.model == FLEET else f"{limit.model}'s"
        return (f"{phrase} (waited {took:.0f} s for {wait.step}; its deadline is "
                f"{limit.seconds:.0f} s: {self.conf.factor:g} x the p95 {limit.p95:.1f} s "
                f"of {limit.samples} of {whose} successful attempts, within "
                f"{self.conf.min_seconds:g}-{self.conf.max_seconds:g} s)")


async def models_of(conn: Conn, uuids: Sequence[str]) -> dict[str, str]:
    """The hardware model each node's newest report named, of the nodes that have one."""
    models: dict[str, str] = {}
    if uuids:
        for uuid, details in (await conn.execute(
                select(phases.c.uuid, phases.c.details)
                .where(phases.c.phase == diagnosis.REPORT_RECEIVED,
                       phases.c.uuid.in_(list(uuids)))
                .order_by(phases.c.id))).all():
            if (details or {}).get("model"):
                models[uuid] = details["model"]  # the newest wins
    return models


def _model(found: Sequence[Mapping[str, Any]]) -> str | None:
    for p in found:
        if p.get("phase") == diagnosis.REPORT_RECEIVED:
            return (p.get("details") or {}).get("model")
    return None


def step_order(step: str) -> int:
    return diagnosis.PHASES.index(step) if step in diagnosis.PHASES else len(diagnosis.PHASES)

