"""`GET /v1/rejected` (an ironsight extension): ramdisk reports and hellos refused before
they changed anything (rejections.py), newest first."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid
from ironsight.discoverd.api.base import Ctx
from ironsight.discoverd.diagnosis import REASONS
from ironsight.discoverd.pxe.bootfiles import mac_of

MAX_LIMIT = 1000


@endpoint
async def list_rejected(ctx: Ctx) -> Any:
    """`limit` (1-1000, default 100), `reason` (one of REASONS), `mac`."""
    params = ctx.query({"limit", "reason", "mac"})
    raw = params.get("limit", "100")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 4 and 0 < int(raw) <= MAX_LIMIT):
        raise Invalid(f"Invalid value for limit: {raw!r} (1 to {MAX_LIMIT})")
    reason = params.get("reason")
    if reason is not None and reason not in REASONS:
        raise Invalid(f"Invalid value for reason: {reason!r} (one of {', '.join(REASONS)})")
    macs = []
    if "mac" in params:
        mac = mac_of(params["mac"])
        if mac is None:
            raise Invalid(f"Invalid value for mac: {params['mac']!r} (a MAC address)")
        macs.append(mac)
    found = await ctx.deps.processor.rejections.list(limit=int(raw), reason=reason, macs=macs)
    return 200, {"rejected": found}


routes = [Route("/v1/rejected", list_rejected, methods=["GET"])]
