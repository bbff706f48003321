"""`POST /v1/continue`: the ramdisk's report. Unauthenticated by design (the seed), so it is
bounded (body and `logs` separately), validated, and only ever touches a node that is under
introspection and unambiguously matched."""

from __future__ import annotations

import json
from typing import Any

from starlette.routing import Route

from ironsight.common.exceptions import Invalid
from ironsight.common.http import PayloadTooLarge
from ironsight.discoverd.api.base import Ctx, endpoint


async def _read(ctx: Ctx) -> Any:
    conf = ctx.svc.conf.introspection
    limit = conf.max_body_size + conf.max_logs_size
    declared = ctx.request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"Ramdisk data is {declared} bytes; the limit is {limit}")
    chunks, size = [], 0
    async for chunk in ctx.request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"Ramdisk data is larger than the limit of {limit} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Invalid(f"Ramdisk data is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Invalid("The ramdisk data must be a JSON object")
    logs = data.get("logs")
    logs_size = len(logs) if isinstance(logs, str) else len(json.dumps(logs)) if logs else 0
    if logs_size > conf.max_logs_size:
        raise PayloadTooLarge(f"Field 'logs' is {logs_size} bytes; the limit is "
                              f"{conf.max_logs_size}")
    if size - logs_size > conf.max_body_size:
        raise PayloadTooLarge(f"Ramdisk data without 'logs' is {size - logs_size} bytes; the "
                              f"limit is {conf.max_body_size}")
    return data


@endpoint
async def continue_(ctx: Ctx) -> Any:
    data = await _read(ctx)
    return 200, await ctx.svc.processor.process(data)


routes = [Route("/v1/continue", continue_, methods=["POST"])]
