"""Allocations left `allocating` by a replica that died are taken over by a live one and
finished (a node matched, or `error` with why), as Ironic's conductors take over an offline
conductor's allocations. The takeover is one conditional write (two live replicas never both
process one), and a replica that was only stalled changes nothing once taken over."""

from __future__ import annotations

import asyncio
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.conductor.allocations import ALLOCATIONS, Allocations
from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.db import allocations as dballoc
from ironsight.baremetal.db import inventory as inv
from ironsight.common.db import Database
from ironsight.common.workers import WorkerPool

from .helpers import OTHER, OWNER, make_node, node

DEAD = "conductor-gone:300"


async def left_allocating(db: Database, conductor: str | None, **values: Any) -> dict[str, Any]:
    """An allocation as a replica leaves it when it dies mid-processing."""
    async with db.begin() as conn:
        row = await inv.create(conn, ALLOCATIONS, {
            "resource_class": "gold", "state": "allocating", "conductor": conductor, **values})
        return await inv.get(conn, ALLOCATIONS, row["uuid"])


async def settled(db: Database, uuid: str) -> dict[str, Any]:
    """The allocation once its (re)processing has ended."""
    for _ in range(200):
        async with db.read() as conn:
            row = await inv.get(conn, ALLOCATIONS, uuid)
        if row["state"] != "allocating":
            return row
        await asyncio.sleep(0.02)
    raise AssertionError(f"allocation {uuid} still allocating")


async def test_a_dead_replicas_allocation_is_taken_over_and_matches_a_free_node(
        db: Database, tasks: TaskManager) -> None:
    free = await make_node(db, states.AVAILABLE, resource_class="gold")
    orphan = await left_allocating(db, DEAD)
    assert await Allocations(db, tasks).take_over_orphans([OWNER]) == 1
    done = await settled(db, orphan["uuid"])
    assert (done["state"], done["node_uuid"], done["conductor"]) == ("active", free, OWNER)
    assert (await node(db, free))["instance_uuid"] == orphan["uuid"]


async def test_a_taken_over_allocation_without_a_match_ends_in_error_with_why(
        db: Database, tasks: TaskManager) -> None:
    orphan = await left_allocating(db, DEAD, resource_class="platinum")
    await Allocations(db, tasks).take_over_orphans([OWNER])
    done = await settled(db, orphan["uuid"])
    assert done["state"] == "error"
    assert "no available nodes match the resource class platinum" in done["last_error"]


async def test_an_allocation_without_a_recorded_conductor_is_taken_over(
        db: Database, tasks: TaskManager) -> None:
    await make_node(db, states.AVAILABLE, resource_class="gold")
    orphan = await left_allocating(db, None)  # stored before the conductor was recorded
    assert await Allocations(db, tasks).take_over_orphans([OWNER]) == 1
    assert (await settled(db, orphan["uuid"]))["state"] == "active"


async def test_a_live_replicas_allocation_is_left_to_it(
        db: Database, tasks: TaskManager) -> None:
    await make_node(db, states.AVAILABLE, resource_class="gold")
    busy = await left_allocating(db, OTHER)
    assert await Allocations(db, tasks).take_over_orphans([OWNER, OTHER]) == 0
    async with db.read() as conn:
        row = await inv.get(conn, ALLOCATIONS, busy["uuid"])
    assert (row["state"], row["conductor"]) == ("allocating", OTHER)


async def test_of_two_replicas_taking_over_one_allocation_only_one_wins(
        db: Database) -> None:
    orphan = await left_allocating(db, DEAD)
    async with db.begin() as conn:
        first = await dballoc.take_over(conn, orphan, OWNER)
    async with db.begin() as conn:
        second = await dballoc.take_over(conn, orphan, OTHER)  # read before the first won
    assert (first, second) == (True, False)


async def test_a_stalled_replica_taken_over_can_neither_claim_nor_fail_the_allocation(
        db: Database) -> None:
    free = await make_node(db, states.AVAILABLE, resource_class="gold")
    orphan = await left_allocating(db, DEAD)
    async with db.begin() as conn:
        await dballoc.take_over(conn, orphan, OWNER)
    async with db.begin() as conn:  # the stalled replica wakes up
        claimed = await dballoc.start(conn, orphan["id"], (await node(db, free))["id"], DEAD)
        failed = await dballoc.fail(conn, orphan["id"], "too late", DEAD)
    async with db.read() as conn:
        row = await inv.get(conn, ALLOCATIONS, orphan["uuid"])
    assert (claimed, failed) == (False, False)
    assert (row["state"], row["last_error"], row["conductor"]) == ("allocating", None, OWNER)


async def test_no_more_are_taken_over_than_there_are_free_workers(db: Database) -> None:
    pool = WorkerPool(1)
    tasks = TaskManager(db, OWNER, pool)
    for _ in range(3):
        await left_allocating(db, DEAD, resource_class="platinum")
    try:
        assert await Allocations(db, tasks).take_over_orphans([OWNER]) == 1
    finally:
        await pool.drain(timeout=5)
