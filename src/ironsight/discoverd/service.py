"""discoverd assembled: its database, the bare-metal API client, node cache, hooks, workers,
periodic tasks and API. The one place where its parts meet; nothing imports this module but
the command that runs it."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from starlette.applications import Starlette

from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.db import Database, run_migrations
from ironsight.common.workers import WorkerPool
from ironsight.discoverd import states
from ironsight.discoverd.api.app import create_app
from ironsight.discoverd.api.base import DiscoverdDeps
from ironsight.discoverd.db.models import VERSION_TABLE
from ironsight.discoverd.introspect import Introspector
from ironsight.discoverd.ironic import Ironic
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.plugins.base import load_hooks
from ironsight.discoverd.process import Processor
from ironsight.discoverd.pxe.service import PxeService

LOG = logging.getLogger(__name__)
MIGRATIONS = "ironsight.discoverd.db:migrations"


def upgrade_database(conf: Config) -> None:
    run_migrations(conf.discoverd_database_url, MIGRATIONS, VERSION_TABLE)


class DiscoverdService:
    def __init__(self, conf: Config) -> None:
        self.conf = conf
        self.db = Database(conf.discoverd_database_url, pool_size=conf.database.pool_size,
                           busy_timeout_ms=conf.database.sqlite_busy_timeout)
        self.cache = NodeCache(self.db)
        self.ironic = Ironic(conf)
        self.workers = WorkerPool(conf.introspection.workers_pool_size)
        self.pxe = (PxeService.for_discoverd(conf, self.cache, self.ironic)
                    if conf.pxe.enabled else None)
        self.introspector = Introspector(conf, self.cache, self.ironic, self.workers,
                                         on_change=self.pxe.on_change if self.pxe else None)
        self.processor = Processor(conf, self.cache, self.ironic, load_hooks(conf),
                                   self.introspector, self.workers)
        self.app: Starlette = create_app(
            DiscoverdDeps(conf, self.cache, self.introspector, self.processor, self.ironic),
            self.pxe.routes() if self.pxe is not None else ())
        self._periodic: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.pxe is not None:
            await self.pxe.start()
        await self.resume()
        self._periodic = asyncio.get_running_loop().create_task(self._clean_up_loop(),
                                                                name="discoverd-clean-up")
        if self.conf.introspection.timeout <= 0:
            LOG.warning("Introspection timeout is disabled ([introspection] timeout = 0)")

    async def stop(self) -> None:
        if self._periodic is not None:
            self._periodic.cancel()
            await asyncio.gather(self._periodic, return_exceptions=True)
        if self.pxe is not None:
            await self.pxe.stop()
        await self.workers.drain(timeout=self.conf.DEFAULT.graceful_shutdown_timeout)
        await self.ironic.close()
        await self.db.close()

    async def _clean_up_loop(self) -> None:
        while True:
            await asyncio.sleep(self.conf.introspection.clean_up_period)
            try:
                await self.clean_up()
            except Exception:
                LOG.exception("Clean-up of timed-out introspections failed; retrying later")

    async def clean_up(self) -> list[str]:
        """End introspections older than the timeout, and power those nodes off."""
        timeout = self.conf.introspection.timeout
        if timeout <= 0:
            return []
        ended = await self.cache.timed_out(utcnow() - dt.timedelta(seconds=timeout))
        if ended:
            await self.introspector.notify()
        for uuid, manage_boot in ended:
            LOG.error("Node %s: Introspection timeout", uuid)
            if manage_boot:
                self.workers.spawn(partial(self._power_off, uuid), name=f"timeout:{uuid}")
        return [uuid for uuid, _ in ended]

    async def _power_off(self, uuid: str) -> None:
        await self.introspector.power_off(uuid, why="introspection timeout")

    async def resume(self) -> int:
        """Take over what a previous process of this host left half-done (a restart), so that
        no introspection is lost: each active step is run again from the stored state."""
        resumed = 0
        for intro in await self.cache.owned_by_dead_processes():
            if not await self.cache.claim(intro.uuid, intro.state):
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
            self.introspector.spawn(intro.uuid, step, f"resume of {intro.state}")
        return resumed

    async def _resume_processing(self, uuid: str) -> None:
        try:
            await self.cache.get_data(uuid, processed=False)
        except Exception:
            await self.cache.transition(uuid, "error", error="The service restarted while "
                                        "processing and no raw data was stored to resume")
            return
        await self.processor.run_reapply_from_processing(uuid)

