"""Queries of allocations that touch nodes: the candidates of an allocation, the claim of one
(a conditional write: two allocations never get the same node), the release of a node.
Every function takes an open connection; nothing here commits."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, false, or_, select, update

from ironsight.baremetal import states
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db.models import allocations, nodes
from ironsight.common.clock import utcnow
from ironsight.common.db import Conn

Row = dict[str, Any]

# What makes a node free to allocate (Ironic's filters: available, not in maintenance, with
# a known power state, no instance, no allocation; and not retired).
_FREE_NODE = (nodes.c.provision_state == states.AVAILABLE, nodes.c.maintenance == false(),
              nodes.c.retired == false(), nodes.c.power_state.is_not(None),
              nodes.c.instance_uuid.is_(None), nodes.c.allocation_id.is_(None))
_NODE_COLUMNS = (nodes.c.id, nodes.c.uuid, nodes.c.name, nodes.c.lock_epoch,
                 nodes.c.reservation, nodes.c.instance_info)


async def free_nodes(conn: Conn, *, resource_class: str | None, uuids: list[str],
                     owner: str | None) -> list[Row]:
    """Nodes an allocation may take (a locked one once its lock is gone), in id order: of
    its resource class, among `uuids` when given, owned or leased by `owner` when given."""
    query = select(*_NODE_COLUMNS).where(*_FREE_NODE,
                                         nodes.c.resource_class == resource_class)
    if uuids:
        query = query.where(nodes.c.uuid.in_(uuids))
    if owner:
        query = query.where(or_(nodes.c.owner == owner, nodes.c.lessee == owner))
    return [dict(r) for r in (await conn.execute(query.order_by(nodes.c.id))).mappings()]


def _processed_by(allocation_id: int, conductor: str) -> tuple[Any, ...]:
    """An allocation still being processed by `conductor`: the fence of its writes, so that
    a replica declared dead (it stalled) and taken over changes nothing when it wakes."""
    return (allocations.c.id == allocation_id, allocations.c.state == "allocating",
            allocations.c.conductor == conductor)


async def start(conn: Conn, allocation_id: int, node_id: int, conductor: str) -> bool:
    """The allocation, still being processed by `conductor`, becomes active on `node_id`
    (first write of a claim: on PostgreSQL it locks the allocation's row, so a deletion
    waits for the claim)."""
    result = await conn.execute(
        update(allocations).where(*_processed_by(allocation_id, conductor))
        .values(state="active", node_id=node_id, last_error=None, updated_at=utcnow()))
    return bool(result.rowcount)


async def orphans(conn: Conn, live: Any) -> list[Row]:
    """Allocations left `allocating` by a replica that is not among `live` (a select of
    the registered replicas' names), or by none (stored before replicas were recorded)."""
    query = select(allocations).where(
        allocations.c.state == "allocating",
        or_(allocations.c.conductor.is_(None), allocations.c.conductor.not_in(live)))
    return [dict(r) for r in (await conn.execute(query.order_by(allocations.c.id))).mappings()]


async def take_over(conn: Conn, allocation: Row, conductor: str) -> bool:
    """`conductor` becomes the allocation's processor, if it is still `allocating` under
    the dead one it was read with (Ironic's take_over_allocation): of two replicas taking
    it over, one wins."""
    old = allocation["conductor"]
    result = await conn.execute(
        update(allocations)
        .where(allocations.c.id == allocation["id"], allocations.c.state == "allocating",
               allocations.c.conductor.is_(None) if old is None
               else allocations.c.conductor == old)
        .values(conductor=conductor, updated_at=utcnow()))
    return bool(result.rowcount)


async def claim_node(conn: Conn, node: Row, allocation: Row) -> bool:
    """Give the node to the allocation if it is still free and unchanged since it was read
    (its lock epoch, raised by every lock and unlocked write, and so by a change of its
    traits): one conditional UPDATE, so of two racing allocations only one wins. As Ironic,
    the node's instance_uuid becomes the allocation's UUID and instance_info its traits."""
    info = {**(node.get("instance_info") or {}), "traits": list(allocation["traits"] or [])}
    result = await conn.execute(
        update(nodes)
        .where(nodes.c.id == node["id"], nodes.c.lock_epoch == node["lock_epoch"],
               nodes.c.reservation.is_(None), *_FREE_NODE)
        .values(allocation_id=allocation["id"], instance_uuid=allocation["uuid"],
                instance_info=info, lock_epoch=nodes.c.lock_epoch + 1, updated_at=utcnow()))
    return bool(result.rowcount)


async def backfill(conn: Conn, node_id: int, allocation: Row) -> bool:
    """An active node (locked by the caller) takes the allocation: only while it has none,
    and no instance or this one."""
    result = await conn.execute(
        update(nodes)
        .where(nodes.c.id == node_id, nodes.c.allocation_id.is_(None),
               or_(nodes.c.instance_uuid.is_(None),
                   nodes.c.instance_uuid == allocation["uuid"]))
        .values(allocation_id=allocation["id"], instance_uuid=allocation["uuid"],
                updated_at=utcnow()))
    if result.rowcount:
        await conn.execute(update(allocations).where(allocations.c.id == allocation["id"])
                           .values(state="active", node_id=node_id, updated_at=utcnow()))
    return bool(result.rowcount)


async def fail(conn: Conn, allocation_id: int, error: str, conductor: str) -> bool:
    """The allocation, still being processed by `conductor`, ends `error`; whether it did."""
    result = await conn.execute(
        update(allocations).where(*_processed_by(allocation_id, conductor))
        .values(state="error", node_id=None, last_error=error, updated_at=utcnow()))
    return bool(result.rowcount)


async def delete_unclaimed(conn: Conn, allocation_id: int) -> bool:
    """Delete an allocation that holds no node; False when it holds one (claimed meanwhile:
    the caller frees the node first) or is gone."""
    result = await conn.execute(delete(allocations).where(
        allocations.c.id == allocation_id, allocations.c.node_id.is_(None)))
    return bool(result.rowcount)


async def delete_by_id(conn: Conn, allocation_id: int) -> None:
    """Delete the allocation only (its node is written by the caller)."""
    await conn.execute(delete(allocations).where(allocations.c.id == allocation_id))


async def release(conn: Conn, allocation_id: int) -> None:
    """Delete the allocation and free its node (allocation and instance cleared); the caller
    holds the node's lock (whose epoch this leaves alone)."""
    await conn.execute(update(nodes).where(nodes.c.allocation_id == allocation_id)
                       .values(allocation_id=None, instance_uuid=None, updated_at=utcnow()))
    await conn.execute(delete(allocations).where(allocations.c.id == allocation_id))


async def uuids_of(conn: Conn, allocation_ids: Iterable[int]) -> dict[int, str]:
    """Each allocation's UUID, by id (the nodes' `allocation_uuid`)."""
    return await dbapi.uuids_by_id(conn, allocations, allocation_ids)


async def instance_holder(conn: Conn, instance_uuid: str) -> str | None:
    """The UUID of the node whose instance is `instance_uuid`, if any."""
    found = await conn.execute(select(nodes.c.uuid).where(nodes.c.instance_uuid == instance_uuid)
                               .limit(1))
    value = found.scalar()
    return None if value is None else str(value)
