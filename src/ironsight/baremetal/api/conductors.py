"""`/v1/conductors` (1.49): the bare-metal service's conductors as Ironic shows them, one per
host (`[DEFAULT] host`), the live replicas there folded into it (conductor/hosts.py):
hostname, hardware types, conductor group, alive."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import views
from ironsight.baremetal.api.base import Ctx, links, parse_bool, parse_limit
from ironsight.baremetal.conductor.hosts import HostConductor, page
from ironsight.baremetal.conductor.inventory import CONDUCTOR_SORT
from ironsight.common.api.endpoint import endpoint
from ironsight.common.clock import utcnow
from ironsight.common.exceptions import Invalid, NotFound

MINOR = 49
FIELDS = ("hostname", "conductor_group", "alive", "drivers", "created_at", "updated_at")
LIST_FIELDS = ("hostname", "conductor_group", "alive")


def _doc(ctx: Ctx, entry: HostConductor, fields: tuple[str, ...] | list[str]
         ) -> dict[str, Any]:
    values = {"hostname": entry.hostname, "conductor_group": entry.conductor_group,
              "alive": entry.alive, "drivers": list(entry.drivers),
              "created_at": views.iso(entry.created_at),
              "updated_at": views.iso(entry.updated_at)}
    doc = {f: values[f] for f in fields}
    doc["links"] = links(ctx.base_url, f"conductors/{entry.hostname}")
    return doc


async def _hosts(ctx: Ctx) -> list[HostConductor]:
    timeout = dt.timedelta(seconds=ctx.deps.conf.conductor.heartbeat_timeout)
    return await ctx.deps.records.inventory.conductor_hosts(utcnow() - timeout)


async def _list(ctx: Ctx, detail: bool) -> Any:
    params = ctx.query({"fields", "limit", "marker", "sort_key", "sort_dir", "detail"})
    if params.get("detail") is not None:
        detail = parse_bool("detail", params["detail"])
    fields = views.parse_fields(params.get("fields"), FIELDS)
    if fields and detail:
        raise Invalid("Can not specify ?detail=True and fields in the same request.")
    key = params.get("sort_key", "id")
    if key in ("alive", "drivers"):
        raise Invalid(f"The sort_key value {key} is an invalid field for sorting")
    if key not in CONDUCTOR_SORT:
        raise Invalid(f"Invalid value for query parameter 'sort_key': {key!r}")
    direction = params.get("sort_dir", "asc")
    if direction not in ("asc", "desc"):
        raise Invalid(f"Invalid value for query parameter 'sort_dir': {direction!r} "
                      "(asc or desc)")
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    entries = page(await _hosts(ctx), sort_key=key, desc=direction == "desc",
                   marker=params.get("marker"), limit=limit)
    shown = fields or (FIELDS if detail else LIST_FIELDS)
    return 200, {"conductors": [_doc(ctx, e, shown) for e in entries]}


@endpoint
async def list_conductors(ctx: Ctx) -> Any:
    return await _list(ctx, detail=False)


@endpoint
async def list_conductors_detail(ctx: Ctx) -> Any:
    return await _list(ctx, detail=True)


@endpoint
async def show_conductor(ctx: Ctx) -> Any:
    params = ctx.query({"fields"})
    fields = views.parse_fields(params.get("fields"), FIELDS)
    name = ctx.param("hostname")
    entry = next((e for e in await _hosts(ctx) if e.hostname == name), None)
    if entry is None:
        raise NotFound(f"Conductor {name} could not be found.")
    return 200, _doc(ctx, entry, fields or FIELDS)


routes = [Route("/v1/conductors", list_conductors, methods=["GET"]),
          Route("/v1/conductors/detail", list_conductors_detail, methods=["GET"]),
          Route("/v1/conductors/{hostname}", show_conductor, methods=["GET"])]
