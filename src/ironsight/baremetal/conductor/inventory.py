"""The stored inventory resources as the API reads and changes them (chassis, portgroups,
deploy templates, runbooks, volume connectors and targets, conductors): each change in one
transaction with the checks that keep them consistent (a chassis with nodes, a portgroup with
ports, cannot go)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import exists, select

from ironsight.baremetal.conductor.hosts import HostConductor, fold
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db import inventory as inv
from ironsight.baremetal.db.inventory import Kind
from ironsight.baremetal.db.models import (
    chassis,
    deploy_templates,
    nodes,
    portgroups,
    ports,
    runbooks,
    volume_connectors,
    volume_targets,
)
from ironsight.common.db import Conn, Database
from ironsight.common.exceptions import Invalid, NotFound

Row = dict[str, Any]
# A check run in the write's transaction: (connection, the row as it is or None, new values).
Check = Callable[[Conn, Row | None, Row], Awaitable[None]]

CHASSIS = Kind(chassis, "Chassis", json_defaults={"extra": {}})
PORTGROUPS = Kind(portgroups, "Portgroup", named=True, duplicates=(
    ("name", "A portgroup with name {name} already exists."),
    ("address", "A portgroup with MAC address {address} already exists.")),
    json_defaults={"extra": {}, "properties": {}, "internal_info": {},
                   "dynamic_portgroup": False})
DEPLOY_TEMPLATES = Kind(deploy_templates, "Deploy template", named=True, duplicates=(
    ("name", "A deploy template with name {name} already exists."),),
    json_defaults={"extra": {}})
RUNBOOKS = Kind(runbooks, "Runbook", named=True, duplicates=(
    ("name", "A runbook with name {name} already exists."),),
    json_defaults={"extra": {}, "traits": []})
VOLUME_CONNECTORS = Kind(volume_connectors, "Volume connector", duplicates=(
    ("type", "A volume connector with type {type} and connector ID {connector_id} "
             "already exists."),), json_defaults={"extra": {}})
VOLUME_TARGETS = Kind(volume_targets, "Volume target", duplicates=(
    ("boot", "A volume target with boot index '{boot_index}' for the same node "
             "already exists."),), json_defaults={"extra": {}, "properties": {}})

# What the conductors' list sorts by.
CONDUCTOR_SORT = frozenset({"hostname", "conductor_group", "id", "created_at", "updated_at"})


async def _has_ports(conn: Conn, portgroup_id: int) -> bool:
    found = await conn.execute(select(exists().where(ports.c.portgroup_id == portgroup_id)))
    return bool(found.scalar())


async def chassis_empty(conn: Conn, row: Row | None, values: Row) -> None:
    """The chassis is held FOR UPDATE first: a node joining it meanwhile (which holds it FOR
    SHARE, `inv.chassis_id`) either commits before this check sees it or finds it gone."""
    assert row is not None
    await conn.execute(select(chassis.c.id).where(chassis.c.id == row["id"]).with_for_update())
    if (await conn.execute(select(exists().where(nodes.c.chassis_id == row["id"])))).scalar():
        raise Invalid(f"Chassis {row['uuid']} contains nodes.")


async def portgroup_stays(conn: Conn, row: Row | None, values: Row) -> None:
    if row is not None and "node_id" in values and await _has_ports(conn, row["id"]):
        raise Invalid(f"Portgroup {row['uuid']} has ports; it can not move to another node.")


async def portgroup_empty(conn: Conn, row: Row | None, values: Row) -> None:
    assert row is not None
    if await _has_ports(conn, row["id"]):
        raise Invalid("Cannot complete the requested action because portgroup "
                      f"{row['uuid']} contains ports.")


# Ironic's DELETE_ALLOWED_STATES: a volume resource of a node in one of them may go powered on
_DELETE_ALLOWED = frozenset({"available", "manageable", "enroll", "adopt failed", None})


def volume_node_off(what: str, deleting: bool) -> Check:
    """A node's volume connector or target changes only while the node is powered off (a
    deletion also in a state where the node could be deleted), as Ironic's conductor checks."""

    async def check(conn: Conn, row: Row | None, values: Row) -> None:
        if row is None:  # a new one: no condition
            return
        found = (await conn.execute(
            select(nodes.c.uuid, nodes.c.power_state, nodes.c.provision_state)
            .where(nodes.c.id == row["node_id"]))).mappings().first()
        if found is None or found["power_state"] == "power off":
            return
        if deleting and found["provision_state"] in _DELETE_ALLOWED:
            return
        action = f"volume {what} {'deletion' if deleting else 'update'}"
        raise Invalid(f'The requested action "{action}" can not be performed on node '
                      f'"{found["uuid"]}" while it is in state "{found["power_state"]}".')

    return check


class Inventory:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, kind: Kind, ident: str) -> Row:
        async with self.db.read() as conn:
            return await inv.get(conn, kind, ident)

    async def list_rows(self, kind: Kind, *, filters: Row, node: str | None, node_field: str | None,
                   limit: int, marker: str | None, sort_key: str, sort_dir: str) -> list[Row]:
        """Rows of `kind`; of one node when `node` is given: one that does not exist is a 404
        (from the path) or, named in request field `node_field`, a 400."""
        filters = dict(filters)
        async with self.db.read() as conn:
            if node is not None:
                filters["node_id"] = (
                    (await dbapi.get_node(conn, node))["id"] if node_field is None
                    else await inv.node_id(conn, node, node_field))
            return await inv.list_(conn, kind, filters=filters, limit=limit, marker=marker,
                                   sort_key=sort_key, sort_dir=sort_dir)

    async def _stored(self, conn: Conn, values: Row) -> Row:
        values = dict(values)
        if "node_uuid" in values:
            node = values.pop("node_uuid")
            if node is not None:
                values["node_id"] = await inv.node_id(conn, node, "node_uuid")
        return values

    async def create(self, kind: Kind, values: Row, check: Check | None = None) -> Row:
        async with self.db.begin() as conn:
            stored = await self._stored(conn, values)
            if check is not None:
                await check(conn, None, stored)
            row = await inv.create(conn, kind, stored)
            return await inv.get(conn, kind, row["uuid"])

    async def update(self, kind: Kind, row: Row, values: Row,
                     check: Check | None = None) -> Row:
        async with self.db.begin() as conn:
            stored = await self._stored(conn, values)
            changes = {k: v for k, v in stored.items() if row.get(k) != v}
            if changes:
                if check is not None:
                    await check(conn, row, changes)
                await inv.update_(conn, kind, row, changes)
            return await inv.get(conn, kind, row["uuid"])

    async def change(self, kind: Kind, ident: str, change: Callable[[Row], Row]) -> Row:
        """Apply `change` (row -> new values) to a fresh, locked copy of the row, in one
        transaction: concurrent changes of a list (say, a runbook's traits) lose nothing."""
        async with self.db.begin() as conn:
            row = await inv.get(conn, kind, ident, lock=True)
            await inv.update_(conn, kind, row, change(row))
            return await inv.get(conn, kind, row["uuid"])

    async def delete(self, kind: Kind, row: Row, check: Check | None = None) -> None:
        async with self.db.begin() as conn:
            if check is not None:
                await check(conn, row, {})
            await inv.delete_(conn, kind, row["id"])

    # --- portgroup membership of ports ----------------------------------------------------

    async def portgroup_of(self, ident: str, node: str) -> Row:
        """The portgroup (by UUID or name) a port of node `node` joins: on the same node."""
        async with self.db.read() as conn:
            try:
                group = await inv.get(conn, PORTGROUPS, ident)
                port_node = await dbapi.get_node(conn, node)
            except NotFound as exc:
                raise Invalid(f"portgroup_uuid: {exc.message}") from None
        if group["node_id"] != port_node["id"]:
            raise Invalid(f"Port can not be added to portgroup {group['uuid']}: the portgroup "
                          f"belongs to node {group['node_uuid']}, the port to node "
                          f"{port_node['uuid']}.")
        return group

    async def portgroup_ports(self, portgroup_id: int, limit: int) -> list[Row]:
        async with self.db.read() as conn:
            return await dbapi.list_ports(conn, filters={"portgroup_id": portgroup_id},
                                          limit=limit, marker=None, sort_key="id",
                                          sort_dir="asc")

    # --- conductors -----------------------------------------------------------------------

    async def conductor_hosts(self, alive_since: dt.datetime) -> list[HostConductor]:
        """The conductors by host, replicas folded (conductor/hosts.py)."""
        async with self.db.read() as conn:
            return fold(await dbapi.list_conductors(conn), alive_since)
