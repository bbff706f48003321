"""Fenced locks: a write made under a node lock lands only while its writer still holds the
lock it took (this owner, this epoch). A conductor that stalled past its heartbeat timeout
was declared dead and its locks released; when it comes back, its stale results are dropped
and the lock of whoever holds the node now is left alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.conductor.task import NodeTask, TaskManager
from ironsight.baremetal.db import api as dbapi
from ironsight.common.db import Database
from ironsight.common.exceptions import LockLost

from .helpers import OTHER, OWNER, history, make_node, node


async def declared_dead(db: Database, task: NodeTask) -> None:
    """What the dead-conductor recovery does to a lock: release it, whoever holds it."""
    async with db.begin() as conn:
        await dbapi.update_node(conn, task.node["id"], {"reservation": None})


async def test_each_lock_has_a_new_epoch(db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db)
    first = await tasks.acquire(uuid)
    await first.release()
    second = await tasks.acquire(uuid)
    assert second.epoch == first.epoch + 1


async def test_a_write_after_the_lock_was_taken_over_is_refused_and_changes_nothing(
        db: Database, tasks: TaskManager, other: TaskManager) -> None:
    uuid = await make_node(db)
    stale = await tasks.acquire(uuid)
    await declared_dead(db, stale)
    await other.acquire(uuid)
    events = len(await history(db, uuid))
    with pytest.raises(LockLost, match=f"the lock of {OWNER} was released or taken over"):
        await stale.save("Power state is now power on", power_state=states.POWER_ON)
    row = await node(db, uuid)
    assert (row["power_state"], row["reservation"]) == (states.POWER_OFF, OTHER)
    assert len(await history(db, uuid)) == events


async def test_a_lost_lock_is_refused_even_to_its_own_owner_locking_again(
        db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db)
    stale = await tasks.acquire(uuid)
    await declared_dead(db, stale)
    again = await tasks.acquire(uuid)  # the same conductor, back from its stall
    with pytest.raises(LockLost):
        await stale.transition("inspect", target=states.MANAGEABLE)
    await again.transition("inspect", target=states.MANAGEABLE)
    assert (await node(db, uuid))["provision_state"] == states.INSPECTING


async def test_releasing_a_lost_lock_leaves_the_new_holders_alone(
        db: Database, tasks: TaskManager, other: TaskManager) -> None:
    uuid = await make_node(db)
    stale = await tasks.acquire(uuid)
    await declared_dead(db, stale)
    await other.acquire(uuid)
    await stale.release()
    assert (await node(db, uuid))["reservation"] == OTHER


async def test_fence_refuses_a_transaction_under_a_lost_lock(
        db: Database, tasks: TaskManager, other: TaskManager) -> None:
    uuid = await make_node(db)
    stale = await tasks.acquire(uuid)
    await declared_dead(db, stale)
    await other.acquire(uuid)
    with pytest.raises(LockLost):
        async with db.begin() as conn:
            await stale.fence(conn)


async def test_fence_lets_the_holder_write(db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db)
    task = await tasks.acquire(uuid)
    async with db.begin() as conn:
        await task.fence(conn)
        await dbapi.add_history(conn, task.node["id"], "written under the lock")
    assert (await history(db, uuid))[-1]["event"] == "written under the lock"


async def test_a_worker_whose_lock_was_lost_drops_its_result_and_records_no_failure(
        db: Database, tasks: TaskManager, other: TaskManager) -> None:
    uuid = await make_node(db)
    stalled = asyncio.Event()
    resume = asyncio.Event()
    finished = asyncio.Event()

    async def slow_power_on(task: NodeTask) -> None:
        stalled.set()
        await resume.wait()
        try:
            await task.save("Power state is now power on", power_state=states.POWER_ON,
                            release=True)
        finally:
            finished.set()

    async with tasks.locked(uuid) as task:
        task.spawn(slow_power_on, "power")
    await stalled.wait()
    await declared_dead(db, task)
    async with other.locked(uuid) as theirs:
        await theirs.save("Power state is now power off", power_state=states.POWER_OFF)
        resume.set()
        await finished.wait()
        await asyncio.sleep(0.05)  # the worker's clean-up (release) runs
        row = await node(db, uuid)
        assert (row["power_state"], row["reservation"], row["last_error"]) == (
            states.POWER_OFF, OTHER, None)
    events = [e["event"] for e in await history(db, uuid)]
    assert "Power state is now power on" not in events
    assert not any("failed unexpectedly" in e for e in events)


async def add_port(db: Database, uuid: str, mac: str) -> dict[str, Any]:
    event = dbapi.history_row(None, f"Port {mac} created", event_type="port")
    async with db.single() as conn:
        row = await dbapi.create_port(conn, uuid, {"address": mac}, event)
    assert row is not None
    return row


async def read_port(db: Database, port: dict[str, Any]) -> dict[str, Any]:
    async with db.read() as conn:
        return await dbapi.get_port(conn, port["uuid"])


async def write_port(db: Database, port: dict[str, Any], **values: Any) -> bool:
    async with db.single() as conn:
        return await dbapi.update_port_if_unlocked(conn, port, values)


async def test_a_port_write_while_its_node_is_unlocked_lands(db: Database) -> None:
    uuid = await make_node(db)
    port = await read_port(db, await add_port(db, uuid, "52:54:00:00:00:01"))
    assert await write_port(db, port, pxe_enabled=False)
    assert (await read_port(db, port))["pxe_enabled"] is False


async def test_a_port_write_while_its_node_is_locked_is_refused_and_changes_nothing(
        db: Database, tasks: TaskManager) -> None:
    uuid = await make_node(db)
    port = await read_port(db, await add_port(db, uuid, "52:54:00:00:00:02"))
    await tasks.acquire(uuid)
    assert not await write_port(db, port, pxe_enabled=False)
    assert (await read_port(db, port))["pxe_enabled"] is True


async def test_a_port_write_after_the_port_changed_is_refused_and_changes_nothing(
        db: Database) -> None:
    uuid = await make_node(db)
    port = await read_port(db, await add_port(db, uuid, "52:54:00:00:00:03"))
    assert await write_port(db, port, extra={"a": 1})
    assert not await write_port(db, port, pxe_enabled=False)  # `port` is as read before
    assert (await read_port(db, port))["pxe_enabled"] is True
