"""`GET /v1/rejected` (an ironsight extension): ramdisk reports and hellos refused before
they changed anything (rejections.py), newest first."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid
from ironsight.discoverd.api.base import Ctx, parse_limit
from ironsight.discoverd.diagnosis import REASONS
from ironsight.discoverd.pxe.bootfiles import mac_of


@endpoint
async def list_rejected(ctx: Ctx) -> Any:
    """`limit` (1-1000, default 100), `reason` (one of REASONS), `mac`."""
    params = ctx.query({"limit", "reason", "mac"})
    limit = parse_limit(params)
    reason = params.get("reason")
    if reason is not None and reason not in REASONS:
        raise Invalid(f"Invalid value for reason: {reason!r} (one of {', '.join(REASONS)})")
    macs = []
    if "mac" in params:
        mac = mac_of(params["mac"])
        if mac is None:
            raise Invalid(f"Invalid value for mac: {params['mac']!r} (a MAC address)")
        macs.append(mac)
    found = await ctx.deps.processor.rejections.list(limit=limit, reason=reason, macs=macs)
    return 200, {"rejected": found}


routes = [Route("/v1/rejected", list_rejected, methods=["GET"])]
