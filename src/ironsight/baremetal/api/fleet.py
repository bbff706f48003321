"""`GET /v1/fleet/stamps` (ironsight only): every node's UUID and when it last changed, or
(`since`, an RFC 3339 time) those of the nodes changed or created since then, found by index;
with how many nodes there are and this service's clock when it looked (`now`: the next
`since` is taken from it). discoverd's fleet index
(discoverd/fleet/index.py) finds with it the nodes that changed or went since its last query,
in one small answer."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import project_scope
from ironsight.baremetal.api.base import Ctx
from ironsight.common.api.endpoint import endpoint
from ironsight.common.clock import utcnow
from ironsight.common.exceptions import Invalid


def _since(raw: str) -> dt.datetime:
    try:
        when = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise Invalid(f"Invalid value for since: {raw!r} (an RFC 3339 time)") from None
    return when.astimezone(dt.UTC).replace(tzinfo=None) if when.tzinfo else when


@endpoint
async def stamps(ctx: Ctx) -> Any:
    params = ctx.query({"since"})
    if project_scope.acting_project(ctx) is not None:
        raise project_scope.denied("baremetal:fleet:stamps")
    since = _since(params["since"]) if "since" in params else None
    now = utcnow()  # before the reads: whatever is written after it is in the next answer
    found = await ctx.deps.records.node_stamps(since)
    return 200, {"nodes": [list(pair) for pair in found.nodes], "count": found.count,
                 "now": now.isoformat(sep=" ")}


routes = [Route("/v1/fleet/stamps", stamps, methods=["GET"])]
