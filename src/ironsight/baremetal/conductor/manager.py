"""The conductor: runs actions on nodes under their lock, long ones in the worker pool.

The API calls these methods directly (same process, same event loop). Because locks live in
the database, any replica's API may act on any node; no RPC bus is needed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.conductor.task import NodeTask, acquire
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.drivers.base import BOOT_DEVICES, Driver, NodeContext
from ironsight.common.config import Config
from ironsight.common.db import Database
from ironsight.common.exceptions import (
    InvalidParameterValue,
    InvalidStateRequested,
    IronsightError,
    NodeLocked,
    NotFound,
    UnsupportedDriverExtension,
)
from ironsight.common.workers import WorkerPool

LOG = logging.getLogger(__name__)

POWER_TARGETS = (states.POWER_ON, states.POWER_OFF, states.REBOOT)
POWER_ERROR_PREFIX = "Failed to change power state to"


def conductor_name(conf: Config) -> str:
    """Unique per process, so that a dead process's locks can be told from a live one's."""
    return f"{conf.DEFAULT.host}:{os.getpid()}"


class Conductor:
    def __init__(self, conf: Config, db: Database, drivers: dict[str, Driver],
                 refused: dict[str, str] | None = None) -> None:
        self.conf = conf
        self.db = db
        self.drivers = drivers
        self.refused = refused or {}
        self.name = conductor_name(conf)
        self.workers = WorkerPool(conf.conductor.workers_pool_size)

    # --- locking --------------------------------------------------------------------------

    async def acquire(self, ident: str) -> NodeTask:
        return await acquire(self.db, self.name, ident, attempts=3, interval=0.2)

    @asynccontextmanager
    async def try_acquire(self, ident: str) -> AsyncIterator[NodeTask | None]:
        """For periodic work: the locked node, or None when it is locked or gone (the next
        period will see it); the lock is released when the block ends."""
        try:
            task = await self.acquire(ident)
        except (NodeLocked, NotFound):
            yield None
            return
        try:
            yield task
        finally:
            await task.release()

    def driver_for(self, node: dict[str, Any]) -> Driver:
        driver = self.drivers.get(node["driver"])
        if driver is None:
            why = self.refused.get(node["driver"], "not enabled on this conductor")
            raise InvalidParameterValue(
                f"No conductor service registered which supports driver {node['driver']}: {why}")
        return driver

    def _spawn(self, task: NodeTask, fn: Callable[[NodeTask], Awaitable[None]],
               what: str) -> None:
        """Hand the locked task to a worker; the worker releases the lock when it ends."""

        async def run() -> None:
            try:
                await fn(task)
            except Exception as exc:
                LOG.exception("Node %s: %s crashed", task.uuid, what)
                await self._fail_after_crash(task, f"{what} failed unexpectedly: {exc}")
            finally:
                await task.release()

        self.workers.spawn(run, name=f"{what}:{task.uuid}")

    async def _fail_after_crash(self, task: NodeTask, message: str) -> None:
        """Leave a node that a crashed action was working on in a state an operator can act on."""
        try:
            state = task.node["provision_state"]
            if states.is_allowed(state, "fail"):
                await task.transition("fail", last_error=message)
            else:
                await task.save(message, severity="ERROR", last_error=message,
                                target_power_state=None)
        except Exception:
            LOG.exception("Node %s: could not record the failure", task.uuid)

    # --- provisioning ---------------------------------------------------------------------

    async def do_provision_action(self, ident: str, verb: str) -> None:
        task = await self.acquire(ident)
        spawned = False
        try:
            node = task.node
            state = node["provision_state"]
            if not states.is_allowed(state, verb):
                raise InvalidStateRequested(
                    f'The requested action "{verb}" can not be performed on node '
                    f'"{node["uuid"]}" while it is in state "{state}".')
            if verb == "manage" and state == states.ENROLL:
                self.workers.check_free()
                self.driver_for(node)
                await task.transition("manage", target=states.MANAGEABLE)
                self._spawn(task, self._verify, "verify")
                spawned = True
            elif verb == "inspect":
                driver = self.driver_for(node)
                if driver.inspect is None:
                    raise UnsupportedDriverExtension(
                        f"Driver {node['driver']} does not support inspection "
                        "(disabled or not implemented).")
                driver.inspect.validate(task.context)
                driver.power.validate(task.context)
                self.workers.check_free()
                await task.transition("inspect", target=states.MANAGEABLE,
                                      inspection_started_at=dbapi.utcnow(),
                                      inspection_finished_at=None)
                self._spawn(task, self._inspect, "inspect")
                spawned = True
            elif verb == "abort":
                await self._abort(task)
            else:  # manage from inspect failed / available, provide
                await task.transition(verb, release=True)
        finally:
            if not spawned:
                await task.release()

    async def _verify(self, task: NodeTask) -> None:
        driver = self.driver_for(task.node)
        ctx = task.context
        try:
            driver.power.validate(ctx)
            driver.management.validate(ctx)
            power = await driver.power.get_power_state(ctx)
        except IronsightError as exc:
            await task.transition("fail", last_error=f"Failed to verify node: {exc}",
                                  release=True)
            return
        await task.transition("done", power_state=power, release=True)

    async def _inspect(self, task: NodeTask) -> None:
        driver = self.driver_for(task.node)
        assert driver.inspect is not None
        try:
            new_state = await driver.inspect.inspect_hardware(task)
        except IronsightError as exc:
            await task.transition("fail", last_error=f"Failed to inspect hardware: {exc}",
                                  release=True)
            return
        if task.released:
            return  # the interface moved the node on and gave the lock up itself
        if new_state == states.INSPECTWAIT:
            await task.transition("wait", target=states.MANAGEABLE, release=True)
        else:
            await task.transition("done", inspection_finished_at=dbapi.utcnow(), release=True)

    async def _abort(self, task: NodeTask) -> None:
        node = task.node
        if node["provision_state"] != states.INSPECTWAIT:
            raise InvalidStateRequested(
                f'The requested action "abort" can not be performed on node '
                f'"{node["uuid"]}" while it is in state "{node["provision_state"]}".')
        internal = await abort_inspection(self.drivers.get(node["driver"]), task)
        await task.transition("abort", last_error="Inspection was aborted by request.",
                              **internal)

    # --- power and management -------------------------------------------------------------

    async def change_power_state(self, ident: str, target: str) -> None:
        if target not in POWER_TARGETS:
            raise InvalidParameterValue(
                f"target: {target!r} is not a supported power state "
                f"(one of: {', '.join(POWER_TARGETS)})")
        task = await self.acquire(ident)
        spawned = False
        try:
            driver = self.driver_for(task.node)
            driver.power.validate(task.context)
            self.workers.check_free()
            final = states.POWER_ON if target == states.REBOOT else target
            await task.save(f"Power action requested: {target}", event_type="power",
                            target_power_state=final)
            self._spawn(task, lambda t: self._set_power(t, target), "power")
            spawned = True
        finally:
            if not spawned:
                await task.release()

    async def _set_power(self, task: NodeTask, target: str) -> None:
        driver = self.driver_for(task.node)
        timeout = self.conf.conductor.power_state_change_timeout
        try:
            await driver.power.set_power_state(task.context, target, timeout)
        except IronsightError as exc:
            msg = f"{POWER_ERROR_PREFIX} '{target}': {exc}"
            LOG.error("Node %s: %s", task.uuid, msg)
            await task.save(msg, severity="ERROR", event_type="power", release=True,
                            target_power_state=None, last_error=msg)
            return
        final = states.POWER_ON if target == states.REBOOT else target
        values: dict[str, Any] = {"power_state": final, "target_power_state": None,
                                  "power_synced_at": None}
        if (task.node.get("last_error") or "").startswith(POWER_ERROR_PREFIX):
            values["last_error"] = None  # only a power failure is cleared by a power success
        await task.save(f"Power state is now {final}", event_type="power", release=True,
                        **values)

    async def set_boot_device(self, ident: str, device: str, persistent: bool) -> None:
        if device not in BOOT_DEVICES:
            raise InvalidParameterValue(
                f"boot_device: {device!r} is not supported (one of: {', '.join(BOOT_DEVICES)})")
        task = await self.acquire(ident)
        try:
            driver = self.driver_for(task.node)
            driver.management.validate(task.context)
            await driver.management.set_boot_device(task.context, device, persistent)
            await task.save(f"Boot device set to {device} (persistent={persistent})",
                            event_type="management", release=True)
        finally:
            await task.release()

    async def get_boot_device(self, ident: str) -> dict[str, Any]:
        async with self.db.read() as conn:
            node = await dbapi.get_node(conn, ident)
        driver = self.driver_for(node)
        ctx = NodeContext.of(node)
        driver.management.validate(ctx)
        return await driver.management.get_boot_device(ctx)

    async def supported_boot_devices(self, ident: str) -> list[str]:
        async with self.db.read() as conn:
            node = await dbapi.get_node(conn, ident)
        return self.driver_for(node).management.supported_boot_devices(NodeContext.of(node))

    async def validate(self, node: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Per-interface validation result, as `GET /v1/nodes/{n}/validate` shows it."""
        result: dict[str, dict[str, Any]] = {}
        driver = self.drivers.get(node["driver"])
        ctx = NodeContext.of(node)
        for iface in ("boot", "console", "deploy", "inspect", "management", "power", "raid",
                      "rescue", "storage", "network", "bios"):
            impl = driver.interfaces().get(iface) if driver else None
            if driver is None:
                result[iface] = {"result": False,
                                 "reason": f"Driver {node['driver']} is not loaded"}
            elif impl is None and iface in driver.hw.interface_names and iface != "inspect":
                # Declared by the hardware type but with nothing to check (boot, deploy:
                # deployment is out of scope), as Ironic's fake interfaces validate.
                result[iface] = {"result": True}
            elif impl is None:
                reason = ("Inspection is not enabled (see [discoverd] enabled)"
                          if iface == "inspect" else "not supported")
                result[iface] = {"result": None, "reason": reason}
            else:
                try:
                    impl.validate(ctx)
                    result[iface] = {"result": True}
                except IronsightError as exc:
                    result[iface] = {"result": False, "reason": str(exc)}
        return result

    async def stop(self) -> None:
        await self.workers.drain(timeout=10)
        for driver in self.drivers.values():
            if driver.inspect is not None:
                await driver.inspect.close()


async def abort_inspection(driver: Driver | None, task: NodeTask) -> dict[str, Any]:
    """Let the inspect interface abort what it started elsewhere; returns the node values to
    save with the state change (e.g. a pending abort to retry)."""
    aborter = getattr(driver.inspect, "abort", None) if driver and driver.inspect else None
    if aborter is None:
        return {}
    changes = await aborter(task.context) or {}
    if not changes:
        return {}
    internal = dict(task.node.get("driver_internal_info") or {})
    for key, value in changes.items():
        if value is None:
            internal.pop(key, None)
        else:
            internal[key] = value
    return {"driver_internal_info": internal}
