"""`/v1/chassis` (stored: a chassis groups nodes) and `/v1/chassis/{uuid}/nodes`."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import stored, views
from ironsight.baremetal.api.base import Ctx, parse_limit
from ironsight.baremetal.api.inventory_schemas import ChassisFields
from ironsight.baremetal.conductor import inventory
from ironsight.common.api.endpoint import endpoint

KIND = inventory.CHASSIS

RESOURCE = stored.Resource(
    kind=KIND, collection="chassis", minor=1,
    fields={"uuid": 1, "description": 1, "extra": 1, "created_at": 1, "updated_at": 1},
    list_fields=("uuid", "description"),
    sort_keys=frozenset({"id", "uuid", "description", "created_at", "updated_at"}),
    model=ChassisFields, patchable=frozenset({"description", "extra"}),
    ident="chassis_uuid", sub_links=("nodes",), check_delete=inventory.chassis_empty)


@endpoint
async def chassis_nodes(ctx: Ctx) -> Any:
    """The nodes of a chassis (Ironic's node list, narrowed to it)."""
    params = ctx.query({"limit"})
    row = await stored.get_row(RESOURCE, ctx, ctx.param("ident"))
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    shown = views.NODE_LIST_FIELDS
    rows = await ctx.deps.records.list_nodes(
        columns=views.node_columns_for(shown) | {"driver"}, filters={"chassis_id": row["id"]},
        limit=limit, marker=None, sort_key="id", sort_dir="asc")
    conductor = ctx.deps.conductor
    return 200, {"nodes": [views.node_doc(r, ctx.base_url, shown,
                                          conductor.drivers.secret_keys(r.get("driver")),
                                          ctx.version, conductor.host_for(r["uuid"]))
                               for r in rows]}


routes = [Route("/v1/chassis/{ident}/nodes", chassis_nodes, methods=["GET"]),
          *stored.build(RESOURCE)]
