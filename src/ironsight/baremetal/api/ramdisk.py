"""`POST /v1/continue_inspection`: newer ramdisks (ironic-python-agent without a callback URL)
post their report to the bare-metal API; the conductor hands it to discoverd, which owns
processing and checks the callback token. Rate-limited per source address, as discoverd's
`/v1/continue`."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api.base import Ctx
from ironsight.common.api.body import read_json
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid

# discoverd's callback token header (ironsight.discoverd.callback_token.HEADER: the bare-metal
# service does not import discoverd).
TOKEN_HEADER = "X-Ironsight-Callback-Token"


@endpoint
async def continue_inspection(ctx: Ctx) -> Any:
    client = ctx.request.client
    ctx.deps.ramdisk_limiter.check(client.host if client else None)
    ctx.query({"node_uuid"})  # accepted for compatibility; discoverd looks the node up itself
    conf = ctx.deps.conf
    data = await read_json(ctx.request, conf.introspection.max_callback_size,
                           conf.api.max_json_depth, "Ramdisk data")
    if not isinstance(data, dict):
        raise Invalid("The ramdisk data must be a JSON object")
    # The callback token is discoverd's to check: forwarded unchanged, never logged here.
    token = ctx.request.headers.get(TOKEN_HEADER)
    result = await ctx.deps.conductor.continue_inspection(data, token)
    return 202, {"uuid": result.get("uuid")}


routes = [Route("/v1/continue_inspection", continue_inspection, methods=["POST"])]
