"""`GET /v1/nodes/{node}/inventory` (1.81): what the node's latest inspection found, as
Ironic shows it; `GET /v1/nodes/{node}/inspection/attempts` (ironsight's own, any version):
its inspection attempts with their timelines and failure codes (docs/inspection.md).
discoverd keeps both; the conductor reads them from its API."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api.base import Ctx
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import InvalidParameterValue, NotFound

MINOR = 81


@endpoint
async def get_inventory(ctx: Ctx) -> Any:
    """Below 1.81 the sub-resource does not exist (404, as in Ironic, before the node is
    looked up); with no data kept, Ironic's 404; discoverd unreachable, a 503."""
    return 200, await ctx.deps.conductor.node_inventory(ctx.param("node"))


def _attempt(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit() and 0 < len(raw) <= 9 and int(raw) > 0):
        raise InvalidParameterValue(f"Invalid value for attempt: {raw!r} (a positive integer)")
    return int(raw)


@endpoint
async def get_attempts(ctx: Ctx) -> Any:
    """`?attempt=N`: that attempt only (404 when it is not kept)."""
    params = ctx.query({"attempt"})
    found = await ctx.deps.conductor.inspection_attempts(ctx.param("node"))
    if "attempt" in params:
        wanted = _attempt(params["attempt"])
        found = [a for a in found if a.get("attempt") == wanted]
        if not found:
            raise NotFound(f"Inspection attempt {wanted} of node {ctx.param('node')} is not "
                           "kept")
    return 200, {"attempts": found}


@endpoint
async def get_log(ctx: Ctx) -> Any:
    """The ramdisk's log of an attempt (`?attempt=N`, default the latest)."""
    params = ctx.query({"attempt"})
    wanted = _attempt(params["attempt"]) if "attempt" in params else None
    return 200, await ctx.deps.conductor.inspection_log(ctx.param("node"), wanted)


routes = [Route("/v1/nodes/{node}/inventory", get_inventory, methods=["GET"]),
          Route("/v1/nodes/{node}/inspection/attempts", get_attempts, methods=["GET"]),
          Route("/v1/nodes/{node}/inspection/logs", get_log, methods=["GET"])]
