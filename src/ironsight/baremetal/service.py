"""The bare-metal service assembled: database, drivers, conductor, periodic tasks, API."""

from __future__ import annotations

import logging
from typing import Any

from starlette.applications import Starlette

from ironsight.baremetal.api.app import create_app
from ironsight.baremetal.conductor.manager import Conductor
from ironsight.baremetal.conductor.periodic import PeriodicTasks
from ironsight.baremetal.db.models import INTERFACE_FIELDS, VERSION_TABLE
from ironsight.baremetal.drivers.loader import load_drivers
from ironsight.common.config import Config
from ironsight.common.db import Database, run_migrations
from ironsight.common.exceptions import InvalidParameterValue

LOG = logging.getLogger(__name__)

MIGRATIONS = "ironsight.baremetal.db:migrations"


def upgrade_database(conf: Config) -> None:
    run_migrations(conf.database_url, MIGRATIONS, VERSION_TABLE)


class BaremetalService:
    def __init__(self, conf: Config) -> None:
        self.conf = conf
        self.db = Database(conf.database_url, pool_size=conf.database.pool_size,
                           busy_timeout_ms=conf.database.sqlite_busy_timeout)
        drivers, refused = load_drivers(conf)
        self.conductor = Conductor(conf, self.db, drivers, refused)
        self.periodic = PeriodicTasks(self.conductor)
        self.app: Starlette = create_app(self)
        self._secrets = {name: d.secret_properties() for name, d in drivers.items()}

    async def start(self) -> None:
        await self.periodic.register()
        self.periodic.start()
        LOG.info("Bare-metal conductor %s started with hardware types: %s",
                 self.conductor.name, ", ".join(sorted(self.conductor.drivers)) or "none")
        for name, why in self.conductor.refused.items():
            LOG.error("Hardware type %s is not available: %s", name, why)

    async def stop(self) -> None:
        await self.periodic.stop()
        await self.conductor.stop()
        await self.periodic.unregister()
        await self.db.close()

    # --- helpers used by the API -------------------------------------------------------------

    def secret_keys(self, driver: str | None) -> frozenset[str]:
        return self._secrets.get(driver or "", frozenset())

    def conductor_host(self, reservation: str | None) -> str | None:
        return self.conf.DEFAULT.host

    def check_driver(self, name: str, values: dict[str, Any]) -> None:
        """Refuse a node whose driver (or an interface override) this service cannot run;
        fill the interface fields left empty with the hardware type's own."""
        driver = self.conductor.drivers.get(name)
        if driver is None:
            why = self.conductor.refused.get(name)
            reason = f": {why}" if why else ""
            raise InvalidParameterValue(
                f"No valid host was found. Reason: No conductor service registered which "
                f"supports driver {name}{reason}.")
        names = driver.interface_names()
        for key, value in values.items():
            if key.endswith("_interface") and value is not None:
                iface = key.removesuffix("_interface")
                expected = names.get(iface)
                if value != expected:
                    raise InvalidParameterValue(
                        f"{key}: interface {value!r} is not enabled for hardware type {name} "
                        f"(enabled: {expected})")
        for iface, value in names.items():
            key = f"{iface}_interface"
            if key in INTERFACE_FIELDS and not values.get(key):
                values[key] = value
