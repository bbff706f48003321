"""Node locks held as a database reservation, and the task that owns one.

A reservation is taken by an atomic conditional UPDATE (`reservation IS NULL`), so any number
of conductor processes on one PostgreSQL share the work. The lock is released by whoever holds
the task when it ends, whatever way it ends; a lock left by a dead process is recovered by the
periodic dead-conductor check (see periodic.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.common.db import Database
from ironsight.common.exceptions import NodeLocked

LOG = logging.getLogger(__name__)


class NodeTask:
    """A locked node: its row, and the way to save changes while holding it."""

    def __init__(self, db: Database, owner: str, node: dict[str, Any]) -> None:
        self.db = db
        self.owner = owner
        self.node = node
        self.released = False

    @property
    def uuid(self) -> str:
        return str(self.node["uuid"])

    @property
    def context(self) -> NodeContext:
        return NodeContext.of(self.node)

    async def save(self, event: str | None = None, *, severity: str = "INFO",
                   event_type: str = "provisioning", release: bool = False,
                   **values: Any) -> None:
        """Update the node (and its history) in one transaction; with `release`, give the
        lock back in the same UPDATE (one write instead of two on the hot path)."""
        if "provision_state" in values:
            values.setdefault("provision_updated_at", dbapi.utcnow())
        if release and not self.released:
            values["reservation"] = None
        async with self.db.begin() as conn:
            await dbapi.update_node(conn, self.node["id"], values)
            if event:
                await dbapi.add_history(conn, self.node["id"], event, severity=severity,
                                        event_type=event_type, conductor=self.owner)
        self.node.update(values)
        if release:
            self.released = True

    async def transition(self, event: str, *, target: str | None = None,
                         last_error: str | None = None, release: bool = False,
                         **values: Any) -> str:
        """Apply a state machine event and record it."""
        source = self.node["provision_state"]
        new = states.next_state(source, event)
        if new is None:
            raise RuntimeError(f"bug: event {event} not allowed from {source}")
        severity = "ERROR" if last_error else "INFO"
        text = f"Provision state changed from {source} to {new} ({event})"
        if last_error:
            text += f": {last_error}"
        await self.save(text, severity=severity, provision_state=new, release=release,
                        target_provision_state=target, last_error=last_error, **values)
        LOG.info("Node %s: %s", self.uuid, text)
        return new

    async def release(self) -> None:
        if self.released:
            return
        self.released = True
        # Shielded so that a cancelled worker still gives its lock back.
        await asyncio.shield(self._release())

    async def _release(self) -> None:
        async with self.db.begin() as conn:
            await dbapi.release_node(conn, self.node["id"], self.owner)
        self.node["reservation"] = None


async def acquire(db: Database, owner: str, ident: str, *, attempts: int = 1,
                  interval: float = 0.2) -> NodeTask:
    """Lock the node or raise NodeLocked (409) / NotFound (404)."""
    for attempt in range(max(1, attempts)):
        async with db.begin() as conn:
            row = await dbapi.reserve_node(conn, ident, owner)
            if row is None:
                current = await dbapi.get_node(conn, ident)  # NotFound when it does not exist
        if row is not None:
            return NodeTask(db, owner, row)
        if attempt + 1 < attempts:
            await asyncio.sleep(interval)
    raise NodeLocked(current["uuid"], current["reservation"] or "unknown")
