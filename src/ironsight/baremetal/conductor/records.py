"""Nodes and ports as the API reads and changes them.

Every statement the API needs runs here: reads in a read transaction, changes to a node or
its ports under the node's lock with a history event in the same transaction. The API turns
HTTP into these calls and documents back; it opens no transaction itself.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from ironsight.baremetal import states
from ironsight.baremetal.conductor.allocations import INSTANCE_REMOVABLE, Allocations
from ironsight.baremetal.conductor.inventory import Inventory
from ironsight.baremetal.conductor.provisioning import NodeProtected
from ironsight.baremetal.conductor.task import TaskManager
from ironsight.baremetal.db import allocations as dballoc
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db import inventory as dbinv
from ironsight.baremetal.db import traits as dbtraits
from ironsight.baremetal.db.models import nodes
from ironsight.baremetal.drivers.loader import DriverSet
from ironsight.baremetal.interfaces import INTERFACE_FIELDS
from ironsight.common.clock import utcnow
from ironsight.common.db import Conn, Database
from ironsight.common.exceptions import (
    Conflict,
    Invalid,
    InvalidParameterValue,
    NodeLocked,
    NotFound,
)

Row = dict[str, Any]
# The new field values of a node or port, computed from its current row (a JSON patch).
Change = Callable[[Row], Row]
# A node's new traits, computed from its current ones (may refuse by raising).
TraitChange = Callable[[list[str]], list[str]]


@dataclass(frozen=True)
class Event:
    """A history event another service reports about a node."""

    event: str
    severity: str = "INFO"
    event_type: str = "inspection"

# A node or port update without the node's lock is tried this many times in all (each a read
# and a conditional write), waiting LOCK_INTERVAL s between LOCK_ATTEMPTS sights of a locked
# node before it is refused, as `TaskManager.locked` waits.
WRITE_ATTEMPTS = 10
LOCK_ATTEMPTS = 3
LOCK_INTERVAL = 0.2

# States in which a node may be deleted out of maintenance: Ironic's (no action under way,
# nothing deployed, the disks clean), and `inspect failed` (inspection holds no tenant data).
# In maintenance any state will do, as in Ironic: the operator's way out of a stuck node.
DELETABLE = (states.ENROLL, states.MANAGEABLE, states.AVAILABLE, states.INSPECTFAIL,
             states.ADOPTFAIL)
# Ironic's limit of traits per node.
MAX_TRAITS = 50
PORTS_PER_NODE = 1000  # the ports a node snapshot lists (discoverd's processing reads them)


class Records:
    def __init__(self, db: Database, tasks: TaskManager, drivers: DriverSet) -> None:
        self.db = db
        self.tasks = tasks
        self.drivers = drivers
        self.inventory = Inventory(db)  # the other stored resources (chassis, portgroups...)
        self.allocations = Allocations(db, tasks)

    # --- nodes ----------------------------------------------------------------------------

    async def get_node(self, ident: str) -> Row:
        async with self.db.read() as conn:
            return await dbapi.get_node(conn, ident)

    async def node_with_ports(self, ident: str) -> tuple[Row, list[Row]]:
        """The node and its ports (id order), read together."""
        async with self.db.read() as conn:
            return await dbapi.node_with_ports(conn, ident, PORTS_PER_NODE)

    async def list_nodes(self, *, columns: Iterable[str], filters: Mapping[str, Any],
                         limit: int, marker: str | None, sort_key: str,
                         sort_dir: str) -> list[Row]:
        wanted = [nodes.c[c] for c in sorted(set(columns) | {"id", "uuid"})]
        async with self.db.read() as conn:
            return await dbapi.list_nodes(conn, columns=wanted, filters=dict(filters),
                                          limit=limit, marker=marker, sort_key=sort_key,
                                          sort_dir=sort_dir)

    async def node_stamps(self, since: dt.datetime | None = None) -> dbapi.Stamps:
        async with self.db.read() as conn:
            return await dbapi.node_stamps(conn, since)

    async def shard_counts(self) -> list[tuple[str | None, int]]:
        async with self.db.read() as conn:
            return await dbapi.shard_counts(conn)

    async def create_node(self, values: Row, initial_state: str) -> Row:
        self.check_driver(values["driver"], values)
        values["driver_info"] = self.tasks.secrets.seal(values.get("driver_info"))
        # provision_updated_at stays empty until the first state change, as in Ironic
        values.update(provision_state=initial_state, power_state=None, maintenance=False,
                      driver_internal_info={})
        event = dbapi.history_row(None, f"Node created with driver {values['driver']}",
                                  conductor=self.tasks.owner)
        chassis_uuid = values.pop("chassis_uuid", None)
        if chassis_uuid is None:
            async with self.db.single() as conn:
                return await dbapi.create_node(conn, values, event)
        async with self.db.begin() as conn:  # the chassis held until the node is in
            values["chassis_id"] = await dbinv.chassis_id(conn, chassis_uuid)
            row = await dbapi.create_node(conn, values, event)
        return {**row, "chassis_uuid": chassis_uuid.lower()}

    async def update_node(self, ident: str, change: Change, *,
                          traits: TraitChange | None = None,
                          events: Sequence[Event] = (),
                          ports: Sequence[tuple[str, Change]] = ()) -> Row:
        """Apply `change` to the node; a new hardware type brings its own interfaces (unless
        the change sets them too) and must be one this conductor runs. One conditional write
        and its history row, without the lock (see `_unlocked`). With `traits` (the new
        traits from the current ones), `events` (more history rows: another service's
        account of the change) and `ports` (changes of its ports, by UUID, that leave them
        on the node and in their portgroup), all of it in one transaction: discoverd's
        processing writes what the hooks and rules decided this way, in one request."""

        async def attempt() -> Row | str | None:
            if ports:
                row, own = await self.node_with_ports(ident)
            else:
                row, own = await self.get_node(ident), []
            if row["reservation"] is not None:
                return str(row["uuid"])
            port_writes = await self._port_writes(row, own, ports)
            row["chassis_uuid"] = (await self.chassis_uuids_of([row["chassis_id"]])).get(
                row["chassis_id"]) if row["chassis_id"] is not None else None
            new = change(row)
            if new["driver"] != row["driver"]:
                for key in INTERFACE_FIELDS:
                    if new[key] == row[key]:
                        new[key] = None
                self.check_driver(new["driver"], new)
            elif any(row.get(key) != new.get(key) for key in INTERFACE_FIELDS):
                self.check_driver(new["driver"], new)  # changed, or removed: the default
            if new["driver_info"] != row["driver_info"]:
                new["driver_info"] = self.tasks.secrets.seal(new["driver_info"],
                                                             row["driver_info"])
            changes = {k: v for k, v in new.items() if v != row[k]}
            new_traits = await self._new_traits(row, traits) if traits is not None else None
            if not changes and new_traits is None and not events:
                if not port_writes:
                    return row
                return await self._write_ports(row, port_writes)
            history = [dbapi.history_row(row["id"], "Node updated: " + ", ".join(
                sorted(changes)), event_type="update", conductor=self.tasks.owner)
                       ] if changes else []
            if new_traits is not None:
                history.append(_traits_event(row["id"], new_traits, self.tasks.owner))
            history.extend(dbapi.history_row(row["id"], e.event, severity=e.severity,
                                             event_type=e.event_type,
                                             conductor=self.tasks.owner) for e in events)
            changes["updated_at"] = utcnow()
            freed = _frees_allocation(row, changes)
            chassis_uuid, joins = row["chassis_uuid"], None
            if "chassis_uuid" in changes:
                chassis_uuid = joins = changes.pop("chassis_uuid")
                if joins is None:
                    changes["chassis_id"] = None  # leaves its chassis
            one = (not freed and new_traits is None and len(history) == 1 and joins is None
                   and not port_writes)
            try:
                async with (self.db.single() if one else self.db.begin()) as conn:
                    if joins is not None:  # the chassis held until the node is in it
                        changes["chassis_id"] = await dbinv.chassis_id(conn, joins)
                    if not await dbapi.update_locked_node(conn, row["id"], None,
                                                          row["lock_epoch"], changes,
                                                          history[0]):
                        return str(row["uuid"])
                    if freed:
                        await dballoc.delete_by_id(conn, freed)
                    if new_traits is not None:
                        await dbtraits.replace_traits(conn, row["id"], new_traits)
                    await dbapi.add_history_rows(conn, history[1:])
                    await _update_ports(conn, port_writes)
            except _PortChanged:
                return str(row["uuid"])
            return {**row, **changes, "lock_epoch": row["lock_epoch"] + 1,
                    "chassis_uuid": chassis_uuid.lower() if chassis_uuid else None}

        return await self._unlocked(attempt, f"Node {ident}")

    async def chassis_uuids_of(self, chassis_ids: Iterable[int]) -> dict[int, str]:
        async with self.db.read() as conn:
            return await dbinv.chassis_uuids_of(conn, chassis_ids)

    async def _new_traits(self, row: Row, change: TraitChange) -> list[str] | None:
        """The node's traits after `change`, checked; None when they stay as they are."""
        node_id = int(row["id"])
        async with self.db.read() as conn:
            current = (await dbtraits.traits_of(conn, [node_id])).get(node_id, [])
        new = sorted(set(change(current)))
        if len(new) > MAX_TRAITS:
            raise InvalidParameterValue(
                f"Could not modify traits for node {row['uuid']} as it would exceed "
                f"the maximum number of traits per node ({len(new)} vs. {MAX_TRAITS})")
        return None if new == current else new

    async def _port_writes(self, node: Row, own: list[Row],
                           ports: Sequence[tuple[str, Change]]) -> list[tuple[Row, Row]]:
        """Each port as read and what its change changes (unchanged ones left out); a port
        of another node (not among its `own`) is refused, as is a change that moves it."""
        by_uuid = {p["uuid"]: p for p in own}
        writes = []
        for ident, change in ports:
            port = by_uuid.get(ident) or await self.get_port(ident)  # 404 for none at all
            if port["node_id"] != node["id"]:
                raise Invalid(f"Port {port['uuid']} is not a port of node {node['uuid']}")
            new = change(port)
            if new.get("node_uuid", port["node_uuid"]) != port["node_uuid"] or new.get(
                    "portgroup_id", port["portgroup_id"]) != port["portgroup_id"]:
                raise Invalid(f"Port {port['uuid']} cannot move with the node's changes")
            values = {k: v for k, v in new.items() if k != "node_uuid" and v != port.get(k)}
            if values:
                writes.append((port, {**values, "updated_at": utcnow()}))
        return writes

    async def _write_ports(self, node: Row, writes: list[tuple[Row, Row]]) -> Row | str:
        """Only ports changed: their conditional writes, in one transaction."""
        try:
            async with self.db.begin() as conn:
                await _update_ports(conn, writes)
        except _PortChanged:
            return str(node["uuid"])
        return node

    async def update_node_quietly(self, ident: str, change: Change) -> Row:
        """`change` applied as `update_node` does, but with no history row: the ramdisk
        agent's bookkeeping (its token, its heartbeats) is not an event of the node."""

        async def attempt() -> Row | str | None:
            row = await self.get_node(ident)
            if row["reservation"] is not None:
                return str(row["uuid"])
            changes = {k: v for k, v in change(row).items() if v != row[k]}
            if not changes:
                return row
            changes["updated_at"] = utcnow()
            async with self.db.single() as conn:
                if not await dbapi.update_locked_node(conn, row["id"], None, row["lock_epoch"],
                                                      changes):
                    return str(row["uuid"])
            return {**row, **changes, "lock_epoch": row["lock_epoch"] + 1}

        return await self._unlocked(attempt, f"Node {ident}")

    async def _unlocked(self, attempt: Callable[[], Awaitable[Row | str | None]],
                        what: str) -> Row:
        """A change of a node (or of one of its ports) made without taking the node's lock:
        `attempt` reads, computes and writes conditionally (only while the node is unlocked
        and unchanged since read: what the lock would have ensured, for two writes fewer),
        and returns the row written, or the UUID of the node when the write was refused.
        A node seen locked is waited for as `TaskManager.locked` waits, then refused (409);
        one changed meanwhile gets the change applied to its new self."""
        locked_seen = 0
        for _ in range(WRITE_ATTEMPTS):
            done = await attempt()
            if isinstance(done, dict):
                return done
            node = await self.get_node(str(done))
            if node["reservation"] is None:
                continue  # changed since it was read: again, on what it is now
            locked_seen += 1
            if locked_seen >= LOCK_ATTEMPTS:
                self.tasks.conflicts += 1
                raise NodeLocked(node["uuid"], node["reservation"])
            await asyncio.sleep(LOCK_INTERVAL)
        raise Conflict(f"{what} kept changing while it was updated; please retry.")

    async def delete_node(self, ident: str) -> None:
        async with self.tasks.locked(ident) as task:
            node = task.node
            if not node["maintenance"] and node["instance_uuid"] is not None:
                raise Conflict(f"Node {task.uuid} is associated with instance "
                               f"{node['instance_uuid']}.")
            if node["protected"]:
                raise NodeProtected(f"Node {task.uuid} is protected and cannot be undeployed, "
                                    "rebuilt or deleted")
            state = node["provision_state"]
            if not node["maintenance"] and state not in DELETABLE:
                raise Invalid(
                    f"Can not delete node \"{task.uuid}\" while it is in provision state "
                    f"\"{state}\". Valid provision states to perform deletion are: "
                    f"\"{', '.join(DELETABLE)}\", or set the node into maintenance mode")
            async with self.db.begin() as conn:
                await task.fence(conn)
                await dbapi.delete_node(conn, task.node["id"])
            task.released = True  # the row (and its reservation) are gone

    # --- traits, and what a node keeps in driver_internal_info (VIFs, virtual media) ---------

    async def traits_of(self, node_ids: Iterable[int]) -> dict[int, list[str]]:
        async with self.db.read() as conn:
            return await dbtraits.traits_of(conn, node_ids)

    async def change_traits(self, ident: str, change: TraitChange) -> None:
        """Replace the node's traits with `change(current)`: one transaction, without the
        lock (see `_unlocked`). Every change of the traits raises the node's lock epoch in
        the same transaction, so two concurrent changes cannot both apply to what they read:
        the second is computed again on the traits the first left."""
        await self.update_node(ident, dict, traits=change)

    async def change_internal(self, ident: str, key: str,
                              change: Callable[[Row, Any], Any], event: str) -> None:
        """Set driver_internal_info[`key`] to `change(node, current value)`, under the lock
        (a change may refuse by raising)."""
        async with self.tasks.locked(ident) as task:
            internal = dict(task.node["driver_internal_info"] or {})
            internal[key] = change(task.node, internal.get(key))
            if internal[key] in (None, [], {}):
                del internal[key]
            await task.save(event, event_type="update", release=True,
                            driver_internal_info=internal)

    async def set_maintenance(self, ident: str, on: bool, reason: str | None) -> None:
        async with self.tasks.locked(ident) as task:
            text = f"Maintenance {'set' if on else 'unset'}" + (f": {reason}" if reason else "")
            await task.save(text, event_type="maintenance", release=True, maintenance=on,
                            maintenance_reason=reason if on else None)

    async def count_by_state(self) -> dict[str, int]:
        """How many nodes are in each provision state (metrics)."""
        async with self.db.read() as conn:
            rows = await conn.execute(select(nodes.c.provision_state, func.count())
                                      .group_by(nodes.c.provision_state))
            return {state: int(count) for state, count in rows}

    async def add_history(self, ident: str, event: str, *, severity: str,
                          event_type: str) -> None:
        """An event another service reports about the node (discoverd: which inspection rules
        matched and what they changed). No lock: it changes no field of the node."""
        async with self.db.read() as conn:
            row = await dbapi.get_node(conn, ident)
        async with self.db.single() as conn:
            await dbapi.add_history(conn, row["id"], event, severity=severity,
                                    event_type=event_type, conductor=self.tasks.owner)

    async def history(self, ident: str) -> tuple[Row, list[Row]]:
        async with self.db.read() as conn:
            row = await dbapi.get_node(conn, ident)
            return row, await dbapi.list_history(conn, row["id"])

    def check_driver(self, name: str, values: Row) -> None:
        """Refuse a node whose driver (or an interface override) this conductor cannot run;
        fill the interface fields left empty with the hardware type's own."""
        driver = self.drivers.get(name)
        if driver is None:
            why = self.drivers.refused.get(self.drivers.canonical(name))
            reason = f": {why}" if why else ""
            raise InvalidParameterValue(
                f"No valid host was found. Reason: No conductor service registered which "
                f"supports driver {name}{reason}.")
        names = driver.interface_names()
        for key, value in values.items():
            if key.endswith("_interface") and value is not None:
                iface = key.removesuffix("_interface")
                accepted = driver.accepted(iface)
                if value not in accepted:
                    raise InvalidParameterValue(  # Ironic's words, naming the field
                        "Could not find the following interface in the "
                        f"'ironic.hardware.interfaces.{iface}' entrypoint: {value}. Valid "
                        f"interfaces are {sorted(accepted)}.")
        for iface, value in names.items():
            key = f"{iface}_interface"
            if key in INTERFACE_FIELDS and not values.get(key):
                values[key] = value

    # --- ports ----------------------------------------------------------------------------

    async def get_port(self, ident: str) -> Row:
        async with self.db.read() as conn:
            return await dbapi.get_port(conn, ident)

    async def list_ports(self, *, node: str | None, node_field: str | None,
                         filters: Mapping[str, Any], limit: int, marker: str | None,
                         sort_key: str, sort_dir: str) -> list[Row]:
        """Ports, of one node when `node` is given: a node that does not exist is a 404
        (the node is the resource) or, when it came in the request's `node_field`, a 400."""
        wanted = dict(filters)
        async with self.db.read() as conn:
            if node is not None and not wanted and marker is None and (
                    sort_key, sort_dir) == ("id", "asc"):
                found = await dbapi.ports_of_node(conn, node, limit)  # what discoverd asks
                if found is None:
                    raise _node_missing(node, node_field)
                return found
            if node is not None:
                wanted["node_id"] = await _node_id(conn, node, node_field)
            return await dbapi.list_ports(conn, filters=wanted, limit=limit, marker=marker,
                                          sort_key=sort_key, sort_dir=sort_dir)

    async def create_port(self, values: Row, node: str) -> Row:
        event = dbapi.history_row(None, f"Port {values['address']} created", event_type="port",
                                  conductor=self.tasks.owner)
        async with self.db.single() as conn:
            row = await dbapi.create_port(conn, node, values, event)
        if row is None:
            raise _node_missing(node, "node_uuid")
        row["node_uuid"] = node
        return row

    async def update_port(self, ident: str, change: Change) -> Row:
        """Apply `change` to the port. On the same node: one conditional write, without the
        lock (see `_unlocked`). Moving it to another node: under the node's lock."""
        async def attempt() -> Row | str | None:
            row = await self.get_port(ident)
            new = change(row)
            if new["node_uuid"] != row["node_uuid"]:
                return await self._move_port(row, change)
            changes = {k: v for k, v in new.items() if v != row.get(k)}
            if not changes:
                return row
            changes["updated_at"] = utcnow()
            async with self.db.single() as conn:
                if await dbapi.update_port_if_unlocked(conn, row, changes):
                    return {**row, **changes}
            return str(row["node_uuid"])

        return await self._unlocked(attempt, f"Port {ident}")

    async def _move_port(self, row: Row, change: Change) -> Row:
        async with self.tasks.locked(row["node_uuid"]) as task:
            new = change(row)
            async with self.db.begin() as conn:
                await task.fence(conn)
                if new["node_uuid"] != row["node_uuid"]:
                    new["node_id"] = await _node_id(conn, new["node_uuid"], "node_uuid")
                changes = {k: v for k, v in new.items() if k != "node_uuid" and v != row.get(k)}
                if changes:
                    await dbapi.update_port(conn, row["id"], changes)
                return await dbapi.get_port(conn, row["uuid"])

    async def delete_port(self, ident: str) -> None:
        row = await self.get_port(ident)
        async with self.tasks.locked(row["node_uuid"]) as task, self.db.begin() as conn:
            await task.fence(conn)
            await dbapi.delete_port(conn, row["id"])
            await dbapi.add_history(conn, row["node_id"], f"Port {row['address']} deleted",
                                    event_type="port", conductor=self.tasks.owner)


def _traits_event(node_id: int, traits: list[str], conductor: str) -> Row:
    return dbapi.history_row(node_id, "Traits set: " + (", ".join(traits) or "none"),
                             event_type="update", conductor=conductor)


def _frees_allocation(row: Row, changes: Row) -> int | None:
    """As Ironic: removing the instance of a node with an allocation deletes the allocation
    (not while the node is busy or deployed, unless it is in maintenance). Its id, if so;
    `changes` then clears the node's allocation too."""
    if not row["allocation_id"] or "instance_uuid" not in changes or changes["instance_uuid"]:
        return None
    if not row["maintenance"] and row["provision_state"] not in INSTANCE_REMOVABLE:
        raise Conflict(f"Node {row['uuid']} with an allocation can not have instance_uuid "
                       f"removed unless it is in one of allowed "
                       f"({', '.join(INSTANCE_REMOVABLE)}) states or in maintenance mode. "
                       f"Current state is '{row['provision_state']}'.")
    changes["allocation_id"] = None
    return int(row["allocation_id"])


async def _node_id(conn: Any, ident: str, field: str | None) -> int:
    try:
        node = await dbapi.get_node(conn, ident)
    except NotFound:
        raise _node_missing(ident, field) from None
    return int(node["id"])


def _node_missing(ident: str, field: str | None) -> NotFound | Invalid:
    """A 404 when the node is the resource; a 400 when it came in request field `field`
    (as Ironic answers)."""
    missing = NotFound(f"Node {ident} could not be found.")
    return missing if field is None else Invalid(f"{field}: {missing}")


class _PortChanged(Exception):
    """A port written with its node's changes was locked or changed since read: the whole
    transaction is rolled back and made again on what is there now."""


async def _update_ports(conn: Conn, writes: list[tuple[Row, Row]]) -> None:
    for port, values in writes:
        if not await dbapi.update_port_if_unlocked(conn, port, values):
            raise _PortChanged(port["uuid"])
