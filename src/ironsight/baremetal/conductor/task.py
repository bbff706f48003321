"""Node locks held as a database reservation, the task that owns one, and the workers that
run under it (Kilo Ironic's `task_manager.acquire` and `spawn_after`).

A reservation is taken by an atomic conditional UPDATE (`reservation IS NULL`), so any number
of conductor processes on one PostgreSQL share the work. The lock is released by whoever holds
the task when it ends, whatever way it ends; a lock left by a dead process is recovered by the
periodic dead-conductor check (see periodic.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.secrets import DriverSecrets
from ironsight.common.db import Conn, Database, through_outages
from ironsight.common.exceptions import DatabaseUnavailable, LockLost, NodeLocked, NotFound
from ironsight.common.workers import WorkerPool

LOG = logging.getLogger(__name__)

Work = Callable[["NodeTask"], Awaitable[None]]

# Seconds between attempts, while the database is unavailable, to release a lock or to run
# spawned work again (doubling).
DB_RETRY_FIRST = 0.5
DB_RETRY_MAX = 10.0
# Spawned work that meets an unavailable database runs again from its start, still under
# its lock, this many times (0.5 s apart, doubling to 10 s: ~35 s in all), before it fails
# as any crash does. A conductor declared dead meanwhile gets LockLost on its next write.
WORK_DB_ATTEMPTS = 8


class NodeTask:
    """A locked node: its row, and the way to save changes while holding it.

    Every write is fenced: made only while this owner still holds the lock of the epoch it
    took (a conductor that stalled past its heartbeat timeout was declared dead, and its
    locks released and maybe taken by another). A fenced-out write raises LockLost and
    changes nothing; the release of a lost lock leaves the new holder's lock alone.
    """

    def __init__(self, db: Database, owner: str, node: dict[str, Any],
                 retries: set[asyncio.Task[None]] | None = None,
                 secrets: DriverSecrets | None = None) -> None:
        self.db = db
        self.secrets = secrets or DriverSecrets(None)
        self.owner = owner
        self.node = node
        self.epoch = int(node["lock_epoch"])
        self.released = False
        self._spawn: tuple[Work, str] | None = None
        # releases retried in the background (a reference keeps each task alive)
        self._retries = retries if retries is not None else set()

    @property
    def uuid(self) -> str:
        return str(self.node["uuid"])

    @property
    def context(self) -> NodeContext:
        """What drivers see of the node: its secrets decrypted (SecretUnreadable, a 400
        naming the node and field, when one cannot be)."""
        return self.secrets.context(self.node)

    def spawn(self, work: Work, what: str) -> None:
        """Run `work` in a worker once the `locked` block ends without an error; the worker
        then holds the lock and releases it when it ends (Ironic's `spawn_after`)."""
        self._spawn = (work, what)

    async def save(self, event: str | None = None, *, severity: str = "INFO",
                   event_type: str = "provisioning", release: bool = False,
                   **values: Any) -> None:
        """Update the node (and its history) in one write; with `release`, give the lock back
        in the same UPDATE (one write instead of two on the hot path)."""
        if "provision_state" in values:
            values.setdefault("provision_updated_at", dbapi.utcnow())
        if release and not self.released:
            values["reservation"] = None
        row = (dbapi.history_row(self.node["id"], event, severity=severity,
                                 event_type=event_type, conductor=self.owner)
               if event else None)
        async with self.db.single() as conn:
            if not await dbapi.update_locked_node(conn, self.node["id"], self.owner,
                                                  self.epoch, values, row):
                raise LockLost(self.uuid, self.owner)
        self.node.update(values)
        if release:
            self.released = True

    async def transition(self, event: str, *, target: str | None = None,
                         last_error: str | None = None, release: bool = False,
                         detail: str | None = None, **values: Any) -> str:
        """Apply a state machine event and record it (with `detail`, what happened with it)."""
        source = self.node["provision_state"]
        new = states.next_state(source, event)
        if new is None:
            raise RuntimeError(f"bug: event {event} not allowed from {source}")
        severity = "ERROR" if last_error else "INFO"
        text = f"Provision state changed from {source} to {new} ({event})"
        if last_error or detail:
            text += ": " + "; ".join(t for t in (last_error, detail) if t)
        await self.save(text, severity=severity, provision_state=new, release=release,
                        target_provision_state=target, last_error=last_error, **values)
        LOG.info("Node %s: %s", self.uuid, text)
        return new

    async def fence(self, conn: Conn) -> None:
        """Before writing the node's ports or history in transaction `conn`: raise LockLost
        unless the lock is still held (and keep it so until the transaction ends)."""
        if not await dbapi.still_locked(conn, self.node["id"], self.owner, self.epoch):
            raise LockLost(self.uuid, self.owner)

    async def fail(self, message: str, *, release: bool = False) -> None:
        """Leave the node in a state an operator can act on: `fail` where the state machine
        allows it, else only the error recorded; with `release`, unlocked in the same write
        (a client that sees the failure can act on the node at once)."""
        if states.is_allowed(self.node["provision_state"], "fail"):
            await self.transition("fail", last_error=message, release=release)
        else:
            await self.save(message, severity="ERROR", last_error=message,
                            target_power_state=None, release=release)

    async def release(self) -> None:
        """Give the lock back. When the database is unavailable, the release is retried in
        the background until it lands (the caller's own error goes on): a live conductor's
        lock is never left behind by an outage, as nobody else would release it."""
        if self.released:
            return
        self.released = True
        try:
            # Shielded so that a cancelled worker still gives its lock back.
            await asyncio.shield(self._release())
        except DatabaseUnavailable:
            LOG.warning("Node %s: the lock could not be released (database unavailable); "
                        "retrying in the background", self.uuid)
            retry = asyncio.get_running_loop().create_task(self._release_until_done())
            self._retries.add(retry)
            retry.add_done_callback(self._retries.discard)

    async def _release_until_done(self) -> None:
        await asyncio.sleep(DB_RETRY_FIRST)
        await through_outages(self._release, attempts=None, waiting=lambda _: None,
                              first=DB_RETRY_FIRST, most=DB_RETRY_MAX)
        LOG.info("Node %s: lock released after the database came back", self.uuid)

    async def _release(self) -> None:
        async with self.db.single() as conn:
            held = await dbapi.release_node(conn, self.node["id"], self.owner, self.epoch)
        if not held:
            LOG.warning("Node %s: the lock of %s was already released or taken over",
                        self.uuid, self.owner)
        self.node["reservation"] = None


class TaskManager:
    """Takes node locks for one conductor (`owner`) and runs long work under them."""

    def __init__(self, db: Database, owner: str, workers: WorkerPool,
                 secrets: DriverSecrets | None = None) -> None:
        self.db = db
        self.secrets = secrets or DriverSecrets(None)
        self.owner = owner
        self.workers = workers
        self.conflicts = 0  # lock requests refused because another held the node (metrics)
        self.retried_releases: set[asyncio.Task[None]] = set()

    async def acquire(self, ident: str, *, attempts: int = 3,
                      interval: float = 0.2) -> NodeTask:
        """Lock the node or raise NodeLocked (409) / NotFound (404)."""
        for attempt in range(max(1, attempts)):
            async with self.db.single() as conn:
                row = await dbapi.reserve_node(conn, ident, self.owner)
            if row is not None:
                return NodeTask(self.db, self.owner, row, self.retried_releases,
                                self.secrets)
            async with self.db.read() as conn:
                current = await dbapi.get_node(conn, ident)  # NotFound when it is gone
            if attempt + 1 < attempts:
                await asyncio.sleep(interval)
        self.conflicts += 1
        raise NodeLocked(current["uuid"], current["reservation"] or "unknown")

    @asynccontextmanager
    async def locked(self, ident: str, *, attempts: int = 3,
                     interval: float = 0.2) -> AsyncIterator[NodeTask]:
        """The node, locked for the block. At its end the lock is released, unless the block
        spawned work and raised nothing: then a worker takes the task over."""
        task = await self.acquire(ident, attempts=attempts, interval=interval)
        try:
            yield task
        except BaseException:
            await task.release()
            raise
        await self._end_block(task)

    @asynccontextmanager
    async def try_locked(self, ident: str) -> AsyncIterator[NodeTask | None]:
        """For periodic work: the locked node, or None when it is locked or gone (the next
        period will see it: no retry here); the lock is released when the block ends, or
        handed to a worker as in `locked`."""
        try:
            task = await self.acquire(ident, attempts=1)
        except (NodeLocked, NotFound):
            yield None
            return
        try:
            yield task
        except BaseException:
            await task.release()
            raise
        await self._end_block(task)

    async def _end_block(self, task: NodeTask) -> None:
        if task._spawn is None or task.released:
            await task.release()
            return
        work, what = task._spawn
        self.workers.spawn(lambda: self._run(task, work, what), name=f"{what}:{task.uuid}")

    async def _run(self, task: NodeTask, work: Work, what: str) -> None:
        try:
            await self._attempts(task, work, what)
        except LockLost as exc:
            LOG.error("Node %s: %s: result discarded: %s", task.uuid, what, exc)
        except Exception as exc:
            LOG.exception("Node %s: %s crashed", task.uuid, what)
            try:
                await task.fail(f"{what} failed unexpectedly: {exc}", release=True)
            except Exception:
                LOG.exception("Node %s: could not record the failure", task.uuid)
        finally:
            await task.release()

    @staticmethod
    async def _attempts(task: NodeTask, work: Work, what: str) -> None:
        def waiting(delay: float) -> None:
            LOG.warning("Node %s: %s: the database is unavailable; running it again in "
                        "%.1f s", task.uuid, what, delay)

        await through_outages(lambda: work(task), attempts=WORK_DB_ATTEMPTS, waiting=waiting,
                              first=DB_RETRY_FIRST, most=DB_RETRY_MAX)
