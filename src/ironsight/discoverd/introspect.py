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

from ironsight.common.config import Config
from ironsight.common.exceptions import Invalid, IronsightError
from ironsight.common.workers import WorkerPool
from ironsight.discoverd.ironic import BareMetal
from ironsight.discoverd.node_cache import NodeCache

LOG = logging.getLogger(__name__)

# Provision states of the bare-metal service in which a node may be introspected.
VALID_STATES = ("enroll", "manageable", "inspecting", "inspect wait", "inspect failed")
BMC_FIELDS = ("ipmi_address", "redfish_address", "ilo_address", "drac_address", "drac_host")
ABORT_MESSAGE = "Canceled by operator"


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

        self.workers.spawn(fn, name=f"{what}:{uuid}", on_crash=crashed)

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
        self.workers.check_free()
        await self.cache.start(uuid, manage_boot=manage_boot, macs=macs, bmc_addresses=bmcs)
        LOG.info("Node %s: introspection started (MACs %s, BMC %s)", uuid, macs, bmcs)
        await self.notify()
        self.spawn(uuid, lambda: self.boot(uuid, manage_boot), "start")
        return uuid

    async def boot(self, uuid: str, manage_boot: bool) -> None:
        """Reboot the node into the discovery ramdisk, then wait for its callback."""
        try:
            if manage_boot:
                await self.ironic.set_boot_device_pxe(uuid)
                await self.ironic.set_power(uuid, "rebooting")
        except IronsightError as exc:
            await self.fail(uuid, f"Failed to boot node {uuid} into the discovery ramdisk: "
                                  f"{exc}")
            return
        if await self.cache.transition(uuid, "wait"):
            LOG.info("Node %s: waiting for the ramdisk's callback", uuid)

    async def fail(self, uuid: str, message: str, event: str = "error") -> bool:
        """End the introspection with `message` (through `event`, which says from which
        states); False if it was not in one of them (it had ended, say)."""
        if not await self.cache.transition(uuid, event, error=message):
            return False
        LOG.error("Node %s: %s", uuid, message)
        await self.notify()
        return True

    async def abort(self, uuid: str) -> None:
        if not await self.cache.transition(uuid, "abort", owner=self.cache.owner):
            intro = await self.cache.get(uuid)
            raise Invalid(f"Can not abort introspection of node {uuid} in state "
                          f"\"{intro.state}\" (only starting or waiting)")
        await self.notify()
        self.spawn(uuid, lambda: self.finish_abort(uuid), "abort")

    async def finish_abort(self, uuid: str) -> None:
        intro = await self.cache.get(uuid)
        if intro.manage_boot:
            await self.power_off(uuid, why="abort")
        await self.cache.transition(uuid, "abort_end", error=ABORT_MESSAGE)
        await self.notify()
        LOG.info("Node %s: introspection aborted", uuid)

    async def power_off(self, uuid: str, *, why: str) -> str | None:
        """Power the node off and wait until the bare-metal service reports it; return an
        error message, or None."""
        try:
            await self.ironic.set_power(uuid, "power off")
            delay = 0.1
            limit = self.conf.introspection.power_off_timeout
            deadline = asyncio.get_running_loop().time() + limit
            while True:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                node = await self.ironic.get_power(uuid)
                if node.get("power_state") == "power off" and not node.get("target_power_state"):
                    return None
                if not node.get("target_power_state") and node.get("last_error"):
                    return f"Failed to power off node {uuid} ({why}): {node['last_error']}"
                if asyncio.get_running_loop().time() > deadline:
                    return f"Node {uuid} did not power off within {limit:g} s ({why})"
        except IronsightError as exc:
            LOG.warning("Node %s: power off after %s failed: %s", uuid, why, exc)
            return f"Failed to power off node {uuid} ({why}): {exc}"

    async def notify(self) -> None:
        """Tell the listener (the PXE filter) that the set of introspected MACs changed."""
        if self.on_change is not None:
            await self.on_change()
