"""`GET /v1/members` (an ironsight extension): discoverd's replicas, whether each is alive,
and which one serves the PXE side of which provisioning network, since when."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.discoverd.api.base import Ctx


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@endpoint
async def list_members(ctx: Ctx) -> Any:
    ctx.query(set())
    members = ctx.deps.members
    live = await members.live()
    return 200, {"members": [
        {"name": m.name, "hostname": m.hostname, "pid": m.pid, "alive": m.name in live,
         "started_at": _iso(m.started_at), "heartbeat_at": _iso(m.heartbeat_at),
         "pxe": {"network": m.pxe_network, "since": _iso(m.pxe_since)}
         if m.pxe_network else None}
        for m in await members.all()]}


routes = [Route("/v1/members", list_members, methods=["GET"])]
