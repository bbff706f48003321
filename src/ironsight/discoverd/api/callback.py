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
HELLO_SIZE = 4096


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
    return 200, await ctx.deps.processor.process(data, token, client.host if client else None)


@endpoint
async def hello(ctx: Ctx) -> Any:
    """The ramdisk's agent is up: a phase of the node's timeline (diagnosis.py), with the
    boot's callback token; small, bounded, rate-limited as the report."""
    client = ctx.request.client
    ctx.deps.ramdisk_limiter.check(client.host if client else None)
    conf = ctx.deps.conf.introspection
    data = parse_json(await read_body(ctx.request, HELLO_SIZE, "Hello"),
                      conf.max_json_depth, "Hello")
    if not isinstance(data, dict):
        raise Invalid("The hello must be a JSON object")
    token = ctx.request.headers.get(callback_token.HEADER)
    uuid = await ctx.deps.processor.hello(data, token, client.host if client else None)
    return 202, {"uuid": uuid}


BEAT_SIZE = 20 * 1024


@endpoint
async def beat(ctx: Ctx) -> Any:
    """A progress beat of the ramdisk's agent (its stage and new log lines), with the
    boot's callback token; bounded and rate-limited as the hello."""
    client = ctx.request.client
    ctx.deps.ramdisk_limiter.check(client.host if client else None)
    data = parse_json(await read_body(ctx.request, BEAT_SIZE, "Beat"),
                      ctx.deps.conf.introspection.max_json_depth, "Beat")
    if not isinstance(data, dict):
        raise Invalid("The beat must be a JSON object")
    token = ctx.request.headers.get(callback_token.HEADER)
    uuid = await ctx.deps.processor.beat(data, token, client.host if client else None)
    return 202, {"uuid": uuid}


routes = [Route("/v1/continue", continue_, methods=["POST"]),
          Route("/v1/beat", beat, methods=["POST"]),
          Route("/v1/hello", hello, methods=["POST"])]
