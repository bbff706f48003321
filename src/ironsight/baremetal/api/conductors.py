"""`/v1/conductors` (1.49): the live replicas of the bare-metal service, from their
registrations (db `bm_conductors`): name, hardware types, conductor group, alive."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select
from starlette.routing import Route

from ironsight.baremetal.api import views
from ironsight.baremetal.api.base import Ctx, links, parse_bool, parse_limit
from ironsight.baremetal.db.models import conductors
from ironsight.common.api.endpoint import endpoint
from ironsight.common.clock import utcnow
from ironsight.common.exceptions import Invalid, NotFound

MINOR = 49
FIELDS = ("hostname", "conductor_group", "alive", "drivers", "created_at", "updated_at")
LIST_FIELDS = ("hostname", "conductor_group", "alive")


def _doc(ctx: Ctx, row: dict[str, Any], fields: tuple[str, ...] | list[str]) -> dict[str, Any]:
    timeout = dt.timedelta(seconds=ctx.deps.conf.conductor.heartbeat_timeout)
    values = {"hostname": row["name"], "conductor_group": row["conductor_group"] or "",
              "alive": row["heartbeat_at"] >= utcnow() - timeout,
              "drivers": sorted(row["drivers"] or []),
              "created_at": views.iso(row["started_at"]),
              "updated_at": views.iso(row["heartbeat_at"])}
    doc = {f: values[f] for f in fields}
    doc["links"] = links(ctx.base_url, f"conductors/{row['name']}")
    return doc


def _gate(ctx: Ctx) -> None:
    if not ctx.at_least(MINOR):
        raise NotFound("Resource could not be found.")


async def _list(ctx: Ctx, detail: bool) -> Any:
    _gate(ctx)
    params = ctx.query({"fields", "limit", "marker", "sort_key", "sort_dir", "detail"})
    if params.get("detail") is not None:
        detail = parse_bool("detail", params["detail"])
    fields = views.parse_fields(params.get("fields"), FIELDS)
    if fields and detail:
        raise Invalid("Can not specify ?detail=True and fields in the same request.")
    key = params.get("sort_key", "id")
    if key in ("alive", "drivers"):
        raise Invalid(f"The sort_key value {key} is an invalid field for sorting")
    column = {"hostname": conductors.c.name, "conductor_group": conductors.c.conductor_group,
              "id": conductors.c.id, "created_at": conductors.c.started_at,
              "updated_at": conductors.c.heartbeat_at}.get(key)
    if column is None:
        raise Invalid(f"Invalid value for query parameter 'sort_key': {key!r}")
    order = column.desc() if params.get("sort_dir") == "desc" else column.asc()
    query = select(conductors).order_by(order, conductors.c.id)
    if params.get("marker"):
        query = query.where(conductors.c.name > params["marker"])
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    async with ctx.deps.records.db.read() as conn:
        rows = [dict(r) for r in (await conn.execute(query.limit(limit))).mappings()]
    shown = fields or (FIELDS if detail else LIST_FIELDS)
    return 200, {"conductors": [_doc(ctx, r, shown) for r in rows]}


@endpoint
async def list_conductors(ctx: Ctx) -> Any:
    return await _list(ctx, detail=False)


@endpoint
async def list_conductors_detail(ctx: Ctx) -> Any:
    return await _list(ctx, detail=True)


@endpoint
async def show_conductor(ctx: Ctx) -> Any:
    _gate(ctx)
    params = ctx.query({"fields"})
    fields = views.parse_fields(params.get("fields"), FIELDS)
    name = ctx.param("hostname")
    async with ctx.deps.records.db.read() as conn:
        row = (await conn.execute(select(conductors).where(conductors.c.name == name))
               ).mappings().first()
    if row is None:
        raise NotFound(f"Conductor {name} could not be found.")
    return 200, _doc(ctx, dict(row), fields or FIELDS)


routes = [Route("/v1/conductors", list_conductors, methods=["GET"]),
          Route("/v1/conductors/detail", list_conductors_detail, methods=["GET"]),
          Route("/v1/conductors/{hostname}", show_conductor, methods=["GET"])]

