"""`DiscoverdInspect`: the design's inspect interface, which hands inspection to discoverd.

It only talks to discoverd, through its client library: start, abort, a batched status poll,
and the hand-over of ramdisk reports posted to the bare-metal API. It returns outcomes; the
conductor (conductor/inspection.py) moves the node, holds and releases its lock, and records
the history.

- At load, when `[discoverd] enabled`: no `service_url`, a client library that cannot be
  imported, or one older than 1.0.0 → the driver refuses to load, saying which and why.
  When disabled, nothing is checked and `validate` raises DiscoverdDisabled.
- It is hands-off. With `[discoverd] conductor_boots` (the default), `start` calls
  `introspect(uuid, manage_boot=False)` while the conductor holds the node in `inspect wait`;
  the conductor then sets the boot device, reboots the node and, at the end, powers it off
  itself: discoverd only reads the node and its ports, and fills them in. The start carries
  what the conductor read of the node (its state, BMC address and ports' MACs), so that
  discoverd need not read them back through the API. Without it (the
  Kilo design), the conductor releases the lock before `start`, because discoverd acts on the
  node through the bare-metal API (boot device, reboot, power off) and must not find it
  locked. A start that cannot reach discoverd,
  or that discoverd has no record of after `start_grace_period`, is lost: the conductor makes
  it again, `start_attempts` times in all.
- One poll per conductor asks discoverd about every node in `inspect wait` with one batched
  request per 100 nodes, every `status_check_period` (0.5 s by default; upstream polled every
  60 s, one request per node), and every `busy_status_check_period` (0.1 s) while discoverd
  is processing the report of one of them, so that its end is seen at once. A discoverd that
  cannot be reached is asked again next time.
- Abort and the conductor's `inspect wait` timeout abort the introspection in discoverd too,
  so the node is powered off and its PXE access closed (upstream Ironic forgot this).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib
import logging
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from ironsight.baremetal.drivers.base import (
    InspectInterface,
    InspectOutcome,
    NodeContext,
    WaitingNode,
)
from ironsight.common.auth.credentials import Credentials
from ironsight.common.auth.service_token import service_token
from ironsight.common.bmc import LOOKUP_FIELDS
from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.exceptions import (
    DiscoverdDisabled,
    DriverLoadError,
    IronsightError,
    NotFound,
)

LOG = logging.getLogger(__name__)
STEPS_DELAY = 0.2  # seconds the conductor gathers timeline steps before sending them

CLIENT_MODULE = "ironsight.discoverd.client"
MIN_CLIENT_VERSION = (1, 0, 0)
BATCH = 100
# discoverd has the ramdisk's report and works on it: the node did boot.
REPORT_IN = ("processing", "reapplying")
# No discoverd answered: unreachable (None), or a load balancer with none alive behind it.
UNAVAILABLE = (None, 502, 503, 504)

__all__ = ["DiscoverdDisabled", "DiscoverdInspect", "load_client"]


def load_client(conf: Config, module_name: str = CLIENT_MODULE) -> ModuleType:
    """The discoverd client module, checked as the design asks; DriverLoadError says why not."""
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


def _naive_utc(value: Any) -> dt.datetime | None:
    """An ISO time from discoverd as the bare-metal service stores times (naive UTC)."""
    try:
        parsed = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


def _known(node: NodeContext) -> dict[str, Any] | None:
    """What the conductor read of the node, sent with the start (discoverd then reads
    nothing back through the API): its state, its BMC address fields (no secret) and its
    ports' MACs. None when the conductor did not read the ports."""
    if node.macs is None:
        return None
    info = {k: v for k in LOOKUP_FIELDS if isinstance(v := node.driver_info.get(k), str)}
    return {"node": {"provision_state": node.provision_state or "",
                     "maintenance": node.maintenance, "driver_info": info},
            "ports": [{"address": mac} for mac in node.macs]}


class DiscoverdInspect(InspectInterface):
    name = "discoverd"
    client_module = CLIENT_MODULE
    hands_off = True

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.enabled = conf.discoverd.enabled
        self.client_lib = load_client(conf, self.client_module) if self.enabled else None
        self.poll_period = conf.discoverd.status_check_period if self.enabled else 0.0
        self.busy_poll_period = min(conf.discoverd.busy_status_check_period, self.poll_period)
        self.accepts_reports = self.keeps_inventory = self.enabled
        # discoverd may not know a node yet, or still report its previous introspection, for
        # this long after the node entered `inspect wait` (our state change comes first)
        self.grace = self.start_grace = dt.timedelta(seconds=conf.discoverd.start_grace_period)
        self.start_attempts = conf.discoverd.start_attempts
        self.unreachable_for = conf.discoverd.start_unreachable_timeout
        self.conductor_boots = self.enabled and conf.discoverd.conductor_boots
        self.power_off = conf.discoverd.power_off
        # conductor steps for the timelines, by node, sent together (add_phases)
        self._steps: dict[str, list[dict[str, Any]]] = {}
        self._flushing: asyncio.Task[None] | None = None
        self._client: Any = None

    def client(self) -> Any:
        """One pooled async client per interface, created in the running loop."""
        if self._client is None:
            assert self.client_lib is not None
            section = self.conf.discoverd
            self._client = self.client_lib.AsyncClient(
                section.service_url, credentials=Credentials(
                    section.username, section.password, cafile=section.cafile,
                    tokens=service_token(self.conf)))
        return self._client

    async def close(self) -> None:
        if self._flushing is not None:
            self._flushing.cancel()
        await self.flush_steps()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def validate(self, node: NodeContext) -> None:
        if not self.enabled:
            raise DiscoverdDisabled()

    async def start(self, node: NodeContext, *, again: bool = False) -> InspectOutcome:
        """A discoverd that cannot be reached is tried again, backing off, for
        `start_unreachable_timeout` (a restart takes seconds) before the start is LOST. A
        start made `again` that discoverd refuses because the introspection is under way
        (409: the ramdisk's report is being processed) is RUNNING."""
        self.validate(node)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.unreachable_for
        delay = 0.25
        while True:
            try:
                # None: discoverd's default (it boots the node itself)
                await self.client().introspect(
                    node.uuid, manage_boot=False if self.conductor_boots else None,
                    known=_known(node))
            except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
                why = f"Failed to start inspection: {exc.message}"
                if again and exc.status_code == 409:
                    return InspectOutcome.running(exc.message)
                if exc.status_code not in UNAVAILABLE:
                    return InspectOutcome.failed(why)
                if loop.time() + delay > give_up:
                    return InspectOutcome.lost(why)  # no discoverd answered: again later
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            return InspectOutcome.waiting()

    async def abort(self, node: NodeContext, *, reason: str | None = None) -> bool:
        """A finished or unknown introspection is not an error: nothing is left running."""
        if not self.enabled:
            return True
        try:
            await self.flush_steps(node.uuid)  # first: the abort's code reads them
            await self.client().abort(node.uuid, reason=reason)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            if exc.status_code in (400, 404):
                LOG.info("Node %s: nothing to abort in discoverd: %s", node.uuid, exc.message)
                return True
            LOG.warning("Node %s: abort in discoverd failed (%s); retrying every %g s",
                        node.uuid, exc.message, self.poll_period)
            return False
        return True

    async def poll(self, waiting: Sequence[WaitingNode]) -> dict[str, InspectOutcome]:
        statuses: dict[str, Any] = {}
        uuids = [node.uuid for node in waiting]
        try:
            for first in range(0, len(uuids), BATCH):
                statuses.update(await self.client().get_statuses(uuids[first:first + BATCH]))
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            raise IronsightError(exc.message, code=503) from None
        now = utcnow()
        found: dict[str, InspectOutcome] = {}
        for node in waiting:
            status = statuses.get(node.uuid)
            young = node.waiting_since is not None and now - node.waiting_since <= self.grace
            earlier = self._earlier(status, node) if status is not None else False
            if status is None or (node.start_lost and earlier):
                if not young and node.waiting_since is not None:
                    found[node.uuid] = InspectOutcome.lost(
                        "discoverd has no record of an introspection of this node")
            elif status.get("finished") and not (young and earlier):
                error = status.get("error")
                found[node.uuid] = (InspectOutcome.failed(f"discoverd inspection failed: {error}")
                                    if error else InspectOutcome.done())
            elif status.get("state") in REPORT_IN and not earlier:
                found[node.uuid] = InspectOutcome.waiting()
        return found

    @staticmethod
    def _earlier(status: dict[str, Any], node: WaitingNode) -> bool:
        """Whether the status is of an introspection that started before this inspection
        (a re-inspection whose start discoverd has not recorded yet)."""
        started = _naive_utc(status.get("started_at"))
        return (started is not None and node.inspection_started_at is not None
                and started < node.inspection_started_at)

    async def continue_inspection(self, report: dict[str, Any],
                                  token: str | None = None) -> dict[str, Any]:
        if not self.enabled:
            raise DiscoverdDisabled()
        try:
            result = await self.client().continue_inspection(report, token=token)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            raise IronsightError(exc.message, code=exc.status_code or 503) from None
        return result if isinstance(result, dict) else {}

    async def ramdisk_params(self, node: NodeContext) -> str:
        """discoverd issues the callback token (and says where to report) for a ramdisk it
        does not boot itself; a refusal names why (no ramdisk URL configured, or the
        introspection is no longer waiting)."""
        if not self.enabled:
            raise DiscoverdDisabled()
        try:
            answer = await self.client().boot_params(node.uuid)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            raise IronsightError(f"discoverd gave no ramdisk parameters: {exc.message}",
                                 code=exc.status_code or 503) from None
        params = answer.get("kernel_params")
        if not isinstance(params, str) or not params:
            raise IronsightError("discoverd gave no ramdisk parameters", code=503)
        return params

    async def inventory(self, uuid: str) -> dict[str, Any] | None:
        """discoverd's processed data of the node's latest introspection, split as Ironic
        stores it: the ramdisk's `inventory`, and what processing found beside it (root disk,
        interfaces, MACs, local_gb...) as `plugin_data`, without the ramdisk's logs. None when
        discoverd is disabled or has no data; a discoverd that cannot answer is a 503."""
        if not self.enabled:
            return None
        try:
            data = await self.client().get_data(uuid)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            if exc.status_code == 404:
                return None
            raise IronsightError(f"The node's inventory could not be read from discoverd: "
                                 f"{exc.message}", code=503) from None
        if not isinstance(data, dict):
            return None
        plugin_data = {k: v for k, v in data.items() if k not in ("inventory", "logs")}
        inventory = data.get("inventory")
        return {"inventory": inventory if isinstance(inventory, dict) else {},
                "plugin_data": plugin_data}

    async def add_phases(self, node: NodeContext, steps: Sequence[dict[str, Any]]) -> None:
        """Gathered, and sent with every node's within STEPS_DELAY in one request: a fleet's
        inspection pays no request per step. Lost with a conductor that dies meanwhile (a
        missing line in a timeline)."""
        if not self.enabled:
            return
        self._steps.setdefault(node.uuid, []).extend(steps)
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        while self._steps:  # steps gathered while a flush was being sent go next
            await asyncio.sleep(STEPS_DELAY)
            await self.flush_steps()

    async def flush_steps(self, uuid: str | None = None) -> None:
        """Send the gathered steps (of node `uuid` only, when given) now."""
        if uuid is None:
            found, self._steps = self._steps, {}
        else:
            found = {uuid: self._steps.pop(uuid)} if uuid in self._steps else {}
        if not found:
            return
        try:
            await self.client().add_phases(found)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            LOG.info("Steps of %d nodes not on discoverd's timelines: %s", len(found),
                     exc.message)

    async def ramdisk_log(self, uuid: str, attempt: int | None) -> dict[str, Any] | None:
        if not self.enabled:
            return None
        try:
            return await self.client().get_logs(uuid, attempt)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            if exc.status_code == 404:
                raise NotFound(exc.message) from None
            raise IronsightError(f"The ramdisk's log could not be read from discoverd: "
                                 f"{exc.message}", code=503) from None

    async def attempts(self, uuid: str) -> list[dict[str, Any]] | None:
        """discoverd's timelines of the node (empty: never introspected there)."""
        if not self.enabled:
            return None
        try:
            return await self.client().get_attempts(uuid)
        except self.client_lib.ClientError as exc:  # type: ignore[union-attr]
            if exc.status_code == 404:
                return []
            raise IronsightError(f"The node's inspection timeline could not be read from "
                                 f"discoverd: {exc.message}", code=503) from None
