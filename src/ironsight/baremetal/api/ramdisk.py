"""`POST /v1/continue_inspection`: newer ramdisks (ironic-python-agent without a callback URL)
post their report to the bare-metal API; it is handed to discoverd, which owns processing."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api.base import Ctx, endpoint
from ironsight.baremetal.drivers.discoverd_inspect import DiscoverdDisabled, DiscoverdInspect
from ironsight.common.exceptions import Invalid, IronsightError
from ironsight.common.http import read_json


def _discoverd(ctx: Ctx) -> DiscoverdInspect:
    for driver in ctx.svc.conductor.drivers.values():
        if isinstance(driver.inspect, DiscoverdInspect) and driver.inspect.enabled:
            return driver.inspect
    raise DiscoverdDisabled()


@endpoint
async def continue_inspection(ctx: Ctx) -> Any:
    ctx.query({"node_uuid"})  # accepted for compatibility; discoverd looks the node up itself
    inspect = _discoverd(ctx)
    conf = ctx.svc.conf
    data = await read_json(ctx.request,
                           conf.api.max_body_size + conf.introspection.max_logs_size)
    if not isinstance(data, dict):
        raise Invalid("The ramdisk data must be a JSON object")
    try:
        result = await inspect.client().continue_inspection(data)
    except inspect.client_lib.ClientError as exc:  # type: ignore[union-attr]
        raise IronsightError(exc.message, code=exc.status_code or 503) from None
    return 202, {"uuid": result.get("uuid") if isinstance(result, dict) else None}


routes = [Route("/v1/continue_inspection", continue_inspection, methods=["POST"])]
