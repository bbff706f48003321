"""`POST /v1/continue`: the ramdisk's report. Open to the provisioning network by design, so
it is rate-limited per source address, bounded (body and `logs` separately), validated, only
ever touches a node that is under introspection and unambiguously matched, and is checked
against that introspection's callback token (header `X-Ironsight-Callback-Token`, see
callback_token.py) before anything changes."""

from __future__ import annotations

import json
from typing import Any

from starlette.routing import Route

from ironsight.common.api.body import PayloadTooLarge, parse_json, read_body
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid
from ironsight.discoverd import callback_token
from ironsight.discoverd.api.base import Ctx

WHAT = "Ramdisk data"


async def _read(ctx: Ctx) -> Any:
    conf = ctx.deps.conf.introspection
    raw = await read_body(ctx.request, conf.max_callback_size, WHAT)
    data = parse_json(raw, conf.max_json_depth, WHAT)
    if not isinstance(data, dict):
        raise Invalid("The ramdisk data must be a JSON object")
    logs = data.get("logs")
    logs_size = len(logs) if isinstance(logs, str) else len(json.dumps(logs)) if logs else 0
    if logs_size > conf.max_logs_size:
        raise PayloadTooLarge(f"Field 'logs' is {logs_size} bytes; the limit is "
                              f"{conf.max_logs_size}")
    return data


@endpoint
async def continue_(ctx: Ctx) -> Any:
    client = ctx.request.client
    ctx.deps.ramdisk_limiter.check(client.host if client else None)
    data = await _read(ctx)
    token = ctx.request.headers.get(callback_token.HEADER)
    return 200, await ctx.deps.processor.process(data, token)


routes = [Route("/v1/continue", continue_, methods=["POST"])]
