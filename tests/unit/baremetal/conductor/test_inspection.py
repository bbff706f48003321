"""The conductor's side of inspection (Inspection): beginning under the lock, the hands-off
rule, applying outcomes, polling, and aborts that could not reach their service.

The inspect interface is a scripted stand-in (the conductor only sees `InspectOutcome`s);
the real DiscoverdInspect has its own tests in tests/unit/baremetal/drivers/."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.conductor import inspection as inspection_module
from ironsight.baremetal.conductor.inspection import Inspection
from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.drivers.base import (
    Driver,
    HardwareType,
    InspectInterface,
    InspectOutcome,
    NodeContext,
    WaitingNode,
)
from ironsight.baremetal.drivers.fake import FakeManagement, FakePower
from ironsight.baremetal.drivers.loader import DriverSet
from ironsight.common import config
from ironsight.common.db import Database
from ironsight.common.exceptions import (
    DiscoverdDisabled,
    InvalidParameterValue,
    IronsightError,
    NoFreeWorker,
    UnsupportedDriverExtension,
)
from ironsight.common.ring import Share
from ironsight.common.workers import WorkerPool

from .helpers import OTHER, OWNER, history, make_node, node

CONF = config.load()


class ScriptedInspect(InspectInterface):
    """Answers `start` with `outcome` (or raises `raises`), after awaiting `at_start`;
    `poll` answers `outcomes` and records what it was asked; `abort` answers `reachable`."""

    name = "scripted"
    poll_period = 10.0
    accepts_reports = True

    def __init__(self, conf: config.Config, *, hands_off: bool = False) -> None:
        super().__init__(conf)
        self.hands_off = hands_off
        self.outcome = InspectOutcome.done()
        self.raises: Exception | None = None
        self.at_start: Callable[[NodeContext], Awaitable[None]] | None = None
        self.invalid: str | None = None
        self.outcomes: dict[str, InspectOutcome] = {}
        self.asked: list[list[WaitingNode]] = []
        self.poll_error: Exception | None = None
        self.reachable = True
        self.aborted: list[str] = []
        self.reports: list[dict[str, Any]] = []
        self.tokens: list[str | None] = []
        self.kept: list[dict[str, Any]] | None = None  # what `attempts` answers
        self.starts = 0

    def validate(self, node: NodeContext) -> None:
        if self.invalid:
            raise InvalidParameterValue(self.invalid)

    async def start(self, node: NodeContext, *, again: bool = False) -> InspectOutcome:
        self.starts += 1
        if self.at_start is not None:
            await self.at_start(node)
        if self.raises is not None:
            raise self.raises
        return self.outcome

    async def poll(self, waiting: Sequence[WaitingNode]) -> dict[str, InspectOutcome]:
        self.asked.append(list(waiting))
        if self.poll_error is not None:
            raise self.poll_error
        return dict(self.outcomes)

    async def abort(self, node: NodeContext, *, reason: str | None = None) -> bool:
        self.aborted.append(node.uuid)
        return self.reachable

    async def attempts(self, uuid: str) -> list[dict[str, Any]] | None:
        return self.kept

    async def continue_inspection(self, report: dict[str, Any],
                                  token: str | None = None) -> dict[str, Any]:
        self.reports.append(report)
        self.tokens.append(token)
        return {"uuid": "from-the-interface"}


HW = HardwareType("fake", "test hardware", FakePower, FakeManagement)


def driver(inspect: InspectInterface | None) -> Driver:
    return Driver(HW, FakePower(CONF), FakeManagement(CONF), inspect)


def inspection_of(db: Database, tasks: TaskManager, **drivers: InspectInterface | None
                  ) -> Inspection:
    return Inspection(CONF, db, tasks, DriverSet({n: driver(i) for n, i in drivers.items()}, {}),
                      Share(tasks.owner))


@pytest.fixture
def iface() -> ScriptedInspect:
    return ScriptedInspect(CONF)


@pytest.fixture
def hands_off() -> ScriptedInspect:
    return ScriptedInspect(CONF, hands_off=True)


async def inspect(ins: Inspection, uuid: str) -> None:
    """An `inspect` request: begin under the node's lock, then the worker to its end."""
    async with ins.tasks.locked(uuid) as task:
        await ins.begin(task)
    await ins.tasks.workers.drain(timeout=5)


def node_seen_at_start(db: Database, iface: ScriptedInspect) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    async def look(ctx: NodeContext) -> None:
        seen.append(await node(db, ctx.uuid))

    iface.at_start = look
    return seen


async def summary(db: Database, uuid: str) -> tuple[Any, ...]:
    row = await node(db, uuid)
    return row["provision_state"], row["last_error"], row["reservation"]


# --- begin ------------------------------------------------------------------------------------


async def test_begin_moves_the_node_to_inspecting_towards_manageable(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    ins = inspection_of(db, tasks, fake=iface)
    uuid = await make_node(db)
    async with tasks.locked(uuid) as task:
        await ins.begin(task)
        row = await node(db, uuid)
        assert (row["provision_state"], row["target_provision_state"]) == (
            states.INSPECTING, states.MANAGEABLE)
        assert row["inspection_started_at"] is not None
    await tasks.workers.drain(timeout=5)


async def test_begin_refuses_a_driver_without_inspection(db: Database,
                                                         tasks: TaskManager) -> None:
    ins = inspection_of(db, tasks, fake=None)
    uuid = await make_node(db)
    with pytest.raises(UnsupportedDriverExtension, match="does not support inspection"):
        await inspect(ins, uuid)
    assert await summary(db, uuid) == (states.MANAGEABLE, None, None)


async def test_begin_refuses_a_node_the_interface_does_not_validate(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    iface.invalid = "Missing discoverd_url"
    ins = inspection_of(db, tasks, fake=iface)
    uuid = await make_node(db)
    with pytest.raises(InvalidParameterValue, match="Missing discoverd_url"):
        await inspect(ins, uuid)
    assert await summary(db, uuid) == (states.MANAGEABLE, None, None)


async def test_begin_with_every_worker_busy_is_refused(db: Database,
                                                       iface: ScriptedInspect) -> None:
    workers = WorkerPool(1)
    release = asyncio.Event()
    workers.spawn(release.wait, name="busy")
    tasks = TaskManager(db, OWNER, workers)
    uuid = await make_node(db)
    try:
        with pytest.raises(NoFreeWorker):
            async with tasks.locked(uuid) as task:
                await inspection_of(db, tasks, fake=iface).begin(task)
    finally:
        release.set()
        await workers.drain(timeout=5)
    assert await summary(db, uuid) == (states.MANAGEABLE, None, None)


# --- an interface that works under the lock ---------------------------------------------------


async def test_a_locked_interface_starts_with_the_node_inspecting_and_locked(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    seen = node_seen_at_start(db, iface)
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=iface), uuid)
    assert [(r["provision_state"], r["reservation"]) for r in seen] == [
        (states.INSPECTING, OWNER)]


async def test_done_makes_the_node_manageable_again(db: Database, tasks: TaskManager,
                                                    iface: ScriptedInspect) -> None:
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=iface), uuid)
    assert await summary(db, uuid) == (states.MANAGEABLE, None, None)
    assert (await node(db, uuid))["inspection_finished_at"] is not None


async def test_waiting_leaves_the_node_in_inspect_wait_unlocked(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    iface.outcome = InspectOutcome.waiting()
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=iface), uuid)
    assert await summary(db, uuid) == (states.INSPECTWAIT, None, None)


async def test_failed_fails_the_node_with_the_interface_message(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    iface.outcome = InspectOutcome.failed("BMC said no")
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=iface), uuid)
    assert await summary(db, uuid) == (states.INSPECTFAIL, "BMC said no", None)


async def test_an_error_raised_by_start_counts_as_failed(db: Database, tasks: TaskManager,
                                                         iface: ScriptedInspect) -> None:
    iface.raises = IronsightError("BMC unreachable")
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=iface), uuid)
    assert await summary(db, uuid) == (
        states.INSPECTFAIL, "Failed to inspect hardware: BMC unreachable", None)


# --- a hands-off interface --------------------------------------------------------------------


async def test_hands_off_start_finds_the_node_in_inspect_wait_and_unlocked(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    seen = node_seen_at_start(db, hands_off)
    hands_off.outcome = InspectOutcome.waiting()
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=hands_off), uuid)
    assert [(r["provision_state"], r["reservation"]) for r in seen] == [
        (states.INSPECTWAIT, None)]


async def test_hands_off_start_leaves_the_node_waiting_for_the_poll(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    hands_off.outcome = InspectOutcome.done()  # the end is learnt from `poll` only
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=hands_off), uuid)
    assert await summary(db, uuid) == (states.INSPECTWAIT, None, None)


async def test_hands_off_start_failure_fails_the_node_with_the_interface_message(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    hands_off.outcome = InspectOutcome.failed("Failed to start inspection: node is locked")
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=hands_off), uuid)
    assert await summary(db, uuid) == (
        states.INSPECTFAIL, "Failed to start inspection: node is locked", None)


async def test_hands_off_start_error_fails_the_node(db: Database, tasks: TaskManager,
                                                    hands_off: ScriptedInspect) -> None:
    hands_off.raises = IronsightError("cannot reach discoverd")
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=hands_off), uuid)
    assert await summary(db, uuid) == (
        states.INSPECTFAIL, "Failed to inspect hardware: cannot reach discoverd", None)


async def test_hands_off_failure_waits_for_a_lock_held_briefly(
        db: Database, tasks: TaskManager, other: TaskManager, hands_off: ScriptedInspect,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspection_module, "RELOCK_INTERVAL", 0.005)

    async def lock_briefly(ctx: NodeContext) -> None:  # as discoverd setting the boot device
        held = await other.acquire(ctx.uuid)
        asyncio.get_running_loop().create_task(held.release())

    hands_off.at_start = lock_briefly
    hands_off.outcome = InspectOutcome.failed("boom")
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=hands_off), uuid)
    assert await summary(db, uuid) == (states.INSPECTFAIL, "boom", None)


async def test_hands_off_failure_with_the_lock_held_for_long_is_left_to_the_timeout(
        db: Database, tasks: TaskManager, other: TaskManager, hands_off: ScriptedInspect,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspection_module, "RELOCK_ATTEMPTS", 2)
    monkeypatch.setattr(inspection_module, "RELOCK_INTERVAL", 0)

    async def lock(ctx: NodeContext) -> None:
        await other.acquire(ctx.uuid)

    hands_off.at_start = lock
    hands_off.outcome = InspectOutcome.failed("boom")
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=hands_off), uuid)
    assert await summary(db, uuid) == (states.INSPECTWAIT, None, OTHER)


async def test_hands_off_failure_leaves_a_node_that_moved_on_meanwhile(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    async def aborted_meanwhile(ctx: NodeContext) -> None:
        async with db.begin() as conn:
            await dbapi.update_node(conn, (await node(db, ctx.uuid))["id"], {
                "provision_state": states.INSPECTFAIL, "last_error": "aborted"})

    hands_off.at_start = aborted_meanwhile
    hands_off.outcome = InspectOutcome.failed("boom")
    uuid = await make_node(db)
    await inspect(inspection_of(db, tasks, fake=hands_off), uuid)
    assert await summary(db, uuid) == (states.INSPECTFAIL, "aborted", None)


# --- poll -------------------------------------------------------------------------------------


async def waiting_node(db: Database, *, driver: str = "fake", **values: Any) -> str:
    return await make_node(db, states.INSPECTWAIT, driver=driver,
                           target_provision_state=states.MANAGEABLE,
                           inspection_started_at=dbapi.utcnow(), **values)


async def test_poll_applies_done(db: Database, tasks: TaskManager,
                                 hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.done()}
    assert await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"]) == 1
    assert await summary(db, uuid) == (states.MANAGEABLE, None, None)
    assert (await node(db, uuid))["inspection_finished_at"] is not None


async def test_poll_applies_failed_with_its_message(db: Database, tasks: TaskManager,
                                                    hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.failed("discoverd inspection failed: boom")}
    assert await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"]) == 1
    assert await summary(db, uuid) == (
        states.INSPECTFAIL, "discoverd inspection failed: boom", None)


RETRYING = config.load(None, {"conductor": {"inspection_retry_codes": "BOOT_NO_DHCP"}})


def attempt(n: int, code: str | None, started: Any = None) -> dict[str, Any]:
    return {"attempt": n, "started_at": (started or dbapi.utcnow()).isoformat(),
            "result": "failed" if code else "success", "failure_code": code}


def retrying(db: Database, tasks: TaskManager, iface: ScriptedInspect) -> Inspection:
    return Inspection(RETRYING, db, tasks, DriverSet({"fake": driver(iface)}, {}),
                      Share(tasks.owner))


async def test_a_first_attempt_failed_with_a_retried_code_starts_again(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.failed("discoverd inspection failed: "
                                                      "BOOT_NO_DHCP: no DHCP lease")}
    hands_off.kept = [attempt(1, "BOOT_NO_DHCP")]
    hands_off.outcome = InspectOutcome.waiting()
    assert await retrying(db, tasks, hands_off).poll(hands_off, ["fake"]) == 1
    await tasks.workers.drain(timeout=5)
    assert hands_off.starts == 1
    assert (await node(db, uuid))["provision_state"] == states.INSPECTWAIT
    said = [e["event"] for e in await history(db, uuid)]
    assert any("its first attempt failed with BOOT_NO_DHCP, which [conductor] "
               "inspection_retry_codes retries once" in e for e in said), said


async def test_a_second_failed_attempt_is_not_retried(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.failed("BOOT_NO_DHCP again")}
    hands_off.kept = [attempt(1, "BOOT_NO_DHCP"), attempt(2, "BOOT_NO_DHCP")]
    assert await retrying(db, tasks, hands_off).poll(hands_off, ["fake"]) == 1
    assert hands_off.starts == 0
    assert await summary(db, uuid) == (states.INSPECTFAIL, "BOOT_NO_DHCP again", None)


async def test_an_earlier_inspections_attempts_do_not_count(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    import datetime as dt
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.failed("BOOT_NO_DHCP")}
    hands_off.kept = [attempt(1, "BOOT_NO_DHCP", dbapi.utcnow() - dt.timedelta(hours=1)),
                      attempt(2, "BOOT_NO_DHCP")]
    hands_off.outcome = InspectOutcome.waiting()
    assert await retrying(db, tasks, hands_off).poll(hands_off, ["fake"]) == 1
    await tasks.workers.drain(timeout=5)
    assert hands_off.starts == 1


async def test_a_code_not_marked_transient_fails_the_node(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.failed("RULE_FAILED: a rule failed")}
    hands_off.kept = [attempt(1, "RULE_FAILED")]
    assert await retrying(db, tasks, hands_off).poll(hands_off, ["fake"]) == 1
    assert hands_off.starts == 0
    assert (await node(db, uuid))["provision_state"] == states.INSPECTFAIL


async def test_without_retry_codes_the_attempts_are_not_even_read(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.failed("BOOT_NO_DHCP")}
    hands_off.kept = None  # would not be retried either way; the default reads nothing
    assert await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"]) == 1
    assert (await node(db, uuid))["provision_state"] == states.INSPECTFAIL


def test_the_retry_codes_are_discoverds_failure_codes() -> None:
    from ironsight.discoverd import diagnosis
    assert config.FAILURE_CODES == diagnosis.CODES
    assert tuple(
        p for p in diagnosis.PHASES if p in config.DEADLINE_STEPS) == config.DEADLINE_STEPS


async def test_poll_asks_once_about_every_waiting_node(db: Database, tasks: TaskManager,
                                                       hands_off: ScriptedInspect) -> None:
    uuids = {await waiting_node(db) for _ in range(3)}
    await make_node(db)  # not waiting: not asked about
    await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"])
    assert len(hands_off.asked) == 1
    assert {w.uuid for w in hands_off.asked[0]} == uuids
    assert all(w.waiting_since and w.inspection_started_at for w in hands_off.asked[0])


async def test_poll_asks_only_about_nodes_of_its_drivers(db: Database, tasks: TaskManager,
                                                         hands_off: ScriptedInspect) -> None:
    ours = await waiting_node(db)
    await waiting_node(db, driver="another")
    await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"])
    assert [w.uuid for w in hands_off.asked[0]] == [ours]


async def test_poll_without_waiting_nodes_asks_nothing(db: Database, tasks: TaskManager,
                                                       hands_off: ScriptedInspect) -> None:
    await make_node(db)
    assert await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"]) == 0
    assert hands_off.asked == []


async def test_poll_leaves_nodes_still_inspecting(db: Database, tasks: TaskManager,
                                                  hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    assert await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"]) == 0
    assert await summary(db, uuid) == (states.INSPECTWAIT, None, None)


async def test_poll_skips_locked_nodes_until_a_later_pass(
        db: Database, tasks: TaskManager, other: TaskManager,
        hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.done()}
    ins = inspection_of(db, tasks, fake=hands_off)
    held = await other.acquire(uuid)
    assert await ins.poll(hands_off, ["fake"]) == 0
    assert hands_off.asked == []  # a locked node is not even asked about
    await held.release()
    assert await ins.poll(hands_off, ["fake"]) == 1


async def test_poll_skips_a_node_locked_after_it_was_asked_about(
        db: Database, tasks: TaskManager, other: TaskManager,
        hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    ins = inspection_of(db, tasks, fake=hands_off)

    async def lock_then_answer(waiting: Sequence[WaitingNode]) -> dict[str, InspectOutcome]:
        await other.acquire(uuid)
        return {uuid: InspectOutcome.done()}

    hands_off.poll = lock_then_answer  # type: ignore[method-assign]
    assert await ins.poll(hands_off, ["fake"]) == 0
    assert await summary(db, uuid) == (states.INSPECTWAIT, None, OTHER)


async def test_poll_of_a_service_that_cannot_be_reached_fails_no_node(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.poll_error = IronsightError("discoverd is down")
    assert await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"]) == 0
    assert await summary(db, uuid) == (states.INSPECTWAIT, None, None)


def test_one_poll_task_per_interface_class_for_all_its_drivers(db: Database,
                                                              tasks: TaskManager) -> None:
    ins = inspection_of(db, tasks, fake=ScriptedInspect(CONF), other=ScriptedInspect(CONF),
                        none=None)
    (name, period, _poll), = ins.poll_tasks()
    assert (name, period) == ("scripted-status", 10.0)


async def test_the_poll_task_covers_every_driver_of_its_class(db: Database,
                                                              tasks: TaskManager) -> None:
    first, second = ScriptedInspect(CONF), ScriptedInspect(CONF)
    ins = inspection_of(db, tasks, fake=first, other=second)
    uuids = {await waiting_node(db), await waiting_node(db, driver="other")}
    (_name, _period, poll), = ins.poll_tasks()
    await poll()
    assert {w.uuid for w in first.asked[0]} == uuids


async def test_the_next_pass_comes_soon_while_a_report_is_being_processed(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    hands_off.busy_poll_period = 0.1
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.waiting()}
    (_name, _period, poll), = inspection_of(db, tasks, fake=hands_off).poll_tasks()
    assert (await poll()).next_in == 0.1


async def test_the_next_pass_waits_the_period_when_no_report_is_being_processed(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    hands_off.busy_poll_period = 0.1
    await waiting_node(db)
    (_name, _period, poll), = inspection_of(db, tasks, fake=hands_off).poll_tasks()
    assert (await poll()).next_in == 10.0


async def test_an_interface_without_a_busy_period_is_polled_every_period(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    hands_off.outcomes = {uuid: InspectOutcome.waiting()}
    (_name, _period, poll), = inspection_of(db, tasks, fake=hands_off).poll_tasks()
    assert (await poll()).next_in == 10.0


def test_an_interface_with_no_poll_period_is_not_polled(db: Database,
                                                        tasks: TaskManager) -> None:
    quiet = ScriptedInspect(CONF)
    quiet.poll_period = 0
    assert inspection_of(db, tasks, fake=quiet).poll_tasks() == []


# --- aborts -----------------------------------------------------------------------------------


async def abort_values(ins: Inspection, tasks: TaskManager, uuid: str) -> dict[str, Any]:
    async with tasks.locked(uuid) as task:
        return await ins.abort_values(task)


def pending(flag: bool = True, **more: Any) -> dict[str, Any]:
    """driver_internal_info with the conductor's start record saying so (start_record.py)."""
    return {**more, "inspection_start": {"starts": 1, "lost": None, "interrupted": False,
                                         "abort_pending": flag}}


async def test_an_abort_pending_from_an_earlier_release_is_read(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    # the interface-named key a node in inspect failed may carry across an upgrade
    uuid = await make_node(db, states.INSPECTFAIL,
                           driver_internal_info={"scripted_abort_pending": True})
    await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"])
    assert hands_off.aborted == [uuid]
    assert (await node(db, uuid))["driver_internal_info"] == pending(False)


async def test_an_abort_that_reaches_its_service_changes_nothing(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db)
    ins = inspection_of(db, tasks, fake=hands_off)
    assert await abort_values(ins, tasks, uuid) == {}
    assert hands_off.aborted == [uuid]


async def test_an_unreachable_abort_is_remembered(db: Database, tasks: TaskManager,
                                                  hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db, driver_internal_info={"kept": 1})
    hands_off.reachable = False
    ins = inspection_of(db, tasks, fake=hands_off)
    assert await abort_values(ins, tasks, uuid) == {"driver_internal_info": pending(kept=1)}


async def test_a_remembered_abort_is_forgotten_once_it_reaches(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await waiting_node(db, driver_internal_info=pending(kept=1))
    ins = inspection_of(db, tasks, fake=hands_off)
    assert await abort_values(ins, tasks, uuid) == {"driver_internal_info": pending(False,
                                                                                    kept=1)}


async def test_abort_of_a_driver_without_inspection_has_nothing_to_abort(
        db: Database, tasks: TaskManager) -> None:
    uuid = await waiting_node(db)
    assert await abort_values(inspection_of(db, tasks, fake=None), tasks, uuid) == {}


async def test_poll_retries_a_remembered_abort_and_forgets_it_when_it_reaches(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await make_node(db, states.INSPECTFAIL, driver_internal_info=pending())
    await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"])
    assert hands_off.aborted == [uuid]
    row = await node(db, uuid)
    assert (row["driver_internal_info"], row["reservation"]) == (pending(False), None)
    assert (await history(db, uuid))[-1]["event"] == "Abort reached scripted"


async def test_poll_keeps_a_remembered_abort_that_still_does_not_reach(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    uuid = await make_node(db, states.INSPECTFAIL, driver_internal_info=pending())
    hands_off.reachable = False
    await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"])
    assert (await node(db, uuid))["driver_internal_info"] == pending()


async def test_poll_does_not_abort_failed_nodes_without_a_remembered_abort(
        db: Database, tasks: TaskManager, hands_off: ScriptedInspect) -> None:
    await make_node(db, states.INSPECTFAIL)
    await inspection_of(db, tasks, fake=hands_off).poll(hands_off, ["fake"])
    assert hands_off.aborted == []


# --- reports ----------------------------------------------------------------------------------


async def test_a_report_goes_to_the_interface_that_takes_reports(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    ins = inspection_of(db, tasks, fake=iface)
    assert await ins.continue_inspection({"inventory": {}}) == {"uuid": "from-the-interface"}
    assert iface.reports == [{"inventory": {}}]


async def test_a_reports_callback_token_goes_to_the_interface_unchanged(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    await inspection_of(db, tasks, fake=iface).continue_inspection({}, "the-token")
    assert iface.tokens == ["the-token"]


async def test_a_report_with_no_interface_taking_reports_is_refused(
        db: Database, tasks: TaskManager, iface: ScriptedInspect) -> None:
    iface.accepts_reports = False
    with pytest.raises(DiscoverdDisabled):
        await inspection_of(db, tasks, fake=iface).continue_inspection({})
