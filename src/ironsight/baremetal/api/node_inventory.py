"""`GET /v1/nodes/{node}/inventory` (1.81): what the node's latest inspection found, as
Ironic shows it. discoverd keeps the data; the conductor reads them from its API."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api.base import Ctx
from ironsight.common.api.endpoint import endpoint

MINOR = 81


@endpoint
async def get_inventory(ctx: Ctx) -> Any:
    """Below 1.81 the sub-resource does not exist (404, as in Ironic, before the node is
    looked up); with no data kept, Ironic's 404; discoverd unreachable, a 503."""
    return 200, await ctx.deps.conductor.node_inventory(ctx.param("node"))


routes = [Route("/v1/nodes/{node}/inventory", get_inventory, methods=["GET"])]
