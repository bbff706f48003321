"""`DiscoverdInspect`: the seed's inspect interface, which hands inspection to discoverd.

- At load, when `[discoverd] enabled`: no `service_url`, a client library that cannot be
  imported, or one older than 1.0.0 → the driver refuses to load, saying which and why.
  When disabled, nothing is checked and `validate`/`inspect_hardware` raise DiscoverdDisabled.
- `inspect_hardware` moves the node to `inspect wait` and **releases the node lock** before it
  calls `introspect(uuid)`, because discoverd will act on the node through the bare-metal API
  (boot device, reboot) and must not find it locked. A failure to start → `inspect failed`.
- One periodic task per conductor polls discoverd for all nodes in `inspect wait` with **one
  batched request** (per 100 nodes), every `status_check_period` (0.5 s by default, so that a
  finished introspection reaches the node within ~0.5 s; upstream polled every 60 s, one
  request per node). A discoverd that cannot be reached is retried next period; it never
  fails a node.
- Abort and the conductor's `inspect wait` timeout abort the introspection in discoverd too,
  so the node is powered off and its PXE access closed (upstream Ironic forgot this).
"""

from __future__ import annotations

import datetime as dt
import importlib
import logging
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ironsight.baremetal import states
from ironsight.baremetal.db.models import nodes
from ironsight.baremetal.drivers.base import InspectInterface, NodeContext
from ironsight.common.config import Config
from ironsight.common.db import utcnow
from ironsight.common.exceptions import (
    DriverLoadError,
    Invalid,
    IronsightError,
)

if TYPE_CHECKING:
    from ironsight.baremetal.conductor.manager import Conductor
    from ironsight.baremetal.conductor.task import NodeTask

LOG = logging.getLogger(__name__)

CLIENT_MODULE = "ironsight.discoverd.client"
MIN_CLIENT_VERSION = (1, 0, 0)
# A node discoverd has never heard of is failed only after this long in `inspect wait`
# (covers the instant between our state change and discoverd recording the start).
UNKNOWN_GRACE = dt.timedelta(seconds=30)
BATCH = 100
PENDING_ABORT = "discoverd_abort_pending"


class DiscoverdDisabled(Invalid):
    """Inspection through discoverd was asked for but `[discoverd] enabled` is false."""

    def __init__(self) -> None:
        super().__init__(
            "In-band inspection through discoverd is disabled: set [discoverd] enabled = true "
            "and [discoverd] service_url in the bare-metal service's configuration "
            "(see docs/inspection.md)")


def load_client(conf: Config, module_name: str = CLIENT_MODULE) -> ModuleType:
    """The discoverd client module, checked as the seed asks; DriverLoadError says why not."""
    if not conf.discoverd.service_url:
        raise DriverLoadError("[discoverd] enabled is true but [discoverd] service_url is not "
                              "set (e.g. http://127.0.0.1:5050/v1)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DriverLoadError(f"the discoverd client library {module_name} cannot be "
                              f"imported: {exc}") from None
    version = getattr(module, "__version_info__", None)
    if not isinstance(version, tuple) or version < MIN_CLIENT_VERSION:
        wanted = ".".join(map(str, MIN_CLIENT_VERSION))
        raise DriverLoadError(f"the discoverd client library {module_name} is version "
                              f"{version or 'unknown'}; {wanted} or newer is required")
    return module


class DiscoverdInspect(InspectInterface):
    name = "discoverd"
    client_module = CLIENT_MODULE

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.enabled = conf.discoverd.enabled
        self.client_lib = load_client(conf, self.client_module) if self.enabled else None
        self._client: Any = None

    def client(self) -> Any:
        """One pooled async client per conductor, created in the running loop."""
        if self._client is None:
            assert self.client_lib is not None
            self._client = self.client_lib.AsyncClient(self.conf.discoverd.service_url)
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def validate(self, node: NodeContext) -> None:
        if not self.enabled:
            raise DiscoverdDisabled()

    async def inspect_hardware(self, task: NodeTask) -> str:
        self.validate(task.context)
        await task.transition("wait", target=states.MANAGEABLE, release=True)
        try:
            await self.client().introspect(task.uuid)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            await fail_node(task, f"Failed to start inspection: {exc.message}")
        else:
            LOG.info("Node %s: inspection started in discoverd", task.uuid)
        return states.INSPECTWAIT

    async def abort(self, node: NodeContext) -> dict[str, Any]:
        """Abort in discoverd too; a finished or unknown introspection is not an error.
        Returns driver_internal_info changes: when discoverd cannot be reached, the abort is
        remembered and retried by the status poll, so a late report cannot touch the node."""
        if not self.enabled:
            return {}
        if await self._abort_in_discoverd(node.uuid):
            return {PENDING_ABORT: None}
        return {PENDING_ABORT: True}

    async def _abort_in_discoverd(self, uuid: str) -> bool:
        """True when discoverd has nothing left running for the node."""
        try:
            await self.client().abort(uuid)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            if exc.status_code in (400, 404):
                LOG.info("Node %s: nothing to abort in discoverd: %s", uuid, exc.message)
                return True
            LOG.warning("Node %s: abort in discoverd failed (%s); retrying every %g s",
                        uuid, exc.message, self.conf.discoverd.status_check_period)
            return False
        return True

    def periodic_tasks(self) -> list[tuple[str, float, Callable[[Conductor], Awaitable[Any]]]]:
        if not self.enabled:
            return []
        return [("discoverd-status", self.conf.discoverd.status_check_period,
                 self.check_status)]

    async def check_status(self, conductor: Conductor) -> int:
        """Move nodes whose introspection ended on; returns how many moved."""
        drivers = [name for name, drv in conductor.drivers.items()
                   if isinstance(drv.inspect, DiscoverdInspect)]
        await self._retry_pending_aborts(conductor, drivers)
        async with conductor.db.read() as conn:
            rows = (await conn.execute(
                select(nodes.c.uuid, nodes.c.provision_updated_at)
                .where(nodes.c.provision_state == states.INSPECTWAIT,
                       nodes.c.driver.in_(drivers), nodes.c.reservation.is_(None)))).all()
        if not rows:
            return 0
        waiting = {uuid: since for uuid, since in rows}
        statuses: dict[str, Any] = {}
        uuids = list(waiting)
        try:
            for start in range(0, len(uuids), BATCH):
                statuses.update(await self.client().get_statuses(uuids[start:start + BATCH]))
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            LOG.warning("Cannot get introspection statuses from discoverd (%s); retrying in "
                        "%g s", exc.message, self.conf.discoverd.status_check_period)
            return 0
        moved = 0
        now = utcnow()
        for uuid, since in waiting.items():
            status = statuses.get(uuid)
            if status is None:
                if since is not None and now - since > UNKNOWN_GRACE:
                    moved += await self._finish(conductor, uuid, "discoverd has no record of "
                                                "an introspection of this node")
            elif status.get("finished"):
                moved += await self._finish(conductor, uuid, status.get("error"))
        return moved

    async def _retry_pending_aborts(self, conductor: Conductor, drivers: list[str]) -> None:
        """Aborts that could not reach discoverd: `inspect failed` nodes are few, so they are
        read and filtered here rather than indexed."""
        async with conductor.db.read() as conn:
            rows = (await conn.execute(
                select(nodes.c.uuid, nodes.c.driver_internal_info)
                .where(nodes.c.provision_state == states.INSPECTFAIL,
                       nodes.c.driver.in_(drivers)))).all()
        for uuid, info in rows:
            if not (info or {}).get(PENDING_ABORT) or not await self._abort_in_discoverd(uuid):
                continue
            async with conductor.try_acquire(uuid) as task:
                if task is not None:
                    internal = dict(task.node["driver_internal_info"] or {})
                    internal.pop(PENDING_ABORT, None)
                    await task.save("Abort reached discoverd", event_type="inspection",
                                    release=True, driver_internal_info=internal)

    async def _finish(self, conductor: Conductor, uuid: str, error: str | None) -> int:
        async with conductor.try_acquire(uuid) as task:
            if task is None or task.node["provision_state"] != states.INSPECTWAIT:
                return 0  # next period, or moved on already
            if error:
                await task.transition("fail", last_error=f"discoverd inspection failed: {error}",
                                      release=True)
            else:
                await task.transition("done", release=True, inspection_finished_at=utcnow())
            return 1


async def fail_node(task: NodeTask, message: str) -> None:
    """Fail an inspection whose lock was already given up: take it again (bounded), then
    move the node to `inspect failed`."""
    from ironsight.baremetal.conductor.task import acquire

    LOG.error("Node %s: %s", task.uuid, message)
    try:
        again = await acquire(task.db, task.owner, task.uuid, attempts=50, interval=0.1)
    except IronsightError as exc:
        LOG.error("Node %s: could not record the failure (%s); the inspect wait timeout will "
                  "end it", task.uuid, exc)
        return
    try:
        if again.node["provision_state"] == states.INSPECTWAIT:
            await again.transition("fail", last_error=message, release=True)
    finally:
        await again.release()
