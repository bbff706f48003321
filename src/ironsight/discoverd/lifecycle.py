"""An introspection's life outside its start: the background steps it runs in (a crash or a
lost database ends it in error or runs the step again), its end in error, the power off at
its end, and the call that tells the PXE filter its set of MACs changed. Shared by the start
(introspect.py), the processing (process.py) and the recovery (recovery.py), so that each of
them ends an introspection the same way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.db import through_outages
from ironsight.common.exceptions import IronsightError
from ironsight.common.workers import WorkerPool
from ironsight.discoverd import diagnosis
from ironsight.discoverd.ironic import BareMetal
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.timeline import Step

LOG = logging.getLogger(__name__)

# A power action that ended otherwise than asked (a BMC error, a conductor that died doing it)
# is asked for this many times in all.
POWER_ATTEMPTS = 2
# A step that meets an unavailable database (a restart, a fail-over) runs again from its
# start after a pause, doubling from 0.5 s to 10 s, ~35 s in all, before it fails the
# introspection: every step can run again (a replica taking one over does the same).
STEP_DB_ATTEMPTS = 8


class Lifecycle:
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


    async def power_off(self, uuid: str, *, why: str,
                        steps: list[Step] | None = None) -> str | None:
        """Power the node off and wait until the bare-metal service reports it; return an
        error message, or None. The powered_off step is recorded, or added to `steps` for
        the caller to write with the attempt's end."""
        try:
            failed = await self.settle_power(uuid, "power off", "power off")
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

    async def settle_power(self, uuid: str, target: str, settles_in: str,
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
