"""Starting and aborting introspections (the rest of their life: lifecycle.py).

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
from dataclasses import dataclass
from typing import Any

from ironsight.common.bmc import LOOKUP_FIELDS
from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.exceptions import DatabaseUnavailable, Invalid, IronsightError
from ironsight.common.workers import WorkerPool
from ironsight.discoverd import diagnosis, states
from ironsight.discoverd.ironic import BareMetal
from ironsight.discoverd.lifecycle import Lifecycle
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.timeline import Step

LOG = logging.getLogger(__name__)

# Provision states of the bare-metal service in which a node may be introspected.
VALID_STATES = ("enroll", "manageable", "inspecting", "inspect wait", "inspect failed")
ABORT_MESSAGE = "Canceled by operator"


async def bmc_addresses(driver_info: dict[str, Any]) -> list[str]:
    """The node's BMC addresses as the ramdisk will report them: resolved, not loopback."""
    value = next((driver_info[f] for f in LOOKUP_FIELDS if driver_info.get(f)), None)
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


@dataclass(frozen=True)
class Known:
    """What a start's caller knows of the node, in the bare-metal API's shapes: the node's
    `provision_state`, `maintenance` and `driver_info` (its BMC address fields only), and
    its ports (`address` each)."""

    node: dict[str, Any]
    ports: list[dict[str, Any]]


class Introspector:
    def __init__(self, conf: Config, cache: NodeCache, ironic: BareMetal, workers: WorkerPool,
                 on_change: Callable[[], Awaitable[None]] | None = None) -> None:
        self.conf = conf
        self.cache = cache
        self.ironic = ironic
        self.workers = workers
        # the background steps, the ends in error, the power off and the PXE filter's call
        self.lifecycle = Lifecycle(conf, cache, ironic, workers, on_change)

    async def start(self, ident: str, manage_boot: bool = True,
                    known: Known | None = None) -> str:
        """`known`: the node and its ports as the caller (the bare-metal conductor, holding
        the node) read them, sent with the start; otherwise read through the API."""
        if known is not None:
            node, ports = {**known.node, "uuid": ident.lower()}, known.ports
        else:
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
        if known is None:
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
        await self.lifecycle.notify()
        if manage_boot:
            self.lifecycle.spawn(uuid, lambda: self.boot(uuid, manage_boot), "start")
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
                failed = await self.lifecycle.settle_power(uuid, "rebooting", "power on",
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
                await self.lifecycle.fail(
                    uuid, f"Failed to boot node {uuid} into the discovery ramdisk: {error}",
                    event="start_failed", code=diagnosis.POWER_FAILED)
                return
        if await self.cache.transition(uuid, "wait"):
            LOG.info("Node %s: waiting for the ramdisk's callback", uuid)

    async def abort(self, uuid: str, *, stalled: bool = False) -> None:
        """`stalled`: the caller gave up waiting (the bare-metal service's inspect wait
        timeout) or could not boot the node: the attempt's code names the step it stalled
        at, not ABORTED."""
        if not await self.cache.transition(uuid, "abort", owner=self.cache.owner):
            intro = await self.cache.get(uuid)
            raise Invalid(f"Can not abort introspection of node {uuid} in state "
                          f"\"{intro.state}\" (only starting or waiting)")
        await self.lifecycle.notify()
        self.lifecycle.spawn(uuid, lambda: self.finish_abort(uuid, stalled=stalled), "abort")

    async def finish_abort(self, uuid: str, *, stalled: bool = False) -> None:
        intro = await self.cache.get(uuid)
        off: list[Step] = []
        if intro.manage_boot:
            await self.lifecycle.power_off(uuid, why="abort", steps=off)
        code = await self.cache.timeline.stalled_code(uuid) if stalled else None
        await self.cache.transition(uuid, "abort_end", error=ABORT_MESSAGE, code=code,
                                    before=off)
        await self.lifecycle.notify()
        LOG.info("Node %s: introspection aborted", uuid)
