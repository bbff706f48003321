"""`/` and `/v1`: what clients negotiate with."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.discoverd.api.base import MAX_VERSION, Ctx, endpoint, fmt


@endpoint
async def root(ctx: Ctx) -> Any:
    return 200, {"versions": [{"id": fmt(MAX_VERSION), "status": "CURRENT",
                               "links": [{"rel": "self", "href": f"{ctx.base_url}/v1"}]}]}


@endpoint
async def v1(ctx: Ctx) -> Any:
    base = ctx.base_url
    return 200, {"resources": [
        {"name": name, "links": [{"rel": "self", "href": f"{base}/v1/{name}"}]}
        for name in ("introspection", "continue")]}


routes = [Route("/", root, methods=["GET"]), Route("/v1", v1, methods=["GET"]),
          Route("/v1/", v1, methods=["GET"])]
