"""Allocations (Ironic's `/v1/allocations`): the scheduling of a node by resource class and
traits, the payoff of inspection.

As in Ironic, an allocation is created `allocating` and processed in a worker: the nodes that
match (available, not in maintenance nor retired, with a known power state, no instance, no
allocation, of its resource class, with all its traits, among its candidates) are tried in
random order (one named as the allocation first), each claimed by one conditional write, so
that concurrent allocations never share a node; one that finds none ends `error` with Ironic's
`last_error`. Backfilling (an allocation for a node deployed without one) is done at once.

An allocation records the replica processing it; one left `allocating` by a replica that died
(kill -9, a lost host) is taken over by a live replica's dead-conductor check and processed
again from the start, as Ironic's conductors take over the allocations of an offline one. The
writes that end processing are fenced by that record, so a replica that was only stalled
changes nothing once it has been taken over.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.db import allocations as dballoc
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db import inventory as inv
from ironsight.baremetal.db import traits as dbtraits
from ironsight.baremetal.db.inventory import Kind
from ironsight.baremetal.db.models import allocations
from ironsight.common.db import Database
from ironsight.common.exceptions import Conflict, Invalid, InvalidParameterValue, NotFound

LOG = logging.getLogger(__name__)

Row = dict[str, Any]

ALLOCATIONS = Kind(allocations, "Allocation", named=True, duplicates=(
    ("name", "An allocation with name {name} already exists."),),
    json_defaults={"extra": {}, "traits": [], "candidate_nodes": []})

# A round over the matching nodes is tried this many times in all, LOCK_INTERVAL s apart, when
# nodes were locked or changed while it ran (Ironic's node_locked_retry_attempts/_interval).
ATTEMPTS = 3
LOCK_INTERVAL = 0.5
# Ironic's provision states in which a node with an allocation may change it (with the
# states where nothing runs).
UPDATE_ALLOWED = (states.DEPLOYFAIL, states.INSPECTING, states.INSPECTFAIL, states.INSPECTWAIT,
                  states.CLEANFAIL, "error", states.VERIFYING, states.ADOPTFAIL,
                  states.RESCUEFAIL, states.UNRESCUEFAIL, "service", "service hold",
                  states.SERVICEFAIL)
INSTANCE_REMOVABLE = (*UPDATE_ALLOWED, states.AVAILABLE, states.ENROLL, states.MANAGEABLE)


class AllocationFailed(Exception):
    def __init__(self, uuid: str, error: str) -> None:
        super().__init__(f"Failed to process allocation {uuid}: {error}.")


class _Lost(Exception):
    """The node was taken, locked or changed since it was read: the claim is undone."""


class Allocations:
    def __init__(self, db: Database, tasks: TaskManager) -> None:
        self.db = db
        self.tasks = tasks

    async def get(self, ident: str) -> Row:
        async with self.db.read() as conn:
            return await inv.get(conn, ALLOCATIONS, ident)

    async def of_node(self, ident: str) -> Row:
        """The allocation of a node (404 when the node or the allocation is missing)."""
        async with self.db.read() as conn:
            node = await dbapi.get_node(conn, ident)
            rows = await inv.list_(conn, ALLOCATIONS, filters={"node_id": node["id"]}, limit=1,
                                   marker=None, sort_key="id", sort_dir="asc")
        if not rows:
            raise NotFound(f"Allocation for node {ident} was not found")
        return rows[0]

    async def uuids_of(self, allocation_ids: list[int]) -> dict[int, str]:
        async with self.db.read() as conn:
            return await dballoc.uuids_of(conn, allocation_ids)

    # --- create and process ---------------------------------------------------------------

    async def create(self, values: Row, node: str | None) -> Row:
        """Store the allocation; backfill it at once for `node`, else process it in a worker.
        The allocation as stored (`allocating`, or the backfill's outcome)."""
        values = dict(values)
        target = None
        async with self.db.read() as conn:
            if node is not None:
                target = await _node(conn, node, "node")
                values["resource_class"] = values.get("resource_class") or \
                    target["resource_class"]
                if not values.get("uuid") and target["instance_uuid"]:
                    values["uuid"] = target["instance_uuid"]
            if not values.get("resource_class"):
                raise Invalid("The resource_class field is mandatory when not backfilling")
            values["candidate_nodes"] = await _candidates(
                conn, values.get("candidate_nodes") or [])
        if target is None:
            self.tasks.workers.check_free()
        values.update(state="allocating", node_id=None, last_error=None,
                      conductor=self.tasks.owner)
        async with self.db.begin() as conn:
            row = await inv.create(conn, ALLOCATIONS, values)
            row = await inv.get(conn, ALLOCATIONS, row["uuid"])
        if target is not None:
            await self._backfill(row, target)
            return await self.get(row["uuid"])
        self._spawn(row)
        return row

    def _spawn(self, row: Row) -> None:
        self.tasks.workers.spawn(lambda: self.process(row), f"allocation {row['uuid']}",
                                 on_crash=lambda exc: self._fail(
                                     row, f"Unexpected exception during allocation: {exc}"))

    async def take_over_orphans(self, live: Any) -> int:
        """Process again the allocations left `allocating` by replicas not among `live` (a
        select of the registered replicas' names): each taken over by one conditional write,
        so that two live replicas never both take one. Only as many as there are free
        workers: the rest wait for the next pass. Returns how many were taken over."""
        async with self.db.read() as conn:
            found = await dballoc.orphans(conn, live)
        taken = 0
        for row in found:
            if self.tasks.workers.busy >= self.tasks.workers.size:
                break
            async with self.db.begin() as conn:
                if not await dballoc.take_over(conn, row, self.tasks.owner):
                    continue  # another replica took it, or it ended meanwhile
            LOG.warning("Allocation %s: its conductor %s is gone; taking it over",
                        row["uuid"], row["conductor"])
            self._spawn({**row, "conductor": self.tasks.owner})
            taken += 1
        return taken

    async def process(self, allocation: Row) -> None:
        """Find and claim a node (Ironic's do_allocate); on failure, the allocation ends
        `error` with why."""
        try:
            node = await self._allocate(allocation)
        except AllocationFailed as exc:
            LOG.error("%s", exc)
            await self._fail(allocation, str(exc))
            return
        if node is not None:
            LOG.info("Node %s has been successfully reserved for allocation %s",
                     node["uuid"], allocation["uuid"])

    async def _allocate(self, allocation: Row) -> Row | None:
        uuid, rsc = allocation["uuid"], allocation["resource_class"]
        wanted = set(allocation["traits"] or [])
        async with self.db.read() as conn:
            holder = await dballoc.instance_holder(conn, uuid)
        if holder is not None:
            raise AllocationFailed(uuid, f"Instance {uuid} is already associated with a node, "
                                         f"it cannot be associated with this other node "
                                         f"{holder}")
        suitable = 0
        for attempt in range(ATTEMPTS):
            if attempt:
                await asyncio.sleep(LOCK_INTERVAL)
            async with self.db.read() as conn:
                found = await dballoc.free_nodes(conn, resource_class=rsc,
                                                 uuids=list(allocation["candidate_nodes"] or []),
                                                 owner=allocation["owner"])
                traits = await dbtraits.traits_of(conn, [n["id"] for n in found])
            if not found and attempt == 0:
                raise AllocationFailed(uuid, (
                    "none of the requested nodes are available and match the resource class "
                    if allocation["candidate_nodes"] else
                    "no available nodes match the resource class ") + str(rsc))
            found = [n for n in found if wanted <= set(traits.get(n["id"], []))]
            if not found and attempt == 0:
                raise AllocationFailed(uuid, "no suitable nodes have the requested traits "
                                             + ", ".join(sorted(wanted)))
            if not found:
                raise AllocationFailed(uuid, "all nodes were filtered out during reservation")
            suitable = len(found)
            random.shuffle(found)  # concurrent allocations do not try the same order
            if allocation["name"]:  # a node named as the allocation first (as Ironic)
                found.sort(key=lambda n: n["name"] != allocation["name"])
            for node in found:
                if node["reservation"] is not None:
                    continue  # its lock may be changing it: next round
                outcome = await self._claim(allocation, node)
                if outcome is not None:
                    return node if outcome else None
        raise AllocationFailed(uuid, f"could not reserve any of {suitable} suitable nodes")

    async def _claim(self, allocation: Row, node: Row) -> bool | None:
        """True: the node is the allocation's. False: the allocation was deleted (or is no
        longer being processed here: taken over). None: the node was lost."""
        try:
            async with self.db.begin() as conn:
                if not await dballoc.start(conn, allocation["id"], node["id"],
                                           self.tasks.owner):
                    return False
                if not await dballoc.claim_node(conn, node, allocation):
                    raise _Lost()
                await dbapi.add_history(conn, node["id"],
                                        f"Allocated by allocation {allocation['uuid']}",
                                        event_type="allocation", conductor=self.tasks.owner)
        except _Lost:
            return None
        return True

    async def _fail(self, allocation: Row, error: str) -> None:
        async with self.db.begin() as conn:
            if not await dballoc.fail(conn, allocation["id"], error, self.tasks.owner):
                LOG.warning("Allocation %s was no longer processed here (deleted, or taken "
                            "over by another conductor): not failed with: %s",
                            allocation["uuid"], error)

    async def _backfill(self, allocation: Row, node: Row) -> None:
        """Ironic's backfilling: an active node takes the allocation if it matches it."""
        uuid = allocation["uuid"]
        async with self.tasks.locked(node["uuid"]) as task:
            current = task.node
            async with self.db.read() as conn:
                traits = (await dbtraits.traits_of(conn, [current["id"]])).get(current["id"], [])
            errors = []
            if current["provision_state"] != states.ACTIVE:
                errors.append(f'Node must be in the "active" state, but the current state is '
                              f'"{current["provision_state"]}"')
            if current["resource_class"] != allocation["resource_class"]:
                errors.append(f"Resource class {current['resource_class']} does not match the "
                              f"requested resource class {allocation['resource_class']}")
            if allocation["traits"] and not set(allocation["traits"]) <= set(traits):
                errors.append(f"List of traits {traits} does not match the requested traits "
                              f"{allocation['traits']}")
            if allocation["candidate_nodes"] and \
                    current["uuid"] not in allocation["candidate_nodes"]:
                errors.append(f"Candidate nodes must be empty or contain the target node, but "
                              f"got {allocation['candidate_nodes']}")
            if errors:
                failed = AllocationFailed(uuid, f"Cannot backfill an allocation for node "
                                                f"{current['uuid']}: {'; '.join(errors)}")
                await self._fail(allocation, str(failed))
                raise InvalidParameterValue(str(failed))
            async with self.db.begin() as conn:
                await task.fence(conn)
                taken = await dballoc.backfill(conn, current["id"], allocation)
            if not taken:
                error = (f"Node {current['uuid']} is associated with instance "
                         f"{current['instance_uuid'] or current['allocation_id']}.")
                await self._fail(allocation, error)
                raise Conflict(error)

    # --- delete ---------------------------------------------------------------------------

    async def delete(self, allocation: Row) -> None:
        """Delete the allocation and free its node, as Ironic: not while the node is active
        or busy, unless it is in maintenance (409)."""
        for _ in range(ATTEMPTS):
            if allocation["node_id"] is None:
                async with self.db.begin() as conn:
                    if await dballoc.delete_unclaimed(conn, allocation["id"]):
                        return
                allocation = await self.get(allocation["uuid"])  # claimed meanwhile
                continue
            async with self.tasks.locked(allocation["node_uuid"]) as task:
                check_deallocation(task.node, allocation)
                async with self.db.begin() as conn:
                    await task.fence(conn)
                    await dballoc.release(conn, allocation["id"])
                    await dbapi.add_history(conn, task.node["id"],
                                            f"Allocation {allocation['uuid']} deleted",
                                            event_type="allocation", conductor=self.tasks.owner)
                return
        raise Conflict(f"Allocation {allocation['uuid']} kept changing while it was deleted; "
                       "please retry.")


def check_deallocation(node: Row, allocation: Row) -> None:
    """Ironic's rule: an allocation goes from a node in maintenance, or from one that is
    neither active nor busy."""
    if node["maintenance"]:
        return
    prefix = f"Cannot remove allocation {allocation['uuid']} for node {node['uuid']}, because"
    if node["target_provision_state"] and node["provision_state"] not in UPDATE_ALLOWED:
        raise Conflict(f"{prefix} the node is in state {node['provision_state']} where "
                       f"updates are not allowed (and maintenance mode is off)")
    if node["provision_state"] == states.ACTIVE:
        raise Conflict(f"{prefix} the node is active (and maintenance mode is off)")


async def _candidates(conn: Any, idents: list[str]) -> list[str]:
    """The UUIDs of the candidate nodes; a 400 naming the field and, in Ironic's words
    (which clients match), every one that is missing."""
    found, missing = [], []
    for ident in idents:
        try:
            found.append(str((await dbapi.get_node(conn, ident))["uuid"]))
        except NotFound:
            missing.append(ident)
    if missing:
        raise InvalidParameterValue(
            f"candidate_nodes: Nodes cannot be found: {', '.join(missing)}")
    return found


async def _node(conn: Any, ident: str, field: str) -> Row:
    """The node a request names in `field`: a 400 naming the field when there is none."""
    try:
        return await dbapi.get_node(conn, ident)
    except NotFound as exc:
        raise InvalidParameterValue(f"{field}: {exc.message}") from None
