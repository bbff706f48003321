"""The conductor: actions on nodes under their lock, long ones in the worker pool.

The API calls these methods directly (same process, same event loop). Because locks live in
the database, any replica's API may act on any node; no RPC bus is needed. The conductor owns
the state machine, the locks, the history and every statement; drivers only talk to
hardware (or to discoverd) and get a `NodeContext`, never the lock.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.conductor import provisioning
from ironsight.baremetal.conductor.discovery import Discovery, check_not_quarantined
from ironsight.baremetal.conductor.hosts import host_of
from ironsight.baremetal.conductor.inspection import Inspection
from ironsight.baremetal.conductor.records import Records
from ironsight.baremetal.conductor.task import NodeTask, TaskManager
from ironsight.baremetal.conductor.vmedia import VirtualMedia
from ironsight.baremetal.drivers.base import (
    BOOT_DEVICES,
    Driver,
    NodeContext,
    VendorMethod,
    vendor_method,
)
from ironsight.baremetal.drivers.loader import DriverSet
from ironsight.baremetal.secrets import DriverSecrets, SecretUnreadable
from ironsight.common.config import Config
from ironsight.common.db import Database
from ironsight.common.exceptions import (
    InvalidParameterValue,
    InvalidStateRequested,
    IronsightError,
    NotFound,
)
from ironsight.common.ring import Share
from ironsight.common.workers import WorkerPool

LOG = logging.getLogger(__name__)

POWER_TARGETS = (states.POWER_ON, states.POWER_OFF, states.REBOOT)
POWER_ERROR_PREFIX = "Failed to change power state to"
# The interfaces `GET /v1/nodes/{node}/validate` reports on, as Ironic lists them.
VALIDATED_INTERFACES = ("boot", "console", "deploy", "inspect", "management", "power", "raid",
                        "rescue", "storage", "network", "bios", "firmware")


def conductor_name(conf: Config) -> str:
    """Unique per process, so that a dead process's locks can be told from a live one's."""
    return f"{conf.DEFAULT.host}:{os.getpid()}"


class Conductor:
    def __init__(self, conf: Config, db: Database, drivers: DriverSet,
                 secrets: DriverSecrets | None = None) -> None:
        self.conf = conf
        self.db = db
        self.drivers = drivers
        self.name = conductor_name(conf)
        self.workers = WorkerPool(conf.conductor.workers_pool_size)
        self.secrets = secrets or DriverSecrets(None)
        self.tasks = TaskManager(db, self.name, self.workers, self.secrets)
        # this replica's part of the periodic work (the live members: periodic.py)
        self.share = Share(self.name)
        self.records = Records(db, self.tasks, drivers)
        self.discovery = Discovery(db, self.tasks)
        # the images of the nodes booted from virtual media, served by the API (api/vmedia.py)
        self.media = VirtualMedia(conf)
        self.inspection = Inspection(conf, db, self.tasks, drivers, self.share, self.media)

    @property
    def host(self) -> str:
        """This replica's host: its conductor's hostname in the API (conductor/hosts.py)."""
        return self.conf.DEFAULT.host

    def host_for(self, node_uuid: str) -> str:
        """The node's `conductor` in the API: the host of the live replica whose periodic
        share the node is in (as Ironic's hash ring maps a node to a conductor)."""
        return host_of(self.share.owner(node_uuid))

    # --- provisioning ---------------------------------------------------------------------

    async def do_provision_action(self, ident: str, verb: str) -> None:
        """Run provision event `verb` (states.TARGET_EVENTS: the API's target, as an event)."""
        async with self.tasks.locked(ident) as task:
            node = task.node
            state = node["provision_state"]
            check_not_quarantined(node, f'provisioning action ("{verb}")')
            if not states.is_allowed(state, verb):
                raise InvalidStateRequested(
                    f'The requested action "{verb}" can not be performed on node '
                    f'"{node["uuid"]}" while it is in state "{state}".')
            if verb in states.INSTANT_EVENTS:
                driver = self.drivers.for_node(node)
                provisioning.check_supported(driver, node, verb)
                await provisioning.run(task, driver, verb,
                                       self.conf.conductor.power_state_change_timeout)
            elif verb == "manage" and state == states.ENROLL:
                self.workers.check_free()
                self.drivers.for_node(node)
                await task.transition("manage", target=states.MANAGEABLE)
                task.spawn(self._verify, "verify")
            elif verb == "inspect":
                await self.inspection.begin(task)
            elif verb == "abort":
                await self._abort(task)
            else:  # manage from inspect failed / available, provide
                await task.transition(verb, release=True)

    async def _verify(self, task: NodeTask) -> None:
        driver = self.drivers.for_node(task.node)
        try:
            ctx = task.context
            driver.power.validate(ctx)
            driver.management.validate(ctx)
            power = await driver.power.get_power_state(ctx)
        except IronsightError as exc:
            await task.transition("fail", last_error=f"Failed to verify node: {exc}",
                                  release=True)
            return
        await task.transition("done", power_state=power, release=True)

    async def _abort(self, task: NodeTask) -> None:
        node = task.node
        if node["provision_state"] == states.SERVICEFAIL:
            await task.transition("abort", release=True)
            return
        if node["provision_state"] != states.INSPECTWAIT:
            raise InvalidStateRequested(
                f'The requested action "abort" can not be performed on node '
                f'"{node["uuid"]}" while it is in state "{node["provision_state"]}".')
        values = await self.inspection.abort_values(task)
        await self.inspection.end_early(task, "abort", "Inspection was aborted by request.",
                                        **values)

    async def continue_inspection(self, report: dict[str, Any],
                                  token: str | None = None) -> dict[str, Any]:
        return await self.inspection.continue_inspection(report, token)

    async def node_inventory(self, ident: str) -> dict[str, Any]:
        """The latest inspection's inventory and plugin data of a node, from the service
        that keeps them (discoverd), through the first loaded inspect interface that reads
        them (all ask the same discoverd): the data belong to the node whatever its driver
        is now."""
        node = await self.records.get_node(ident)
        keeper = next((d.inspect for d in self.drivers.values()
                       if d.inspect is not None and d.inspect.keeps_inventory), None)
        found = await keeper.inventory(node["uuid"]) if keeper is not None else None
        if found is not None:
            return found
        raise NotFound(f"Node inventory record for node {node['uuid']} could not be found.")

    async def inspection_attempts(self, ident: str) -> list[dict[str, Any]]:
        """The node's inspection attempts with their timelines, from the service that records
        them (discoverd), as for the inventory: whatever the node's driver is now."""
        node = await self.records.get_node(ident)
        for driver in self.drivers.values():
            if driver.inspect is None:
                continue
            found = await driver.inspect.attempts(node["uuid"])
            if found is not None:
                return found
        raise NotFound(f"No inspection timeline is recorded for node {node['uuid']}: no "
                       "enabled inspect interface records one (discoverd's does)")

    async def inspection_log(self, ident: str, attempt: int | None) -> dict[str, Any]:
        """The ramdisk's log of one of the node's inspection attempts, as for the timeline."""
        node = await self.records.get_node(ident)
        for driver in self.drivers.values():
            if driver.inspect is None:
                continue
            found = await driver.inspect.ramdisk_log(node["uuid"], attempt)
            if found is not None:
                return found
        raise NotFound(f"No ramdisk log is kept for node {node['uuid']}: no enabled inspect "
                       "interface keeps one (discoverd's does)")

    # --- power and management -------------------------------------------------------------

    async def change_power_state(self, ident: str, target: str) -> None:
        if target not in POWER_TARGETS:
            raise InvalidParameterValue(
                f"target: {target!r} is not a supported power state "
                f"(one of: {', '.join(POWER_TARGETS)})")
        async with self.tasks.locked(ident) as task:
            check_not_quarantined(task.node, "power action")
            driver = self.drivers.for_node(task.node)
            driver.power.validate(task.context)
            self.workers.check_free()
            final = states.POWER_ON if target == states.REBOOT else target
            await task.save(f"Power action requested: {target}", event_type="power",
                            target_power_state=final)
            task.spawn(lambda t: self._set_power(t, target), "power")

    async def _set_power(self, task: NodeTask, target: str) -> None:
        driver = self.drivers.for_node(task.node)
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
        async with self.tasks.locked(ident) as task:
            check_not_quarantined(task.node, "management action")
            driver = self.drivers.for_node(task.node)
            driver.management.validate(task.context)
            await driver.management.set_boot_device(task.context, device, persistent)
            await task.save(f"Boot device set to {device} (persistent={persistent})",
                            event_type="management", release=True)

    async def set_boot_mode(self, ident: str, mode: str) -> None:
        await self._manage(ident, lambda m, n: m.set_boot_mode(n, mode),
                           f"Boot mode set to {mode}")

    async def set_secure_boot(self, ident: str, enabled: bool) -> None:
        await self._manage(ident, lambda m, n: m.set_secure_boot_state(n, enabled),
                           f"Secure Boot {'enabled' if enabled else 'disabled'}")

    async def get_virtual_media(self, ident: str) -> list[dict[str, Any]]:
        node = await self.records.get_node(ident)
        management = self.drivers.for_node(node).management
        ctx = self.secrets.context(node)
        management.validate(ctx)
        return await management.get_virtual_media(ctx)

    async def inject_nmi(self, ident: str) -> None:
        await self._manage(ident, lambda m, n: m.inject_nmi(n), "NMI injected")

    async def _manage(self, ident: str, action: Any, event: str) -> None:
        """One management call under the node's lock, written to its history."""
        async with self.tasks.locked(ident) as task:
            check_not_quarantined(task.node, "management action")
            driver = self.drivers.for_node(task.node)
            driver.management.validate(task.context)
            await action(driver.management, task.context)
            await task.save(event, event_type="management", release=True)

    async def get_boot_device(self, ident: str) -> dict[str, Any]:
        node = await self.records.get_node(ident)
        driver = self.drivers.for_node(node)
        ctx = self.secrets.context(node)
        driver.management.validate(ctx)
        return await driver.management.get_boot_device(ctx)

    async def supported_boot_devices(self, ident: str) -> list[str]:
        node = await self.records.get_node(ident)
        return self.drivers.for_node(node).management.supported_boot_devices(
            self.secrets.context(node))

    # --- console, indicators, vendor passthru (Ironic's fake-hardware has all three) -------

    async def set_console_mode(self, ident: str, enabled: bool) -> None:
        """Start or stop the node's console in a worker, which records `console_enabled`
        once the console interface is done (Ironic's set_console_mode: nothing happens when
        the console is so already, and no lock is taken)."""
        node = await self.records.get_node(ident)
        check_not_quarantined(node, "console action")
        self.drivers.for_node(node).console_for(node).validate(self.secrets.context(node))
        if bool(node["console_enabled"]) == enabled:
            return
        async with self.tasks.locked(ident) as task:
            console = self.drivers.for_node(task.node).console_for(task.node)
            console.validate(task.context)
            if bool(task.node["console_enabled"]) == enabled:
                return
            self.workers.check_free()
            await task.save(None, last_error=None)
            task.spawn(lambda t: self._set_console(t, enabled), "console")

    async def _set_console(self, task: NodeTask, enabled: bool) -> None:
        console = self.drivers.for_node(task.node).console_for(task.node)
        try:
            if enabled:
                await console.start_console(task.context)
            else:
                await console.stop_console(task.context)
        except IronsightError as exc:
            msg = (f"Error {'enabling' if enabled else 'disabling'} the console on node "
                   f"{task.uuid}. Reason: {exc}")
            LOG.error("Node %s: %s", task.uuid, msg)
            await task.save(msg, severity="ERROR", event_type="console", release=True,
                            last_error=msg)
            return
        await task.save(f"Console {'enabled' if enabled else 'disabled'}",
                        event_type="console", release=True, console_enabled=enabled,
                        last_error=None)

    async def get_console(self, ident: str) -> dict[str, Any] | None:
        """How to reach the node's console; None while it is not enabled (whatever the
        console interface, as Ironic answers)."""
        node = await self.records.get_node(ident)
        if not node["console_enabled"]:
            return None
        console = self.drivers.for_node(node).console_for(node)
        ctx = self.secrets.context(node)
        console.validate(ctx)
        return await console.get_console(ctx)

    async def supported_indicators(self, ident: str) -> dict[str, dict[str, Any]]:
        node = await self.records.get_node(ident)
        driver, ctx = self.drivers.for_node(node), self.secrets.context(node)
        driver.management.validate(ctx)
        return await driver.management.supported_indicators(ctx)

    async def get_indicator_state(self, ident: str, component: str, indicator: str) -> str:
        node = await self.records.get_node(ident)
        driver, ctx = self.drivers.for_node(node), self.secrets.context(node)
        driver.management.validate(ctx)
        return await driver.management.get_indicator_state(ctx, component, indicator)

    async def set_indicator_state(self, ident: str, component: str, indicator: str,
                                  state: str) -> None:
        async with self.tasks.locked(ident) as task:
            check_not_quarantined(task.node, "management action")
            management = self.drivers.for_node(task.node).management
            management.validate(task.context)
            await management.set_indicator_state(task.context, component, indicator, state)

    async def vendor_methods(self, ident: str) -> dict[str, dict[str, Any]]:
        node = await self.records.get_node(ident)
        vendor = self.drivers.for_node(node).vendor_for(node)
        found = vendor.methods() if vendor is not None else {}
        return {name: m.metadata() for name, m in sorted(found.items())}

    async def vendor_passthru(self, ident: str, method: str, http_method: str,
                              args: dict[str, Any]) -> tuple[bool, Any]:
        """Call a node's vendor method: (True, None) once an asynchronous one is handed to a
        worker, (False, what it returned) for a synchronous one. A method that requires the
        exclusive lock is checked and run under the node's lock (a worker holds it to the
        end); the others without it, as Ironic's shared lock does."""
        node = await self.records.get_node(ident)
        check_not_quarantined(node, "vendor passthru call")
        vendor = self.drivers.for_node(node).vendor_for(node)
        found = vendor_method(vendor, method, http_method)
        assert vendor is not None  # vendor_method found none without one
        if not found.require_exclusive_lock:
            ctx = self.secrets.context(node)
            vendor.validate(ctx, method, args)
            if not found.async_call:
                return False, await found.run(ctx, args)
            self.workers.check_free()
            self.workers.spawn(lambda: self._vendor_call(found, ctx, args),
                               name=f"vendor:{node['uuid']}")
            return True, None
        async with self.tasks.locked(ident) as task:
            vendor = self.drivers.for_node(task.node).vendor_for(task.node)
            found = vendor_method(vendor, method, http_method)
            assert vendor is not None
            vendor.validate(task.context, method, args)
            if not found.async_call:
                return False, await found.run(task.context, args)
            self.workers.check_free()
            ctx = task.context
            task.spawn(lambda _t: self._vendor_call(found, ctx, args), "vendor")
            return True, None

    @staticmethod
    async def _vendor_call(found: VendorMethod, ctx: NodeContext,
                           args: dict[str, Any]) -> None:
        """An asynchronous vendor call: its failure is logged (nobody waits for it), and
        leaves the node as it was, as in Ironic."""
        try:
            await found.run(ctx, args)
        except Exception:
            LOG.exception("Node %s: vendor passthru method %s failed", ctx.uuid, found.name)

    def validate(self, node: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Per-interface validation result, as `GET /v1/nodes/{n}/validate` shows it."""
        result: dict[str, dict[str, Any]] = {}
        driver = self.drivers.get(node["driver"])
        try:
            ctx = self.secrets.context(node)
        except SecretUnreadable as exc:
            return {iface: {"result": False, "reason": str(exc)}
                    for iface in VALIDATED_INTERFACES}
        for iface in VALIDATED_INTERFACES:
            impl = (driver.inspect_for(node) if iface == "inspect" else
                    driver.interfaces().get(iface)) if driver else None
            if driver is None:
                result[iface] = {"result": False,
                                 "reason": f"Driver {node['driver']} is not loaded"}
            elif iface == "console":
                result[iface] = self._validate_console(driver, node, ctx)
            elif iface == "boot" and driver.boot_for(node) is not None:
                result[iface] = self._validate_media_boot(driver, node, ctx)
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

    def _validate_media_boot(self, driver: Driver, node: dict[str, Any],
                             ctx: NodeContext) -> dict[str, Any]:
        """A boot from virtual media: the BMC's fields, and where BMCs fetch the image."""
        boot = driver.boot_for(node)
        assert boot is not None
        try:
            boot.validate(ctx)
            self.media.check()
        except IronsightError as exc:
            return {"result": False, "reason": str(exc)}
        return {"result": True}

    @staticmethod
    def _validate_console(driver: Driver, node: dict[str, Any],
                          ctx: NodeContext) -> dict[str, Any]:
        """A node without a console (no-console) fails its check, as in Ironic."""
        try:
            driver.console_for(node).validate(ctx)
        except IronsightError as exc:
            return {"result": False, "reason": str(exc)}
        return {"result": True}

    async def stop(self) -> None:
        await self.workers.drain(timeout=self.conf.DEFAULT.graceful_shutdown_timeout)
        for driver in self.drivers.values():
            for inspect in (driver.inspect, *driver.inspects.values()):
                if inspect is not None:
                    await inspect.close()
