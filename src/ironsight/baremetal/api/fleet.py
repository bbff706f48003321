"""`GET /v1/fleet/stamps` (ironsight only): every node's UUID and when it last changed, in
one small answer, so that discoverd's fleet index (discoverd/fleet/index.py) finds the nodes
that changed or went since its last query without listing every node's fields."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import project_scope
from ironsight.baremetal.api.base import Ctx
from ironsight.common.api.endpoint import endpoint


def _stamp(when: Any) -> str:
    return when.isoformat() if isinstance(when, dt.datetime) else str(when)


@endpoint
async def stamps(ctx: Ctx) -> Any:
    ctx.query(set())
    if project_scope.acting_project(ctx) is not None:
        raise project_scope.denied("baremetal:fleet:stamps")
    found = await ctx.deps.records.node_stamps()
    return 200, {"nodes": [[uuid, _stamp(when)] for uuid, when in found]}


routes = [Route("/v1/fleet/stamps", stamps, methods=["GET"])]
