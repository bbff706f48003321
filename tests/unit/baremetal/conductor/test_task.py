"""Node locks (TaskManager) and the tasks that hold them (NodeTask): a lock is given back
whatever way its holder ends, and work spawned under it runs in a worker that holds it."""

from __future__ import annotations

import asyncio

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.conductor import task as task_module
from ironsight.baremetal.conductor.task import NodeTask, TaskManager, Work
from ironsight.common.db import Database
from ironsight.common.exceptions import DatabaseUnavailable, NodeLocked, NotFound
from ironsight.common.workers import WorkerPool

from .helpers import OTHER, OWNER, history, make_node, node

MISSING = "99999999-9999-4999-8999-999999999999"


async def reservation(db: Database, uuid: str) -> str | None:
    return (await node(db, uuid))["reservation"]


# --- acquiring --------------------------------------------------------------------------------


async def test_acquire_reserves_the_node_for_its_owner(db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db)
    task = await tasks.acquire(uuid)
    assert (task.uuid, task.node["reservation"]) == (uuid, OWNER)
    assert await reservation(db, uuid) == OWNER


async def test_acquire_by_name(db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db, name="node-1")
    assert (await tasks.acquire("node-1")).uuid == uuid


async def test_acquire_of_a_locked_node_fails_naming_the_holder(
        db: Database, tasks: TaskManager, other: TaskManager) -> None:
    uuid = await make_node(db)
    await other.acquire(uuid)
    with pytest.raises(NodeLocked, match=f"is locked by host {OTHER}") as raised:
        await tasks.acquire(uuid, attempts=1)
    assert raised.value.code == 409
    assert await reservation(db, uuid) == OTHER


async def test_acquire_of_an_unknown_node_is_not_found(tasks: TaskManager) -> None:
    with pytest.raises(NotFound):
        await tasks.acquire(MISSING, attempts=1)


async def test_acquire_waits_for_a_lock_given_back_meanwhile(
        db: Database, tasks: TaskManager, other: TaskManager) -> None:
    uuid = await make_node(db)
    held = await other.acquire(uuid)
    waiting = asyncio.get_running_loop().create_task(
        tasks.acquire(uuid, attempts=100, interval=0.005))
    await asyncio.sleep(0)  # lets its first attempt run: it finds the node locked
    assert not waiting.done()
    await held.release()
    assert (await asyncio.wait_for(waiting, timeout=5)).node["reservation"] == OWNER


# --- locked -----------------------------------------------------------------------------------


async def test_locked_holds_the_lock_in_the_block_and_releases_it_at_the_end(
        db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db)
    async with tasks.locked(uuid):
        assert await reservation(db, uuid) == OWNER
    assert await reservation(db, uuid) is None


async def test_a_block_that_raises_releases_the_lock_and_spawns_nothing(
        db: Database, tasks: TaskManager, workers: WorkerPool) -> None:
    uuid = await make_node(db)
    ran: list[str] = []

    async def work(task: NodeTask) -> None:
        ran.append(task.uuid)

    with pytest.raises(RuntimeError, match="refused"):
        async with tasks.locked(uuid) as task:
            task.spawn(work, "work")
            raise RuntimeError("refused")
    await workers.drain(timeout=5)
    assert ran == []
    assert await reservation(db, uuid) is None


async def test_spawned_work_runs_after_the_block_still_holding_the_lock(
        db: Database, tasks: TaskManager, workers: WorkerPool) -> None:
    uuid = await make_node(db)
    seen: list[tuple[bool, str | None]] = []
    block_ended = False

    async def work(task: NodeTask) -> None:
        seen.append((block_ended, await reservation(db, task.uuid)))

    async with tasks.locked(uuid) as task:
        task.spawn(work, "work")
    block_ended = True
    await workers.drain(timeout=5)
    assert seen == [(True, OWNER)]


async def test_spawned_work_releases_the_lock_when_it_ends(
        db: Database, tasks: TaskManager, workers: WorkerPool) -> None:
    uuid = await make_node(db)
    async with tasks.locked(uuid) as task:
        task.spawn(lambda t: asyncio.sleep(0), "work")
    assert await reservation(db, uuid) == OWNER  # the worker has it now
    await workers.drain(timeout=5)
    assert await reservation(db, uuid) is None


async def test_a_crashing_worker_fails_the_node_and_releases_the_lock(
        db: Database, tasks: TaskManager, workers: WorkerPool) -> None:
    uuid = await make_node(db, states.INSPECTING)

    async def crash(task: NodeTask) -> None:
        raise RuntimeError("boom")

    async with tasks.locked(uuid) as task:
        task.spawn(crash, "inspect")
    await workers.drain(timeout=5)
    row = await node(db, uuid)
    assert (row["provision_state"], row["last_error"], row["reservation"]) == (
        states.INSPECTFAIL, "inspect failed unexpectedly: boom", None)


def database_away_for(calls: int, work: Work) -> Work:
    """`work`, raising DatabaseUnavailable on its first `calls` runs."""
    left = [calls]

    async def flaky(task: NodeTask) -> None:
        if left[0]:
            left[0] -= 1
            raise DatabaseUnavailable(RuntimeError("connection refused"))
        await work(task)
    return flaky


async def power_on(task: NodeTask) -> None:
    await task.save("Power state is now power on", power_state=states.POWER_ON)


async def test_work_that_meets_an_unavailable_database_runs_again_under_its_lock(
        db: Database, tasks: TaskManager, workers: WorkerPool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_module, "DB_RETRY_FIRST", 0.01)
    uuid = await make_node(db)
    async with tasks.locked(uuid) as task:
        task.spawn(database_away_for(2, power_on), "power")
    await workers.drain(timeout=5)
    row = await node(db, uuid)
    assert (row["power_state"], row["last_error"], row["reservation"]) == (
        states.POWER_ON, None, None)


async def test_work_whose_database_stays_away_fails_as_a_crash(
        db: Database, tasks: TaskManager, workers: WorkerPool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_module, "DB_RETRY_FIRST", 0.001)
    monkeypatch.setattr(task_module, "DB_RETRY_MAX", 0.001)
    uuid = await make_node(db, states.INSPECTING)
    async with tasks.locked(uuid) as task:
        task.spawn(database_away_for(task_module.WORK_DB_ATTEMPTS, power_on), "inspect")
    await workers.drain(timeout=5)
    row = await node(db, uuid)
    assert (row["provision_state"], row["reservation"]) == (states.INSPECTFAIL, None)
    assert row["last_error"] == ("inspect failed unexpectedly: The database is unavailable; "
                                 "please retry later.")


async def test_a_crash_where_no_fail_event_exists_is_recorded_as_the_error(
        db: Database, tasks: TaskManager, workers: WorkerPool) -> None:
    uuid = await make_node(db, states.MANAGEABLE)

    async def crash(task: NodeTask) -> None:
        raise RuntimeError("boom")

    async with tasks.locked(uuid) as task:
        task.spawn(crash, "power")
    await workers.drain(timeout=5)
    row = await node(db, uuid)
    assert (row["provision_state"], row["last_error"], row["reservation"]) == (
        states.MANAGEABLE, "power failed unexpectedly: boom", None)
    assert (await history(db, uuid))[-1]["severity"] == "ERROR"


async def test_work_spawned_by_a_block_that_gave_the_lock_back_is_not_run(
        db: Database, tasks: TaskManager, workers: WorkerPool) -> None:
    uuid = await make_node(db)
    ran: list[str] = []

    async def work(task: NodeTask) -> None:
        ran.append(task.uuid)

    async with tasks.locked(uuid) as task:
        task.spawn(work, "work")
        await task.save("done already", release=True)
    await workers.drain(timeout=5)
    assert ran == []


# --- try_locked -------------------------------------------------------------------------------


async def test_try_locked_yields_none_for_a_locked_node(
        db: Database, tasks: TaskManager, other: TaskManager) -> None:
    uuid = await make_node(db)
    await other.acquire(uuid)
    async with tasks.try_locked(uuid) as task:
        assert task is None
    assert await reservation(db, uuid) == OTHER


async def test_try_locked_yields_none_for_a_node_that_is_gone(tasks: TaskManager) -> None:
    async with tasks.try_locked(MISSING) as task:
        assert task is None


async def test_try_locked_releases_at_the_end_of_the_block(db: Database,
                                                           tasks: TaskManager) -> None:
    uuid = await make_node(db)
    async with tasks.try_locked(uuid) as task:
        assert task is not None and await reservation(db, uuid) == OWNER
    assert await reservation(db, uuid) is None


# --- saving -----------------------------------------------------------------------------------


async def test_save_updates_the_node_and_its_history_together(db: Database,
                                                              tasks: TaskManager) -> None:
    uuid = await make_node(db)
    async with tasks.locked(uuid) as task:
        await task.save("Maintenance set", event_type="maintenance", maintenance=True)
        assert task.node["maintenance"] is True
    assert (await node(db, uuid))["maintenance"] is True
    event = (await history(db, uuid))[-1]
    assert (event["event"], event["event_type"], event["conductor"]) == (
        "Maintenance set", "maintenance", OWNER)


async def test_save_with_release_gives_the_lock_back_in_the_same_update(
        db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db)
    async with tasks.locked(uuid) as task:
        await task.save(release=True, extra={"a": 1})
        assert task.released
        row = await node(db, uuid)
        assert (row["reservation"], row["extra"]) == (None, {"a": 1})


async def test_transition_follows_the_state_machine_and_records_it(db: Database,
                                                                   tasks: TaskManager) -> None:
    uuid = await make_node(db, states.MANAGEABLE)
    async with tasks.locked(uuid) as task:
        assert await task.transition("inspect", target=states.MANAGEABLE) == states.INSPECTING
    row = await node(db, uuid)
    assert (row["provision_state"], row["target_provision_state"]) == (
        states.INSPECTING, states.MANAGEABLE)
    assert (await history(db, uuid))[-1]["event"] == (
        "Provision state changed from manageable to inspecting (inspect)")


async def test_transition_the_state_machine_does_not_allow_is_a_bug(
        db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db, states.AVAILABLE)
    with pytest.raises(RuntimeError, match="event inspect not allowed from available"):
        async with tasks.locked(uuid) as task:
            await task.transition("inspect")
    assert (await node(db, uuid))["provision_state"] == states.AVAILABLE
