"""The conductor's side of inspection: the inspect interface talks to whatever inspects
(discoverd, for `DiscoverdInspect`) and returns outcomes; this module owns the rest — the
state machine, the node lock, the history and every statement.

- `begin`, under the lock of an `inspect` request: checks, `inspecting`, then a worker.
- The worker (`_run`): a hands-off interface gets the node in `inspect wait`. When the
  conductor boots the node itself (`conductor_boots`, Ironic's managed boot), the lock is kept
  through `start`, the boot device and the reboot; otherwise it is released *before* `start`
  (the outside service then acts on the node through the API, so it must not find it locked:
  the Kilo design's rule). Any other interface runs under the lock.
- `poll`: one periodic pass per interface class, for all nodes of all hardware types using it:
  aborts that did not reach their service are retried, then the waiting nodes' outcomes are
  read in one call and applied.
- `abort_values`: an operator's abort and the `inspect wait` timeout abort in the outside
  service too, so that the node is powered off and its PXE access closed.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from sqlalchemy import select

from ironsight.baremetal import states
from ironsight.baremetal.conductor.start_record import record, updated
from ironsight.baremetal.conductor.task import NodeTask, TaskManager
from ironsight.baremetal.conductor.vmedia import VirtualMedia
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db.models import nodes
from ironsight.baremetal.drivers.base import (
    BootInterface,
    Findings,
    InspectInterface,
    InspectOutcome,
    NodeContext,
    WaitingNode,
)
from ironsight.baremetal.drivers.loader import DriverSet
from ironsight.baremetal.ramdisk_network import static_args
from ironsight.baremetal.secrets import SecretUnreadable
from ironsight.common.config import Config
from ironsight.common.db import Database
from ironsight.common.exceptions import (
    DiscoverdDisabled,
    InvalidParameterValue,
    IronsightError,
    UnsupportedDriverExtension,
)
from ironsight.common.ring import Share

LOG = logging.getLogger(__name__)
# Steps of an attempt the conductor tells the inspection service of (discoverd's
# diagnosis.CONDUCTOR_PHASES: the names are its API's, not an import of its code).
POWER_ON_REQUESTED, POWERED_ON = "power_on_requested", "powered_on"
MEDIA_BUILT, MEDIA_INSERTED = "media_built", "media_inserted"
MEDIA_EJECTED, POWERED_OFF_PHASE = "media_ejected", "powered_off"

# How long a failure found after the lock was given up waits for the lock again (discoverd
# may hold it briefly for the boot device or a reboot).
RELOCK_ATTEMPTS = 50
RELOCK_INTERVAL = 0.1
# Seconds an attempt may seem to start before its inspection (two services' clocks)
RETRY_SKEW = 5.0
# What the history says of the boot, and of the power off at the end.
BOOTED = "boot device set to pxe and rebooted into the inspection ramdisk: power on"
BOOTED_FROM_CD = ("inspection ISO inserted as a virtual CD, boot device set to cdrom and "
                  "rebooted into the inspection ramdisk: power on")
POWERED_OFF = "power off"
# A start made again (from `inspect wait`) of a node its conductor boots records this before
# it begins and clears it once the node is booted: a poll finding the node unlocked with it
# (its conductor died meanwhile) makes the start again. (A first start stays `inspecting`
# until then, which the recovery of a dead conductor's locks treats the same way.)
BOOT_INTERRUPTED = ("the conductor stopped before the node was booted into the inspection "
                    "ramdisk")



@dataclass(frozen=True)
class PollPass:
    """What one poll pass did: nodes moved on, and seconds until the next pass."""

    moved: int
    next_in: float


PollTask = tuple[str, float, Callable[[], Awaitable[PollPass]]]


class Inspection:
    def __init__(self, conf: Config, db: Database, tasks: TaskManager, drivers: DriverSet,
                 share: Share, media: VirtualMedia | None = None) -> None:
        self.conf = conf
        self.db = db
        self.tasks = tasks
        self.drivers = drivers
        self.share = share
        self.media = media if media is not None else VirtualMedia(conf)

    # --- starting -------------------------------------------------------------------------

    async def begin(self, task: NodeTask) -> None:
        driver = self.drivers.for_node(task.node)
        iface = driver.inspect_for(task.node)
        if iface is None:
            raise UnsupportedDriverExtension(
                f"Driver {task.node['driver']} does not support inspection "
                "(disabled or not implemented).")
        iface.validate(task.context)
        driver.power.validate(task.context)
        boot = driver.boot_for(task.node) if iface.hands_off else None  # boots a ramdisk
        if boot is not None:
            if not iface.conductor_boots:
                raise InvalidParameterValue(
                    f"boot_interface {boot.name} needs the conductor to boot the node "
                    "([discoverd] conductor_boots = true)")
            boot.validate(task.context)
            self.media.check()
            static_args(task.node.get("network_data"))  # refused now, not at the boot
        self.tasks.workers.check_free()
        await task.transition("inspect", target=states.MANAGEABLE,
                              inspection_started_at=dbapi.utcnow(), inspection_finished_at=None)
        task.spawn(self._run, "inspect")

    async def _run(self, task: NodeTask) -> None:
        iface = self.drivers.for_node(task.node).inspect_for(task.node)
        assert iface is not None
        node = task.context
        if not iface.hands_off:
            await self._apply(task, await _start(iface, node))
            return
        internal = updated(task.node.get("driver_internal_info"), starts=1, lost=None)
        if iface.conductor_boots:
            # still `inspecting`: a conductor dying now leaves a start the recovery of its
            # locks hands to the poll to make again (periodic.py)
            await self._start_and_boot(task, iface, internal)
            return
        await task.transition("wait", target=states.MANAGEABLE, release=True,
                              driver_internal_info=internal)
        await self._hand_over(iface, node)

    async def _start_and_boot(self, task: NodeTask, iface: InspectInterface,
                              internal: dict[str, Any]) -> None:
        """A hands-off start of a node the conductor boots, all under its lock, from
        `inspecting` (a first start) or `inspect wait` (one made again): the service records
        the start (and opens its PXE side) first, then the node gets the boot device and is
        rebooted into the ramdisk; one write then moves it to `inspect wait`, unlocked."""
        again = task.node["provision_state"] == states.INSPECTWAIT
        outcome = await _start(iface, await self._known(task.context), again=again)
        internal = updated(internal, lost=None, interrupted=False)
        if outcome.state == InspectOutcome.RUNNING:
            LOG.info("Node %s: the inspection was under way in %s already: %s", task.uuid,
                     iface.name, outcome.error)
            await self._waiting(task, f"Inspection found under way in {iface.name} "
                                      f"({outcome.error})", driver_internal_info=internal)
            return
        if outcome.state == InspectOutcome.FAILED:
            await task.transition("fail", last_error=outcome.error, release=True,
                                  driver_internal_info=internal)
            return
        if outcome.state == InspectOutcome.LOST:
            why = outcome.error or "the start did not reach the inspection service"
            LOG.warning("Node %s: %s; starting again in %s", task.uuid, why, iface.start_grace)
            await self._waiting(task, None, driver_internal_info=updated(internal, lost=why))
            return
        driver = self.drivers.for_node(task.node)
        boot = self._media_boot(task.node)
        steps: list[dict[str, Any]] = []  # for the attempt's timeline, told once
        try:
            if boot is not None:
                await self._insert(task, iface, boot, steps)
            device = boot.boot_device if boot is not None else "pxe"
            await driver.management.set_boot_device(task.context, device, False)
            steps.append(_step(POWER_ON_REQUESTED,
                               {"action": states.REBOOT, "boot_device": device}))
            await driver.power.set_power_state(task.context, states.REBOOT,
                                               self.conf.conductor.power_state_change_timeout)
            steps.append(_step(POWERED_ON))
        except IronsightError as exc:
            error = f"Failed to boot the node into the inspection ramdisk: {exc}"
            LOG.error("Node %s: %s", task.uuid, error)
            await _note(iface, task, steps)
            await self._eject(task)
            # closes the service's side; its code names the step that failed
            values = await self.abort_values(task, internal, reason="boot_failed")
            await task.transition("fail", last_error=error, release=True,
                                  **{"driver_internal_info": internal, **values})
            return
        await _note(iface, task, steps)
        await self._waiting(task, BOOTED_FROM_CD if boot is not None else BOOTED,
                            power_state=states.POWER_ON, driver_internal_info=internal)
        LOG.info("Node %s: inspection started (%s), node rebooted into the ramdisk",
                 task.uuid, iface.name)

    # --- virtual media, when the node's boot interface boots it from a CD ------------------

    def _media_boot(self, node: dict[str, Any]) -> BootInterface | None:
        """The node's medium boot interface when the conductor boots it; None: PXE."""
        driver = self.drivers.get(node["driver"])
        iface = driver.inspect_for(node) if driver is not None else None
        if driver is None or iface is None or not iface.conductor_boots:
            return None
        return driver.boot_for(node)

    async def _insert(self, task: NodeTask, iface: InspectInterface,
                      boot: BootInterface, steps: list[dict[str, Any]]) -> None:
        """The node's image for this attempt: its parameters (discoverd's callback URL and
        a new token, its static network, if any), published, and inserted by the BMC."""
        params = await iface.ramdisk_params(task.context)
        macs = await self._macs(task.uuid)
        extra = static_args(task.node.get("network_data"), macs)
        if macs and not any(a.startswith("BOOTIF=") for a in extra):
            extra.insert(0, "BOOTIF=01-" + macs[0].replace(":", "-"))
        began = time.monotonic()
        url = await self.media.publish(task.uuid, " ".join([params, *extra]))
        steps.append(_step(MEDIA_BUILT, {"seconds": round(time.monotonic() - began, 3)}))
        try:
            await boot.insert(task.context, url)
        except IronsightError:
            self.media.withdraw(task.uuid)
            raise
        steps.append(_step(MEDIA_INSERTED, {"network": " ".join(
            a for a in extra if not a.startswith("BOOTIF=")) or "dhcp"}))
        LOG.info("Node %s: inspection ISO inserted as a virtual CD (%s)", task.uuid,
                 " ".join(extra) or "DHCP")

    async def _known(self, node: NodeContext) -> NodeContext:
        """The node with its ports' MACs, for a hands-off start: one read here saves the
        inspection service reading them back through the API."""
        return replace(node, macs=tuple(await self._macs(node.uuid)))

    async def _macs(self, uuid: str) -> list[str]:
        """The node's port MACs, PXE-enabled first."""
        async with self.db.read() as conn:
            ports = await dbapi.ports_of_node(conn, uuid, limit=1000) or []
        ranked = sorted(ports, key=lambda p: not p.get("pxe_enabled", True))
        return [str(p["address"]).lower() for p in ranked if p.get("address")]

    async def _eject(self, task: NodeTask) -> list[dict[str, Any]]:
        """The end of a medium boot, whatever the outcome: the image withdrawn, the CD
        ejected. A BMC that will not eject is recorded, not fatal: the node is off and
        boots from its disk next time. The step for the timeline, when there was one."""
        boot = self._media_boot(task.node)
        if boot is None:
            return []
        self.media.withdraw(task.uuid)
        try:
            await boot.eject(task.context)
        except IronsightError as exc:
            LOG.warning("Node %s: the inspection ISO could not be ejected: %s", task.uuid, exc)
            await task.save(f"The inspection ISO could not be ejected: {exc}",
                            severity="WARNING", event_type="boot")
            return []
        return [_step(MEDIA_EJECTED)]

    def tears_down(self, node: dict[str, Any]) -> bool:
        """Whether an ended inspection has work left under the lock: a power off, or a CD
        to eject."""
        return self.powers_off(node) or self._media_boot(node) is not None

    @staticmethod
    async def _waiting(task: NodeTask, event: str | None, **values: Any) -> None:
        """Record the start's end and give the lock back, in one write: `inspecting` moves
        to `inspect wait`; a node already there keeps waiting."""
        if task.node["provision_state"] == states.INSPECTING:
            await task.transition("wait", target=states.MANAGEABLE, release=True,
                                  detail=event, **values)
            return
        await task.save(event and event[0].upper() + event[1:], event_type="inspection",
                        release=True, **values)

    async def _hand_over(self, iface: InspectInterface, node: NodeContext, *,
                         again: bool = False) -> None:
        """Start a hands-off inspection of a node in `inspect wait` whose lock is given up
        (`again`: a start made again; RUNNING, under way already, is as good as started)."""
        outcome = await _start(iface, await self._known(node), again=again)
        if outcome.state == InspectOutcome.FAILED:
            await self._when_relocked(node.uuid, outcome.error or "inspection failed",
                                      lambda again: again.transition(
                                          "fail", last_error=outcome.error, release=True))
        elif outcome.state == InspectOutcome.LOST:
            why = outcome.error or "the start did not reach the inspection service"
            LOG.warning("Node %s: %s; starting again in %s", node.uuid, why, iface.start_grace)

            async def remember(again: NodeTask) -> None:
                await again.save(release=True, driver_internal_info=updated(
                    again.node.get("driver_internal_info"), lost=why))

            await self._when_relocked(node.uuid, why, remember)
        else:
            LOG.info("Node %s: inspection started (%s)", node.uuid, iface.name)

    async def _apply(self, task: NodeTask, outcome: InspectOutcome, *,
                     detail: str | None = None, **values: Any) -> None:
        if outcome.state in (InspectOutcome.FAILED, InspectOutcome.LOST):
            await task.transition("fail", last_error=outcome.error, release=True,
                                  detail=detail, **values)
        elif outcome.state == InspectOutcome.WAITING:
            await task.transition("wait", target=states.MANAGEABLE, release=True,
                                  detail=detail, **values)
        else:
            if outcome.findings is not None:
                values = {**values, **await self._record_findings(task, outcome.findings)}
            await task.transition("done", inspection_finished_at=dbapi.utcnow(), release=True,
                                  detail=detail, **values)

    async def _record_findings(self, task: NodeTask, findings: Findings) -> dict[str, Any]:
        """What an out-of-band inspection found, written by the conductor under the node's
        lock: a port for each MAC no port has yet (one transaction, fenced), and the node
        values (properties, with the boot mode in its capabilities) for the final write."""
        async with self.db.begin() as conn:
            await task.fence(conn)
            for mac in findings.macs:
                if await dbapi.port_by_address(conn, mac) is not None:
                    continue
                event = dbapi.history_row(None, f"Port {mac} created by inspection",
                                          event_type="port", conductor=self.tasks.owner)
                await dbapi.create_port(conn, task.uuid, {"address": mac}, event)
        properties = {**(task.node.get("properties") or {}), **findings.properties}
        if findings.boot_mode is not None:
            properties["capabilities"] = _with_capability(
                properties.get("capabilities"), "boot_mode", findings.boot_mode)
        return {"properties": properties}

    # --- powering off, when the conductor boots the node ---------------------------------

    def powers_off(self, node: dict[str, Any]) -> bool:
        """Whether the conductor powers this node off when its inspection ends."""
        driver = self.drivers.get(node["driver"])
        iface = driver.inspect_for(node) if driver is not None else None
        return iface is not None and iface.conductor_boots and iface.power_off

    async def _power_off(self, task: NodeTask) -> str | None:
        """Power the node off under its lock; the error, or None."""
        driver = self.drivers.for_node(task.node)
        try:
            await driver.power.set_power_state(task.context, states.POWER_OFF,
                                               self.conf.conductor.power_state_change_timeout)
        except IronsightError as exc:
            return f"Failed to power off the node after its inspection: {exc}"
        return None

    async def _tear_down(self, task: NodeTask) -> str | None:
        """Power off (when the conductor does) and eject, the steps told in one go; the
        power off's error, or None."""
        error = await self._power_off(task) if self.powers_off(task.node) else None
        steps = [_step(POWERED_OFF_PHASE)] if self.powers_off(task.node) and not error else []
        steps += await self._eject(task)
        driver = self.drivers.get(task.node["driver"])
        iface = driver.inspect_for(task.node) if driver is not None else None
        if iface is not None:
            await _note(iface, task, steps)
        return error

    async def _end_powered_off(self, task: NodeTask, outcome: InspectOutcome) -> None:
        """An ended inspection (a worker's, under the lock): power off, eject, then record
        the end; a node that would not power off is failed with the reason (as Ironic's
        clean-up does)."""
        error = await self._tear_down(task)
        if not self.powers_off(task.node):
            await self._apply(task, outcome)
            return
        if error is None:
            await self._apply(task, outcome, detail=POWERED_OFF, power_state=states.POWER_OFF)
            return
        LOG.error("Node %s: %s", task.uuid, error)
        if outcome.state == InspectOutcome.FAILED:
            error = f"{outcome.error}; {error}"
        await self._apply(task, InspectOutcome.failed(error))

    async def end_early(self, task: NodeTask, event: str, last_error: str,
                        **values: Any) -> None:
        """An abort or a timeout: the state change, then, when the conductor boots the node,
        its power off in a worker still holding the lock (`task` is in a `locked` block)."""
        off = self.tears_down(task.node)
        await task.transition(event, last_error=last_error, release=not off, **values)
        if off:
            task.spawn(self._power_off_after, "power off")

    async def _power_off_after(self, task: NodeTask) -> None:
        """After an abort or a timeout moved the node on (a worker's, under the lock)."""
        error = await self._tear_down(task)
        if not self.powers_off(task.node):
            await task.save(release=True)
            return
        if error is None:
            await task.save("Power state is now power off (the inspection ended)",
                            event_type="power", release=True, power_state=states.POWER_OFF)
            return
        LOG.error("Node %s: %s", task.uuid, error)
        last = task.node.get("last_error")
        await task.save(error, severity="ERROR", event_type="power", release=True,
                        last_error=f"{last}; {error}" if last else error)

    async def _when_relocked(self, uuid: str, why: str,
                             then: Callable[[NodeTask], Awaitable[object]]) -> None:
        """What a start found after the lock was given up: take the lock again (bounded;
        discoverd may hold it briefly for the boot device or a reboot), then record it,
        unless something else moved the node on meanwhile."""
        try:
            async with self.tasks.locked(uuid, attempts=RELOCK_ATTEMPTS,
                                         interval=RELOCK_INTERVAL) as again:
                if again.node["provision_state"] == states.INSPECTWAIT:
                    await then(again)
        except IronsightError as exc:
            LOG.error("Node %s: could not record that %s (%s); the inspect wait timeout will "
                      "end it", uuid, why, exc)

    async def _start_again(self, iface: InspectInterface, uuid: str, why: str) -> bool:
        """A start that was lost: made again, up to the interface's `start_attempts`, after
        which the inspection fails with `why`. Whether the node moved."""
        async with self.tasks.try_locked(uuid) as task:
            if task is None or task.node["provision_state"] != states.INSPECTWAIT:
                return False
            internal = task.node.get("driver_internal_info") or {}
            starts, interrupted = record(internal).starts, record(internal).interrupted
            if starts >= iface.start_attempts and not interrupted:
                suffix = f" (after {starts} attempts)" if starts > 1 else ""
                await task.transition("fail", last_error=why + suffix, release=True)
                return True
            if not interrupted:
                starts += 1
            what = (f"attempt {starts} of {iface.start_attempts} made again" if interrupted
                    else f"attempt {starts} of {iface.start_attempts}")
            node = await self._restart(
                task, iface, updated(internal, starts=starts, lost=None, interrupted=False),
                f"Inspection started again ({what}): {why}")
        if node is not None:
            await self._hand_over(iface, node, again=True)
        return True

    async def _restart(self, task: NodeTask, iface: InspectInterface,
                       internal: dict[str, Any], event: str) -> NodeContext | None:
        """Record `event` and the start record, and start again: a start the conductor
        makes itself in a worker, under the lock (None; marked, so that its death has it
        made again: periodic.py), else the node's context for a hand-over once the lock is
        given up."""
        if iface.conductor_boots:
            internal = updated(internal, lost=BOOT_INTERRUPTED, interrupted=True)
        await task.save(event, event_type="inspection", release=not iface.conductor_boots,
                        provision_updated_at=dbapi.utcnow(), driver_internal_info=internal)
        if iface.conductor_boots:
            task.spawn(partial(self._start_and_boot, iface=iface, internal=internal),
                       "inspect")
            return None
        return task.context

    async def _retried(self, iface: InspectInterface, uuid: str, outcome: InspectOutcome,
                       started: dt.datetime | None) -> bool:
        """A first attempt that failed with a code the operator takes for transient
        (`[conductor] inspection_retry_codes`) is torn down and started again, once per
        inspection. Whether it was."""
        codes = self.conf.conductor.inspection_retry_codes
        if not codes or started is None:
            return False
        try:
            attempts = await iface.attempts(uuid)
        except IronsightError as exc:
            LOG.info("Node %s: not retried, its attempts cannot be read: %s", uuid, exc)
            return False
        since = started - dt.timedelta(seconds=RETRY_SKEW)
        ours = [a for a in attempts or [] if _at(a.get("started_at")) >= since]
        if len(ours) != 1 or ours[0].get("failure_code") not in codes:
            return False
        code = ours[0]["failure_code"]
        async with self.tasks.try_locked(uuid) as task:
            if task is None or task.node["provision_state"] != states.INSPECTWAIT:
                return False
            if self.tears_down(task.node):
                await self._tear_down(task)
            node = await self._restart(
                task, iface, updated(task.node.get("driver_internal_info")),
                f"Inspection started again: its first attempt failed with {code}, which "
                f"[conductor] inspection_retry_codes retries once ({outcome.error})")
        if node is not None:
            await self._hand_over(iface, node)
        return True

    async def _found_started(self, iface: InspectInterface, uuid: str) -> int:
        """A start taken for lost that did get through (the service has the report): not
        made again; the node waits for its end as any other."""
        async with self.tasks.try_locked(uuid) as task:
            if task is None or task.node["provision_state"] != states.INSPECTWAIT:
                return 0
            internal = task.node.get("driver_internal_info") or {}
            why = record(internal).lost
            internal = updated(internal, lost=None, interrupted=False)
            await task.save(f"Inspection start found in {iface.name} after all ({why})",
                            event_type="inspection", release=True,
                            driver_internal_info=internal)
            return 1

    async def where_stalled(self, task: NodeTask) -> str | None:
        """The step an inspection that timed out stalled at, from its timeline ("BOOT_NO_LOADER:
        a DHCP lease was given at 10:02:13 but the boot loader was never fetched."), for
        last_error; None when the inspect interface records no timeline or cannot be asked."""
        driver = self.drivers.get(task.node["driver"])
        iface = driver.inspect_for(task.node) if driver is not None else None
        if iface is None:
            return None
        try:
            attempts = await iface.attempts(task.uuid)
        except IronsightError as exc:
            LOG.info("Node %s: no timeline for the timeout's message: %s", task.uuid, exc)
            return None
        found = (attempts or [{}])[-1].get("diagnosis")
        if not isinstance(found, dict) or not found.get("phrase"):
            return None
        return f"{found.get('code')}: {found['phrase']}."

    # --- aborting -------------------------------------------------------------------------

    async def abort_values(self, task: NodeTask, internal: dict[str, Any] | None = None,
                           *, reason: str | None = None) -> dict[str, Any]:
        """Abort in the outside service; the node values to save with the state change: an
        abort that could not reach it is remembered, so a late report cannot touch the
        node and the poll asks again. `internal`: the driver_internal_info to start from
        (the node's own by default)."""
        driver = self.drivers.get(task.node["driver"])
        iface = driver.inspect_for(task.node) if driver is not None else None
        if iface is None:
            return {}
        reached = await iface.abort(task.context, reason=reason)
        internal = internal if internal is not None else task.node.get("driver_internal_info")
        if reached and not record(internal).abort_pending:
            return {}
        return {"driver_internal_info": updated(internal, abort_pending=not reached)}

    # --- polling ----------------------------------------------------------------------------

    def poll_tasks(self) -> list[PollTask]:
        """One periodic pass per inspect interface class that asks to be polled."""
        groups: dict[type[InspectInterface], list[str]] = defaultdict(list)
        first: dict[type[InspectInterface], InspectInterface] = {}
        for name, driver in self.drivers.items():
            iface = driver.inspect
            if iface is not None and iface.poll_period > 0:
                groups[type(iface)].extend(self.drivers.names_of(name))
                first.setdefault(type(iface), iface)
        return [(f"{iface.name}-status", iface.poll_period,
                 self._poller(iface, groups[cls])) for cls, iface in first.items()]

    def _poller(self, iface: InspectInterface, drivers: list[str]
                ) -> Callable[[], Awaitable[PollPass]]:
        async def poll() -> PollPass:
            moved, busy = await self._pass(iface, drivers)
            soon = iface.busy_poll_period
            return PollPass(moved, soon if busy and soon > 0 else iface.poll_period)
        return poll

    async def poll(self, iface: InspectInterface, drivers: list[str]) -> int:
        """Move the nodes whose inspection ended on, and start again the ones whose start was
        lost; returns how many moved. An outside service that cannot be reached is asked
        again next pass: that alone never fails a node."""
        return (await self._pass(iface, drivers))[0]

    async def _pass(self, iface: InspectInterface, drivers: list[str]) -> tuple[int, bool]:
        """poll's pass: how many moved, and whether an inspection was near its end (a
        WAITING outcome: the service works on the node's report), so that the next pass may
        come sooner and see its end at once rather than a whole period later."""
        await self._retry_pending_aborts(iface, drivers)
        async with self.db.read() as conn:
            rows = (await conn.execute(
                select(nodes.c.uuid, nodes.c.provision_updated_at,
                       nodes.c.inspection_started_at, nodes.c.driver_internal_info)
                .where(nodes.c.provision_state == states.INSPECTWAIT,
                       nodes.c.driver.in_(drivers), nodes.c.reservation.is_(None)))).all()
        if not rows:
            return 0, False
        moved, busy = 0, False
        due = dbapi.utcnow() - iface.start_grace
        waiting = []
        lost_due: dict[str, str] = {}  # lost starts due to be made again, and why
        for uuid, since, started, internal in rows:
            if not self.share.mine(uuid):
                continue  # another live replica's
            lost = record(internal).lost
            if not lost:
                waiting.append(WaitingNode(uuid, since, started))
            elif since is None or since <= due:
                # asked about too: the start may have got through after all (a conductor
                # that died after the reboot), and the report be in already
                lost_due[uuid] = str(lost)
                waiting.append(WaitingNode(uuid, since, started, start_lost=True))
        try:
            outcomes: dict[str, InspectOutcome] = await iface.poll(waiting) if waiting else {}
        except IronsightError as exc:
            LOG.warning("Cannot get introspection statuses from %s (%s); retrying in %g s",
                        iface.name, exc, iface.poll_period)
            outcomes = {}  # the lost starts are made again all the same (and counted)
        for uuid, why in lost_due.items():
            found = outcomes.get(uuid)
            if found is None or found.state == InspectOutcome.LOST:
                outcomes.pop(uuid, None)  # no report of this inspection: start it again
                moved += await self._start_again(iface, uuid, why)
        started_at = {uuid: started for uuid, _, started, _ in rows}
        for uuid, outcome in outcomes.items():
            if outcome.state == InspectOutcome.LOST:
                moved += await self._start_again(iface, uuid, outcome.error or "lost")
                continue
            if outcome.state == InspectOutcome.FAILED and await self._retried(
                    iface, uuid, outcome, started_at.get(uuid)):
                moved += 1
                continue
            if outcome.state == InspectOutcome.WAITING:
                busy = True
                if uuid in lost_due:
                    moved += await self._found_started(iface, uuid)
                continue  # the service works on it: its end comes in a later pass
            async with self.tasks.try_locked(uuid) as task:
                if task is None or task.node["provision_state"] != states.INSPECTWAIT:
                    continue  # next pass, or moved on already
                if self.tears_down(task.node):
                    task.spawn(partial(self._end_powered_off, outcome=outcome), "inspect end")
                else:
                    await self._apply(task, outcome)
                moved += 1
        return moved, busy

    async def _retry_pending_aborts(self, iface: InspectInterface, drivers: list[str]) -> None:
        """`inspect failed` nodes are few, so they are read and filtered here rather than
        indexed. The service is asked before the node is locked: it may be slow to answer."""
        async with self.db.read() as conn:
            rows = (await conn.execute(
                select(nodes.c.uuid, nodes.c.driver, nodes.c.driver_info, nodes.c.power_state,
                       nodes.c.name, nodes.c.driver_internal_info)
                .where(nodes.c.provision_state == states.INSPECTFAIL,
                       nodes.c.driver.in_(drivers)))).mappings().all()
        for row in rows:
            pending = record(row["driver_internal_info"]).abort_pending
            if not pending or not self.share.mine(row["uuid"]):
                continue
            try:
                node = self.tasks.secrets.context(row)
            except SecretUnreadable as exc:
                LOG.warning("%s", exc)
                continue
            if not await iface.abort(node):
                continue
            async with self.tasks.try_locked(row["uuid"]) as task:
                if task is not None:
                    await task.save(f"Abort reached {iface.name}", event_type="inspection",
                                    release=True, driver_internal_info=updated(
                                        task.node["driver_internal_info"],
                                        abort_pending=False))

    # --- reports ----------------------------------------------------------------------------

    async def continue_inspection(self, report: dict[str, Any],
                                  token: str | None = None) -> dict[str, Any]:
        """A ramdisk's report posted to the bare-metal API (with its callback token, if
        any), handed to the interface that processes reports."""
        for driver in self.drivers.values():
            if driver.inspect is not None and driver.inspect.accepts_reports:
                return await driver.inspect.continue_inspection(report, token)
        raise DiscoverdDisabled()


def _with_capability(raw: Any, key: str, value: str) -> str:
    """Ironic's capabilities string ("k1:v1,k2:v2") with `key` set to `value`."""
    pairs = [p for p in str(raw or "").split(",") if p and not p.startswith(f"{key}:")]
    return ",".join([*pairs, f"{key}:{value}"])


def _at(value: Any) -> dt.datetime:
    """An attempt's ISO time (naive UTC), or the oldest time for none."""
    try:
        found = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return dt.datetime.min
    return found.replace(tzinfo=None) if found.tzinfo is None else (
        found.astimezone(dt.UTC).replace(tzinfo=None))


def _step(phase: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"phase": phase, "at": dbapi.utcnow().isoformat(),
            **({"details": details} if details else {})}


async def _note(iface: InspectInterface, task: NodeTask, steps: list[dict[str, Any]]) -> None:
    """Steps for the attempt's timeline, in one request: a side channel, which never fails
    the inspection."""
    if not steps:
        return
    try:
        await iface.add_phases(task.context, steps)
    except Exception:
        LOG.exception("Node %s: steps not told to %s", task.uuid, iface.name)


async def _start(iface: InspectInterface, node: NodeContext, *,
                 again: bool = False) -> InspectOutcome:
    try:
        return await iface.start(node, again=again)
    except IronsightError as exc:
        return InspectOutcome.failed(f"Failed to inspect hardware: {exc}")
