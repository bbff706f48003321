"""Periodic work of the conductor. Each pass selects only the nodes that need work (by indexed
state, reservation or sync age), so its cost follows those nodes, not the size of the fleet."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import and_, or_, select, update

from ironsight.baremetal import states
from ironsight.baremetal.conductor.manager import Conductor
from ironsight.baremetal.conductor.start_record import updated
from ironsight.baremetal.conductor.task import NodeTask
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db.models import conductors, nodes
from ironsight.common.exceptions import IronsightError
from ironsight.common.process import pid_alive

LOG = logging.getLogger(__name__)

# Where a node left by a dead conductor goes, and what it is told.
_DEAD_CONDUCTOR_FAIL = {
    states.VERIFYING: states.ENROLL,
    states.INSPECTING: states.INSPECTFAIL,
}


class PeriodicTasks:
    def __init__(self, conductor: Conductor) -> None:
        self.c = conductor
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        conf = self.c.conf.conductor
        self._every(conf.heartbeat_interval, self.heartbeat, "heartbeat")
        self._every(conf.heartbeat_interval, self.recover_dead_conductors, "recover")
        self._every(conf.check_provision_state_interval, self.check_timeouts, "timeouts")
        if conf.sync_power_state_interval > 0:
            self._every(conf.sync_power_state_interval, self.sync_power_states, "power-sync")
        for name, interval, poll in self.c.inspection.poll_tasks():
            self._every(interval, poll, name, next_in=lambda done: done.next_in)

    def _every(self, interval: float, fn: Callable[[], Awaitable[Any]], name: str,
               next_in: Callable[[Any], float] | None = None) -> None:
        """Run `fn` every `interval` seconds, or after what `next_in` makes of its result."""
        async def loop() -> None:
            delay = interval
            while True:
                await asyncio.sleep(delay)
                delay = interval
                try:
                    done = await fn()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    LOG.exception("Periodic task %s failed; it runs again in %.0f s",
                                  name, interval)
                    continue
                if next_in is not None:
                    delay = next_in(done)

        self._tasks.append(asyncio.get_running_loop().create_task(loop(), name=name))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    # --- liveness ---------------------------------------------------------------------------

    async def register(self) -> None:
        async with self.c.db.begin() as conn:
            await dbapi.register_conductor(conn, self.c.name, socket.gethostname(), os.getpid(),
                                           sorted(self.c.drivers),
                                           self.c.conf.conductor.conductor_group)
        await self.recover_dead_conductors()

    async def unregister(self) -> None:
        async with self.c.db.begin() as conn:
            await dbapi.unregister_conductor(conn, self.c.name)
            await conn.execute(update(nodes).where(nodes.c.reservation == self.c.name)
                               .values(reservation=None))

    async def heartbeat(self) -> None:
        async with self.c.db.begin() as conn:
            if not await dbapi.heartbeat(conn, self.c.name):
                # Another replica declared us dead (we stalled): register again.
                await dbapi.register_conductor(conn, self.c.name, socket.gethostname(),
                                               os.getpid(), sorted(self.c.drivers),
                                               self.c.conf.conductor.conductor_group)

    async def recover_dead_conductors(self) -> int:
        """Release locks held by conductors that stopped heartbeating or whose process is gone
        (same host), fail the actions they left half-done, and take over the allocations they
        were processing. Returns nodes recovered."""
        deadline = dbapi.utcnow() - dt.timedelta(seconds=self.c.conf.conductor.heartbeat_timeout)
        host = socket.gethostname()
        async with self.c.db.begin() as conn:
            dead, live = [], []
            for row in await dbapi.list_conductors(conn):
                if row["name"] == self.c.name:
                    continue
                if row["heartbeat_at"] < deadline or (
                        row["hostname"] == host and not pid_alive(row["pid"])):
                    dead.append(row["name"])
                else:
                    live.append(row["name"])
            self.c.share.update(live)
            for name in dead:
                LOG.warning("Conductor %s is dead; releasing its node locks", name)
                await dbapi.unregister_conductor(conn, name)
            registered = select(conductors.c.name)
            orphaned = (await conn.execute(
                select(nodes.c.id, nodes.c.uuid, nodes.c.driver, nodes.c.reservation,
                       nodes.c.lock_epoch, nodes.c.provision_state, nodes.c.target_power_state,
                       nodes.c.driver_internal_info, nodes.c.inspect_interface)
                .where(nodes.c.reservation.is_not(None),
                       nodes.c.reservation.not_in(registered))
            )).mappings().all()
            for orphan in orphaned:
                await self._recover_node(conn, dict(orphan))
        await self.c.records.allocations.take_over_orphans(select(conductors.c.name))
        return len(orphaned)

    async def _recover_node(self, conn: Any, row: dict[str, Any]) -> None:
        values: dict[str, Any] = {"reservation": None}
        msg = f"Conductor {row['reservation']} died while working on this node"
        new_state = _DEAD_CONDUCTOR_FAIL.get(row["provision_state"])
        driver = self.c.drivers.get(row["driver"])
        iface = driver.inspect_for(row) if driver is not None else None
        if row["provision_state"] == states.INSPECTING and iface is not None \
                and iface.hands_off:
            # the start never reached the outside service: it is made again, not failed
            internal = updated(row["driver_internal_info"], starts=1,
                               lost=f"{msg} (starting the inspection)", interrupted=True)
            values.update(provision_state=states.INSPECTWAIT, provision_updated_at=dbapi.utcnow(),
                          driver_internal_info=internal)
        elif new_state is not None:
            values.update(provision_state=new_state, target_provision_state=None,
                          provision_updated_at=dbapi.utcnow(), last_error=msg)
        if row["target_power_state"]:
            values.update(target_power_state=None, last_error=msg)
        # only the dead conductor's lock as it was seen: never one taken since
        if not await dbapi.update_locked_node(conn, row["id"], row["reservation"],
                                              row["lock_epoch"], values):
            return
        await dbapi.add_history(conn, row["id"], f"Lock released: {msg}", severity="WARNING",
                                event_type="conductor", conductor=self.c.name)
        LOG.warning("Node %s: lock of dead conductor %s released", row["uuid"], row["reservation"])

    # --- provision state timeouts -----------------------------------------------------------

    async def check_timeouts(self) -> int:
        """Fail nodes waiting past their deadline. Only unlocked nodes are candidates: a
        locked one has a live worker whose own calls are bounded."""
        conf = self.c.conf.conductor
        now = dbapi.utcnow()
        limits = [(states.VERIFYING, conf.verify_timeout),
                  (states.INSPECTING, conf.inspect_wait_timeout),
                  (states.INSPECTWAIT, conf.inspect_wait_timeout)]
        conds = [and_(nodes.c.provision_state == state,
                      nodes.c.provision_updated_at < now - dt.timedelta(seconds=limit))
                 for state, limit in limits if limit > 0]
        if not conds:
            return 0
        async with self.c.db.read() as conn:
            rows = (await conn.execute(
                select(nodes.c.uuid, nodes.c.provision_state)
                .where(nodes.c.reservation.is_(None), or_(*conds)).limit(500))).all()
        failed = 0
        for uuid, state in rows:
            if not self.c.share.mine(uuid):
                continue  # another live replica's
            async with self.c.tasks.try_locked(uuid) as task:
                if task is not None and task.node["provision_state"] == state:
                    await self._time_out(task, state)
                    failed += 1
        return failed

    async def _time_out(self, task: NodeTask, state: str) -> None:
        if state == states.VERIFYING:
            await task.transition("fail", last_error="Timeout reached while verifying the node",
                                  release=True)
            return
        try:
            values = await self.c.inspection.abort_values(task, reason="timeout")
        except IronsightError as exc:
            LOG.warning("Node %s: could not abort inspection after timeout: %s", task.uuid, exc)
            values = {}
        error = ("Timeout reached while inspecting the node. Please check the node's history "
                 "and logs.")
        stalled = await self.c.inspection.where_stalled(task)
        await self.c.inspection.end_early(
            task, "fail", f"{error} {stalled}" if stalled else error, **values)

    # --- power state sync ---------------------------------------------------------------------

    async def sync_power_states(self) -> int:
        """Read the power state of the nodes synced longest ago (a bounded batch per pass) and
        record changes made outside ironsight. Drivers without a real BMC are skipped."""
        syncable = [alias for name, drv in self.c.drivers.items() if drv.power.syncable
                    for alias in self.c.drivers.names_of(name)]
        if not syncable:
            return 0
        conf = self.c.conf.conductor
        async with self.c.db.read() as conn:
            uuids = (await conn.execute(
                select(nodes.c.uuid)
                .where(nodes.c.driver.in_(syncable), nodes.c.maintenance.is_(False),
                       nodes.c.reservation.is_(None),
                       nodes.c.provision_state.not_in((states.ENROLL, states.VERIFYING)))
                .order_by(nodes.c.power_synced_at.is_not(None), nodes.c.power_synced_at)
                .limit(conf.sync_power_state_batch))).scalars().all()
        uuids = [uuid for uuid in uuids if self.c.share.mine(uuid)]
        sem = asyncio.Semaphore(8)

        async def one(uuid: str) -> None:
            async with sem, self.c.tasks.try_locked(uuid) as task:
                if task is not None:
                    await self._sync_one(task)

        await asyncio.gather(*(one(u) for u in uuids))
        return len(uuids)

    async def _sync_one(self, task: NodeTask) -> None:
        driver = self.c.drivers.for_node(task.node)
        now = time.time()
        try:
            state = await driver.power.get_power_state(task.context)
        except IronsightError as exc:
            LOG.warning("Node %s: power state sync failed: %s", task.uuid, exc)
            await task.save(power_synced_at=now, release=True)
            return
        if state != task.node["power_state"]:
            await task.save(f"Power state changed outside ironsight: "
                            f"{task.node['power_state']} -> {state}", event_type="power",
                            power_state=state, power_synced_at=now, release=True)
        else:
            await task.save(power_synced_at=now, release=True)
