"""`/v1/chassis` (stored: a chassis groups nodes) and `/v1/chassis/{uuid}/nodes`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select
from starlette.routing import Route

from ironsight.baremetal.api import stored, views
from ironsight.baremetal.api.base import Ctx, parse_limit
from ironsight.baremetal.api.inventory_schemas import ChassisFields
from ironsight.baremetal.db import inventory as inv
from ironsight.baremetal.db.models import chassis, nodes
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid

KIND = inv.Kind(chassis, "Chassis", json_defaults={"extra": {}})

RESOURCE = stored.Resource(
    kind=KIND, collection="chassis", minor=1,
    fields={"uuid": 1, "description": 1, "extra": 1, "created_at": 1, "updated_at": 1},
    list_fields=("uuid", "description"),
    sort_keys=frozenset({"id", "uuid", "description", "created_at", "updated_at"}),
    model=ChassisFields, patchable=frozenset({"description", "extra"}),
    ident="chassis_uuid", sub_links=("nodes",))


class _Hooks(stored.Hooks):
    async def before_delete(self, ctx: Ctx, conn: Any, row: dict[str, Any]) -> None:
        if (await conn.execute(select(exists().where(nodes.c.chassis_id == row["id"])))).scalar():
            raise Invalid(f"Chassis {row['uuid']} contains nodes.")


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
                                          ctx.version, conductor.host) for r in rows]}


routes = [Route("/v1/chassis/{ident}/nodes", chassis_nodes, methods=["GET"]),
          *stored.build(RESOURCE, _Hooks())]
