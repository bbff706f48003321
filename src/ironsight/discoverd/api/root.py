"""`/` and `/v1`: what clients negotiate with."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.versions import fmt
from ironsight.discoverd.api.base import VERSIONS, Ctx


@endpoint
async def root(ctx: Ctx) -> Any:
    return 200, {"versions": [{"id": fmt(VERSIONS.maximum), "status": "CURRENT",
                               "links": [{"rel": "self", "href": f"{ctx.base_url}/v1"}]}]}


@endpoint
async def v1(ctx: Ctx) -> Any:
    base = ctx.base_url
    return 200, {"resources": [
        {"name": name, "links": [{"rel": "self", "href": f"{base}/v1/{name}"}]}
        for name in ("introspection", "continue")]}


routes = [Route("/", root, methods=["GET"]), Route("/v1", v1, methods=["GET"]),
          Route("/v1/", v1, methods=["GET"])]
