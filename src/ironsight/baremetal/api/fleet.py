"""`GET /v1/fleet/stamps` (ironsight only): every node's UUID and when it last changed, in
one small answer, so that discoverd's fleet index (discoverd/fleet/index.py) finds the nodes
that changed or went since its last query without listing every node's fields."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import project_scope
from ironsight.baremetal.api.base import Ctx
from ironsight.common.api.endpoint import endpoint


@endpoint
async def stamps(ctx: Ctx) -> Any:
    ctx.query(set())
    if project_scope.acting_project(ctx) is not None:
        raise project_scope.denied("baremetal:fleet:stamps")
    return 200, {"nodes": [list(pair) for pair in await ctx.deps.records.node_stamps()]}


routes = [Route("/v1/fleet/stamps", stamps, methods=["GET"])]
