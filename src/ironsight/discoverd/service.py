"""discoverd assembled: its database, the bare-metal API client, node cache, hooks, workers,
periodic tasks and API. The one place where its parts meet; nothing imports this module but
the command that runs it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from starlette.applications import Starlette

from ironsight.common.asgi_call import AsgiCall
from ironsight.common.config import Config
from ironsight.common.db import Database, run_migrations
from ironsight.common.exceptions import IronsightError
from ironsight.common.ratelimit import ramdisk_limiter
from ironsight.common.workers import WorkerPool
from ironsight.discoverd.api.app import create_app, create_ramdisk_app
from ironsight.discoverd.api.base import DiscoverdDeps
from ironsight.discoverd.builtin_rules import BuiltInRules
from ironsight.discoverd.db.models import VERSION_TABLE
from ironsight.discoverd.fleet.index import FleetIndex
from ironsight.discoverd.introspect import Introspector
from ironsight.discoverd.ironic import Ironic
from ironsight.discoverd.members import Members
from ironsight.discoverd.metrics import discoverd_metrics
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.plugins.base import load_hooks
from ironsight.discoverd.process import Processor
from ironsight.discoverd.pxe.service import PxeService
from ironsight.discoverd.recovery import Recovery
from ironsight.discoverd.rejections import Rejections
from ironsight.discoverd.rule_runner import RuleRunner
from ironsight.discoverd.rule_store import RuleSet, RuleStore
from ironsight.discoverd.webhooks import Webhooks

LOG = logging.getLogger(__name__)
WARM_FIRST_DELAY = 1.0  # seconds: the fleet index's next build after a failed one
WARM_MAX_DELAY = 60.0
MIGRATIONS = "ironsight.discoverd.db:migrations"


def upgrade_database(conf: Config) -> None:
    run_migrations(conf.discoverd_database_url, MIGRATIONS, VERSION_TABLE)


class DiscoverdService:
    def __init__(self, conf: Config, baremetal: AsgiCall | None = None) -> None:
        """`baremetal`: the bare-metal application of this process, called in-process
        (cli/server.py decides); None: the bare-metal API over HTTP at `ironic_url`."""
        self.conf = conf
        self.db = Database(conf.discoverd_database_url, pool_size=conf.database.pool_size,
                           busy_timeout_ms=conf.database.sqlite_busy_timeout)
        self.cache = NodeCache(self.db, keep=conf.processing.data_history,
                               timeline_keep=conf.introspection.timeline_history)
        self.members = Members(self.db, self.cache.owner, conf.introspection.heartbeat_timeout)
        self.ironic = Ironic(conf, baremetal)
        self.workers = WorkerPool(conf.introspection.workers_pool_size)
        self.ramdisk_limiter = ramdisk_limiter(conf)
        self.pxe = (PxeService.for_discoverd(conf, self.cache, self.ironic,
                                             on_ownership=self.members.set_pxe,
                                             limiter=self.ramdisk_limiter)
                    if conf.pxe.enabled else None)
        self.introspector = Introspector(conf, self.cache, self.ironic, self.workers,
                                         on_change=self.pxe.on_change if self.pxe else None)
        self.built_in_rules = BuiltInRules(conf.inspection_rules.built_in_rules)
        self.built_in_rules.load_at_start()  # a bad file stops the service here
        self.rule_store = RuleStore(self.db)
        self.rules = RuleRunner(conf, RuleSet(self.rule_store, self.built_in_rules))
        self.processor = Processor(conf, self.cache, self.ironic, load_hooks(conf),
                                   self.introspector, self.workers, rules=self.rules,
                                   rejections=Rejections(
                                       self.db, conf.introspection.rejected_history))
        # the webhook outbox: discovery's events here, the component changes' in process.py
        self.webhooks = Webhooks(self.db, conf.webhooks, self.cache.owner)
        self.processor.discovery.webhooks = self.webhooks
        self.recovery = Recovery(conf, self.cache, self.introspector, self.processor,
                                 self.workers, self.members)
        self.fleet = FleetIndex(self.db, self.ironic)
        self.metrics = discoverd_metrics(self.cache, self.members, self.pxe,
                                         self.processor.rejections, self.recovery.deadlines,
                                         self.processor.discovery, self.webhooks)
        deps = DiscoverdDeps(conf, self.cache, self.introspector, self.processor, self.ironic,
                             self.members, ramdisk_limiter=self.ramdisk_limiter,
                             rules=self.rules, deadlines=self.recovery.deadlines,
                             fleet=self.fleet, webhooks=self.webhooks)
        boot_routes = self.pxe.routes() if self.pxe is not None else []
        self.app: Starlette = create_app(deps, boot_routes, self.metrics)
        self.ramdisk_app = (create_ramdisk_app(deps, boot_routes)
                            if conf.introspection.ramdisk_host else None)
        self._periodic: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        await self.members.register()
        if self.pxe is not None:
            await self.pxe.start()
        await self.recovery.resume()
        loop = asyncio.get_running_loop()
        self._periodic = [loop.create_task(self.recovery.run_clean_up(),
                                           name="discoverd-clean-up"),
                          loop.create_task(self.recovery.run_heartbeat(),
                                           name="discoverd-heartbeat")]
        if self.conf.deadlines.enabled:
            self._periodic.append(loop.create_task(self.recovery.run_deadlines(),
                                                   name="discoverd-deadlines"))
        if self.webhooks.enabled:
            self._periodic.append(loop.create_task(self.webhooks.run(),
                                                   name="discoverd-webhooks"))
        if self.conf.fleet.warm_at_start:
            self._periodic.append(loop.create_task(self._warm_fleet(),
                                                   name="discoverd-fleet-warm"))
        if self.conf.introspection.timeout <= 0:
            LOG.warning("Introspection timeout is disabled ([introspection] timeout = 0)")

    async def _warm_fleet(self) -> None:
        """The fleet index built once, in the background. The bare-metal API may answer
        only after this service starts (its own process, a rolling restart): asked again,
        backing off, for as long as the service runs; a query made meanwhile builds it."""
        delay = WARM_FIRST_DELAY
        while True:
            try:
                await self.fleet.refresh()
            except (IronsightError, OSError) as exc:
                LOG.info("Fleet index not built yet (%s); trying again in %g s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, WARM_MAX_DELAY)
                continue
            except Exception:
                LOG.exception("Fleet index not built at start; the first query builds it")
                return
            LOG.info("Fleet index built at start: %d nodes", len(self.fleet))
            return

    async def stop(self) -> None:
        for task in self._periodic:
            task.cancel()
        await asyncio.gather(*self._periodic, return_exceptions=True)
        await self.webhooks.close()
        if self.pxe is not None:
            await self.pxe.stop()
        await self.workers.drain(timeout=self.conf.DEFAULT.graceful_shutdown_timeout)
        with contextlib.suppress(TimeoutError):  # phases and refusals being recorded
            await asyncio.wait_for(asyncio.gather(self.cache.timeline.drain(),
                                                  self.processor.rejections.drain()), 5.0)
        await self.members.unregister()
        await self.ironic.close()
        await self.rules.close()
        await self.db.close()
