"""Nothing stays unfinished: introspections past their timeout are ended (and their nodes
powered off), and what a dead replica (or a previous process of this host) left half-done is
taken over, each active step run again from the stored state: at start, and at every
heartbeat, from any live replica."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.exceptions import NotFound
from ironsight.common.workers import WorkerPool
from ironsight.discoverd import states
from ironsight.discoverd.deadlines import Deadlines
from ironsight.discoverd.introspect import Introspector
from ironsight.discoverd.members import Members
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.process import Processor

LOG = logging.getLogger(__name__)


class Recovery:
    def __init__(self, conf: Config, cache: NodeCache, introspector: Introspector,
                 processor: Processor, workers: WorkerPool, members: Members) -> None:
        self.conf = conf
        self.cache = cache
        self.introspector = introspector
        self.lifecycle = introspector.lifecycle
        self.processor = processor
        self.workers = workers
        self.members = members
        self.deadlines = Deadlines(conf.deadlines, cache.db)

    async def run_heartbeat(self) -> None:
        """Heartbeat, and take over the steps of members that died, until cancelled."""
        while True:
            await asyncio.sleep(self.conf.introspection.heartbeat_interval)
            try:
                await self.members.heartbeat()
                await self.resume()
            except Exception:
                LOG.exception("Heartbeat or take-over failed; retrying later")

    async def run_clean_up(self) -> None:
        """The periodic clean-up, until cancelled."""
        while True:
            await asyncio.sleep(self.conf.introspection.clean_up_period)
            try:
                await self.clean_up()
            except Exception:
                LOG.exception("Clean-up of timed-out introspections failed; retrying later")

    async def run_deadlines(self) -> None:
        """The deadline checks (deadlines.py), until cancelled."""
        while True:
            await asyncio.sleep(self.conf.deadlines.check_interval)
            try:
                await self.end_overdue()
            except Exception:
                LOG.exception("Deadline check failed; retrying later")

    async def end_overdue(self) -> list[str]:
        """End the attempts past a step's deadline with the step's code, and power those
        nodes off; returns their UUIDs."""
        ended = []
        for late in await self.deadlines.overdue(utcnow()):
            if not await self.cache.transition(late.uuid, "timeout", error=late.error,
                                               code=late.code):
                continue  # moved on meanwhile (a report came in, another replica ended it)
            LOG.error("Node %s: %s: %s", late.uuid, late.code, late.error)
            ended.append(late.uuid)
            if late.manage_boot:
                self.workers.spawn(partial(self.lifecycle.power_off, late.uuid,
                                           why="deadline missed"), name=f"late:{late.uuid}")
        if ended:
            await self.lifecycle.notify()
        return ended

    async def clean_up(self) -> list[str]:
        """End introspections older than the timeout, and power those nodes off."""
        timeout = self.conf.introspection.timeout
        if timeout <= 0:
            return []
        ended = await self.cache.timed_out(utcnow() - dt.timedelta(seconds=timeout))
        if ended:
            await self.lifecycle.notify()
        for uuid, manage_boot in ended:
            LOG.error("Node %s: Introspection timeout", uuid)
            if manage_boot:
                self.workers.spawn(partial(self.lifecycle.power_off, uuid,
                                           why="introspection timeout"), name=f"timeout:{uuid}")
        return [uuid for uuid, _ in ended]

    async def resume(self) -> int:
        """Take over the active introspections of dead members (a crash, a restart); returns
        how many."""
        live = await self.members.live()
        resumed = 0
        for intro in await self.cache.owned_by_dead_processes(live):
            if not await self.cache.claim(intro):
                continue
            resumed += 1
            LOG.warning("Node %s: resuming introspection step '%s' after a restart",
                        intro.uuid, intro.state)
            step: Callable[[], Awaitable[None]]
            if intro.state == states.STARTING:
                step = partial(self.introspector.boot, intro.uuid, intro.manage_boot)
            elif intro.state == states.ABORTING:
                step = partial(self.introspector.finish_abort, intro.uuid)
            elif intro.state == states.REAPPLYING:
                step = partial(self.processor.run_reapply, intro.uuid)
            else:  # processing: the node update may be half-applied; apply it again
                step = partial(self._resume_processing, intro.uuid)
            self.lifecycle.spawn(intro.uuid, step, f"resume of {intro.state}")
        await self.members.forget_dead(live)
        return resumed

    async def _resume_processing(self, uuid: str) -> None:
        try:
            await self.cache.get_data(uuid, processed=False)
        except NotFound:
            await self.processor.end_with_error(uuid, "The service restarted while processing "
                                                "and no raw data was stored to resume")
            return
        await self.processor.run_reapply_from_processing(uuid)
