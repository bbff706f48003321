"""`/v1/portgroups` (1.23) and `/v1/nodes/{node}/portgroups` (1.24): stored; ports join one
through their `portgroup_uuid` (ports.py)."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import project_scope, stored, views
from ironsight.baremetal.api.base import Ctx, parse_limit
from ironsight.baremetal.api.inventory_schemas import PortgroupFields
from ironsight.baremetal.api.schemas import normalize_mac
from ironsight.baremetal.conductor import inventory
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid

KIND = inventory.PORTGROUPS


def _address(raw: str) -> tuple[str, Any]:
    try:
        return "address", normalize_mac(raw)
    except ValueError as exc:
        raise Invalid(f"address: {exc}") from None


RESOURCE = stored.Resource(
    kind=KIND, collection="portgroups", minor=23,
    fields={"uuid": 23, "name": 23, "address": 23, "node_uuid": 23,
            "standalone_ports_supported": 23, "internal_info": 23, "extra": 23,
            "mode": 26, "properties": 26, "physical_network": 102, "category": 103,
            "dynamic_portgroup": 111, "created_at": 23, "updated_at": 23},
    list_fields=("uuid", "address", "name"),
    sort_keys=frozenset({"id", "uuid", "name", "address", "created_at", "updated_at"}),
    model=PortgroupFields,
    patchable=frozenset({"node_uuid", "name", "address", "mode", "properties",
                         "standalone_ports_supported", "physical_network", "category",
                         "extra"}),
    ident="portgroup_ident", sub_links=("ports",),
    filters={"node": lambda raw: ("node_id", raw), "address": _address},
    check_write=inventory.portgroup_stays, check_delete=inventory.portgroup_empty,
    project_list="node",
    project_create=("baremetal:portgroup:create", project_scope.Rule.OWNER_ADMIN))


@endpoint
async def node_portgroups(ctx: Ctx) -> Any:
    return await stored.list_docs(RESOURCE, ctx, detail=False,
                                  node=ctx.param("node"))


@endpoint
async def node_portgroups_detail(ctx: Ctx) -> Any:
    return await stored.list_docs(RESOURCE, ctx, detail=True,
                                  node=ctx.param("node"))


@endpoint
async def portgroup_ports(ctx: Ctx) -> Any:
    """The ports of a portgroup (1.24)."""
    row = await stored.get_row(RESOURCE, ctx, ctx.param("ident"))
    detail = ctx.request.url.path.endswith("/detail")
    return await list_for_portgroup(ctx, row["id"], detail)


async def list_for_portgroup(ctx: Ctx, portgroup_id: int, detail: bool) -> Any:
    """`/v1/portgroups/{ident}/ports`: the member ports."""
    params = ctx.query({"fields", "limit"})
    fields = views.parse_fields(params.get("fields"), views.PORT_FIELDS)
    shown = tuple(fields) if fields else (views.PORT_FIELDS if detail else views.PORT_LIST_FIELDS)
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    rows = await ctx.deps.records.inventory.portgroup_ports(portgroup_id, limit)
    return 200, {"ports": [views.port_doc(r, ctx.base_url, shown, ctx.version) for r in rows]}


routes = [
    Route("/v1/portgroups/{ident}/ports", portgroup_ports, methods=["GET"]),
    Route("/v1/portgroups/{ident}/ports/detail", portgroup_ports, methods=["GET"]),
    Route("/v1/nodes/{node}/portgroups", node_portgroups, methods=["GET"]),
    Route("/v1/nodes/{node}/portgroups/detail", node_portgroups_detail, methods=["GET"]),
    *stored.build(RESOURCE),
]
