"""Starting and aborting introspections.

`start` answers after the checks an operator needs to see at once (node exists, state allows
it, power interface validates, lookup attributes exist and are not taken); booting the node
into the ramdisk runs in the background, and any failure there ends the introspection with an
error. Every bare-metal call retries on 409 (node locked): see ironic.py.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.db import through_outages
from ironsight.common.exceptions import DatabaseUnavailable, Invalid, IronsightError
from ironsight.common.workers import WorkerPool
from ironsight.discoverd import diagnosis, states
from ironsight.discoverd.ironic import BareMetal
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.timeline import Step

LOG = logging.getLogger(__name__)

# Provision states of the bare-metal service in which a node may be introspected.
VALID_STATES = ("enroll", "manageable", "inspecting", "inspect wait", "inspect failed")
BMC_FIELDS = ("ipmi_address", "redfish_address", "ilo_address", "drac_address", "drac_host")
ABORT_MESSAGE = "Canceled by operator"
# A power action that ended otherwise than asked (a BMC error, a conductor that died doing it)
# is asked for this many times in all.
POWER_ATTEMPTS = 2
# A step that meets an unavailable database (a restart, a fail-over) runs again from its
# start after a pause, doubling from 0.5 s to 10 s, ~35 s in all, before it fails the
# introspection: every step can run again (a replica taking one over does the same).
STEP_DB_ATTEMPTS = 8


async def bmc_addresses(driver_info: dict[str, Any]) -> list[str]:
    """The node's BMC addresses as the ramdisk will report them: resolved, not loopback."""
    value = next((driver_info[f] for f in BMC_FIELDS if driver_info.get(f)), None)
    if not value or not isinstance(value, str):
        return []
    host = urllib.parse.urlparse(value).hostname if "://" in value else value.strip("[]")
    if not host:
        return []
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None,
                                                             proto=socket.IPPROTO_TCP)
    except OSError:
        LOG.warning("Cannot resolve BMC address %s; lookup will use MACs only", host)
        return []
    found = []
    for info in infos:
        address = str(info[4][0])
        if not ipaddress.ip_address(address).is_loopback and address not in found:
            found.append(address)
    return found


class Introspector:
    def __init__(self, conf: Config, cache: NodeCache, ironic: BareMetal, workers: WorkerPool,
                 on_change: Callable[[], Awaitable[None]] | None = None) -> None:
        self.conf = conf
        self.cache = cache
        self.ironic = ironic
        self.workers = workers
        # Called after lookup attributes change: the PXE filter listens.
        self.on_change = on_change

    def spawn(self, uuid: str, fn: Callable[[], Awaitable[None]], what: str) -> None:
        """Run a background step of an introspection; if it crashes, the introspection ends
        in error with the reason instead of staying in an active state until its timeout."""

        async def crashed(exc: Exception) -> None:
            await self.fail(uuid, f"Unexpected error during {what}: {exc}")

        def waiting(delay: float) -> None:
            LOG.warning("Node %s: %s: the database is unavailable; running the step again "
                        "in %.1f s", uuid, what, delay)

        async def step() -> None:
            await through_outages(fn, attempts=STEP_DB_ATTEMPTS, waiting=waiting,
                                  sleep=asyncio.sleep)

        self.workers.spawn(step, name=f"{what}:{uuid}", on_crash=crashed)

    async def start(self, ident: str, manage_boot: bool = True) -> str:
        node = await self.ironic.get_node(
            ident, fields="uuid,provision_state,maintenance,driver_info")
        uuid = str(node["uuid"])
        if not node.get("maintenance") and node.get("provision_state") not in VALID_STATES:
            raise Invalid(f"Refusing to introspect node {uuid} with provision state "
                          f"\"{node.get('provision_state')}\" (allowed: "
                          f"{', '.join(VALID_STATES)})")
        if manage_boot:
            ok, reason = await self.ironic.validate_power(uuid)
            if not ok:
                raise Invalid(f"Failed validation of power interface for node {uuid}, "
                              f"reason: {reason}")
        ports = await self.ironic.list_ports(uuid)
        macs = [str(p["address"]).lower() for p in ports]
        bmcs = await bmc_addresses(node.get("driver_info") or {})
        if not macs and not bmcs:
            raise Invalid(f"No lookup attributes were found for node {uuid}: create its ports "
                          "(MAC addresses) or give it a BMC address that is not loopback")
        if manage_boot:
            self.workers.check_free()  # the boot runs in a worker
        await self.cache.start(uuid, manage_boot=manage_boot, macs=macs, bmc_addresses=bmcs)
        LOG.info("Node %s: introspection started (MACs %s, BMC %s)", uuid, macs, bmcs)
        await self.notify()
        if manage_boot:
            self.spawn(uuid, lambda: self.boot(uuid, manage_boot), "start")
        else:
            LOG.info("Node %s: waiting for the ramdisk's callback (its boot is the caller's)",
                     uuid)
        return uuid

    async def boot(self, uuid: str, manage_boot: bool) -> None:
        """Reboot the node into the discovery ramdisk, then wait for its callback. A failure
        ends only a start still under way (not one aborted, or already answered by a fast
        ramdisk)."""
        if manage_boot:
            try:
                await self.ironic.set_boot_device_pxe(uuid)
                steps: list[Step] = [(diagnosis.POWER_ON_REQUESTED, {"boot_device": "pxe"},
                                      utcnow())]
                failed = await self._settle_power(uuid, "rebooting", "power on",
                                                  while_in=states.STARTING)
                error = failed[1] if failed else None
                if not failed:
                    steps.append((diagnosis.POWERED_ON, None, utcnow()))
                # both in one write: a boot's cost is its commits
                await self.cache.timeline.record_many(uuid, "discoverd", steps)
            except DatabaseUnavailable:
                raise  # not the node's failure: the step runs again (spawn)
            except IronsightError as exc:
                error = str(exc)
            if error:
                await self.fail(uuid, f"Failed to boot node {uuid} into the discovery ramdisk: "
                                      f"{error}", event="start_failed",
                                code=diagnosis.POWER_FAILED)
                return
        if await self.cache.transition(uuid, "wait"):
            LOG.info("Node %s: waiting for the ramdisk's callback", uuid)

    async def fail(self, uuid: str, message: str, event: str = "error",
                   code: str | None = None) -> bool:
        """End the introspection with `message` (through `event`, which says from which
        states) and failure `code` (diagnosis.py); False if it was not in one of them (it
        had ended, say)."""
        if not await self.cache.transition(uuid, event, error=message, code=code):
            return False
        LOG.error("Node %s: %s", uuid, message)
        await self.notify()
        return True

    async def abort(self, uuid: str, *, stalled: bool = False) -> None:
        """`stalled`: the caller gave up waiting (the bare-metal service's inspect wait
        timeout) or could not boot the node: the attempt's code names the step it stalled
        at, not ABORTED."""
        if not await self.cache.transition(uuid, "abort", owner=self.cache.owner):
            intro = await self.cache.get(uuid)
            raise Invalid(f"Can not abort introspection of node {uuid} in state "
                          f"\"{intro.state}\" (only starting or waiting)")
        await self.notify()
        self.spawn(uuid, lambda: self.finish_abort(uuid, stalled=stalled), "abort")

    async def finish_abort(self, uuid: str, *, stalled: bool = False) -> None:
        intro = await self.cache.get(uuid)
        off: list[Step] = []
        if intro.manage_boot:
            await self.power_off(uuid, why="abort", steps=off)
        code = await self.cache.timeline.stalled_code(uuid) if stalled else None
        await self.cache.transition(uuid, "abort_end", error=ABORT_MESSAGE, code=code,
                                    before=off)
        await self.notify()
        LOG.info("Node %s: introspection aborted", uuid)

    async def power_off(self, uuid: str, *, why: str,
                        steps: list[Step] | None = None) -> str | None:
        """Power the node off and wait until the bare-metal service reports it; return an
        error message, or None. The powered_off step is recorded, or added to `steps` for
        the caller to write with the attempt's end."""
        try:
            failed = await self._settle_power(uuid, "power off", "power off")
        except IronsightError as exc:
            LOG.warning("Node %s: power off after %s failed: %s", uuid, why, exc)
            return f"Failed to power off node {uuid} ({why}): {exc}"
        if failed is None:
            step: Step = (diagnosis.POWERED_OFF, {"why": why}, utcnow())
            if steps is not None:
                steps.append(step)
            else:
                await self.cache.timeline.record_many(uuid, "discoverd", [step])
            return None
        kind, error = failed
        if kind == "timeout":
            return f"Node {uuid} did not power off within {error} ({why})"
        return f"Failed to power off node {uuid} ({why}): {error}"

    async def _settle_power(self, uuid: str, target: str, settles_in: str,
                            while_in: str | None = None) -> tuple[str, str] | None:
        """Ask for `target` and wait until the bare-metal service has carried it out (the
        node `settles_in` that power state). An action that ended otherwise (a BMC error, a
        conductor that died doing it) is asked for once more, while the introspection is
        still `while_in` (when given). None, or ("timeout", the limit) or ("failed", why)."""
        limit = self.conf.introspection.power_off_timeout
        loop = asyncio.get_running_loop()
        error = "not carried out"
        for attempt in range(POWER_ATTEMPTS):
            if attempt and while_in and (await self.cache.get(uuid)).state != while_in:
                return None  # moved on meanwhile: nothing to ask for any more
            await self.ironic.set_power(uuid, target)
            delay = 0.1
            deadline = loop.time() + limit
            while True:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                node = await self.ironic.get_power(uuid)
                if not node.get("target_power_state"):
                    break
                if loop.time() > deadline:
                    return "timeout", f"{limit:g} s"
            if node.get("power_state") == settles_in:
                return None
            error = node.get("last_error") or f"it is {node.get('power_state')}"
            LOG.warning("Node %s: %s did not happen (%s)", uuid, target, error)
        return "failed", error

    async def notify(self) -> None:
        """Tell the listener (the PXE filter) that the set of introspected MACs changed."""
        if self.on_change is not None:
            await self.on_change()
