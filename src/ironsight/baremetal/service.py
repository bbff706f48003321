"""The bare-metal service assembled: database, drivers, conductor, periodic tasks, API. The
one place where its parts meet; nothing imports this module but the command that runs it."""

from __future__ import annotations

import dataclasses
import logging

from starlette.applications import Starlette
from starlette.types import ASGIApp

from ironsight.baremetal.api.app import create_app, create_ramdisk_app
from ironsight.baremetal.api.base import BaremetalDeps
from ironsight.baremetal.conductor.manager import Conductor
from ironsight.baremetal.conductor.periodic import PeriodicTasks
from ironsight.baremetal.console.app import WithConsole, create_console
from ironsight.baremetal.db.console_sessions import RevokedSessions
from ironsight.baremetal.db.models import VERSION_TABLE
from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.baremetal.drivers.loader import load_drivers
from ironsight.baremetal.metrics import baremetal_metrics
from ironsight.baremetal.secrets import DriverSecrets
from ironsight.common.config import Config
from ironsight.common.db import Database, run_migrations
from ironsight.common.ratelimit import ramdisk_limiter

LOG = logging.getLogger(__name__)

MIGRATIONS = "ironsight.baremetal.db:migrations"


def upgrade_database(conf: Config) -> None:
    run_migrations(conf.database_url, MIGRATIONS, VERSION_TABLE)


class BaremetalService:
    def __init__(self, conf: Config, *, local_discoverd_url: str | None = None) -> None:
        """`local_discoverd_url`: discoverd's API in this same process, for the console
        where `[discoverd] service_url` names none (cli/server.py)."""
        self.conf = conf
        self.db = Database(conf.database_url, pool_size=conf.database.pool_size,
                           busy_timeout_ms=conf.database.sqlite_busy_timeout)
        drivers = load_drivers(conf)
        secrets = DriverSecrets.from_config(conf, drivers.every_secret_key())
        self.conductor = Conductor(conf, self.db, drivers, secrets)
        self.periodic = PeriodicTasks(self.conductor)
        self.metrics = baremetal_metrics(self.conductor, self.db)
        self.discoverd = DiscoverdProxy(conf)
        deps = BaremetalDeps(conf, self.conductor, self.conductor.records,
                             ramdisk_limiter=ramdisk_limiter(conf), discoverd=self.discoverd)
        self.api_app: Starlette = create_app(deps, self.metrics)
        self.app: ASGIApp = self.api_app
        self.console_app: ASGIApp | None = None  # the console's own listener's
        self.console_discoverd = self.discoverd
        if local_discoverd_url and not conf.discoverd.service_url:
            self.console_discoverd = DiscoverdProxy(dataclasses.replace(
                conf, discoverd=dataclasses.replace(conf.discoverd,
                                                    service_url=local_discoverd_url)))
        if conf.console.enabled:
            console = create_console(conf, self.api_app, self.console_discoverd,
                                     RevokedSessions(self.db))
            if conf.console.host:
                self.console_app = WithConsole(None, console)
            else:
                self.app = WithConsole(self.api_app, console)
        self.ramdisk_app = create_ramdisk_app(deps) if conf.api.ramdisk_host else None

    async def start(self) -> None:
        await self.periodic.register()
        self.periodic.start()
        LOG.info("Bare-metal conductor %s started with hardware types: %s",
                 self.conductor.name, ", ".join(sorted(self.conductor.drivers)) or "none")
        for name, why in self.conductor.drivers.refused.items():
            LOG.error("Hardware type %s is not available: %s", name, why)

    async def stop(self) -> None:
        await self.periodic.stop()
        await self.conductor.stop()
        await self.discoverd.close()
        await self.console_discoverd.close()
        await self.periodic.unregister()
        await self.db.close()
