"""`/v1/ports` and `/v1/nodes/{node}/ports`."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import portgroups, schemas, views
from ironsight.baremetal.api.base import Ctx, parse_bool, parse_limit, parse_sort
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.pagination import next_link
from ironsight.common.exceptions import Invalid, NotFound

_LIST_PARAMS = {"fields", "limit", "marker", "sort_key", "sort_dir", "node", "node_uuid",
                "address", "detail", "pxe_enabled", "portgroup"}
_SORT_KEYS = {"id", "uuid", "address", "created_at", "updated_at"}
_PATCHABLE = {"address", "node_uuid", "pxe_enabled", "local_link_connection",
              "physical_network", "extra", "portgroup_uuid"}


async def _list(ctx: Ctx, detail: bool, node_ident: str | None = None) -> Any:
    params = ctx.query(_LIST_PARAMS)
    if params.get("detail") is not None and parse_bool("detail", params["detail"]):
        detail = True
    fields = views.parse_fields(params.get("fields"), views.PORT_FIELDS)
    shown = tuple(fields) if fields else (views.PORT_FIELDS if detail else views.PORT_LIST_FIELDS)
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    sort_key, sort_dir = parse_sort(params, _SORT_KEYS)
    filters: dict[str, Any] = {}
    if "address" in params:
        try:
            filters["address"] = schemas.normalize_mac(params["address"])
        except ValueError as exc:
            raise Invalid(f"address: {exc}") from None
    if "pxe_enabled" in params:
        filters["pxe_enabled"] = parse_bool("pxe_enabled", params["pxe_enabled"])
    if "portgroup" in params:
        try:
            filters["portgroup_id"] = (await ctx.deps.records.inventory.get(
                portgroups.KIND, params["portgroup"]))["id"]
        except NotFound as exc:
            raise Invalid(f"portgroup: {exc.message}") from None
    node = node_ident or params.get("node") or params.get("node_uuid")
    rows = await ctx.deps.records.list_ports(
        node=node, node_field=None if node_ident is not None else "node", filters=filters,
        limit=limit, marker=params.get("marker"), sort_key=sort_key, sort_dir=sort_dir)
    body: dict[str, Any] = {"ports": [views.port_doc(r, ctx.base_url, shown) for r in rows]}
    if rows and len(rows) == limit:
        body["next"] = next_link(ctx.base_url, ctx.request.url.path, params, limit=limit,
                                 marker=rows[-1]["uuid"])
    return 200, body


@endpoint
async def list_ports(ctx: Ctx) -> Any:
    return await _list(ctx, detail=False)


@endpoint
async def list_ports_detail(ctx: Ctx) -> Any:
    return await _list(ctx, detail=True)


@endpoint
async def list_node_ports(ctx: Ctx) -> Any:
    return await _list(ctx, detail=False, node_ident=ctx.param("node"))


@endpoint
async def list_node_ports_detail(ctx: Ctx) -> Any:
    return await _list(ctx, detail=True, node_ident=ctx.param("node"))


@endpoint
async def create_port(ctx: Ctx) -> Any:
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("Request body must be a JSON object describing the port.")
    group = body.pop("portgroup_uuid", None)
    data = schemas.PortCreate.model_validate(body)
    values = data.model_dump(exclude_none=True)
    node = values.pop("node_uuid")
    if group is not None:
        values["portgroup_id"] = await _portgroup_id(ctx, group, node)
    row = await ctx.deps.records.create_port(values, node)
    row["portgroup_uuid"] = None if group is None else await _portgroup_uuid(ctx, group)
    doc = views.port_doc(row, ctx.base_url, views.PORT_FIELDS)
    return 201, doc, {"Location": f"{ctx.base_url}/v1/ports/{row['uuid']}"}


@endpoint
async def show_port(ctx: Ctx) -> Any:
    params = ctx.query({"fields"})
    fields = views.parse_fields(params.get("fields"), views.PORT_FIELDS)
    row = await ctx.deps.records.get_port(ctx.param("port"))
    return 200, views.port_doc(row, ctx.base_url, fields or views.PORT_FIELDS)


@endpoint
async def patch_port(ctx: Ctx) -> Any:
    ops = await ctx.body()
    current = await ctx.deps.records.get_port(ctx.param("port"))
    wanted = schemas.apply_patch({k: current[k] for k in _PATCHABLE}, ops, _PATCHABLE)
    group = wanted["portgroup_uuid"]
    group_id = None if group is None else await _portgroup_id(ctx, group, wanted["node_uuid"])

    def change(row: dict[str, Any]) -> dict[str, Any]:
        patched = schemas.apply_patch({k: row[k] for k in _PATCHABLE}, ops, _PATCHABLE)
        patched.pop("portgroup_uuid")
        for key in ("local_link_connection", "extra"):
            if patched.get(key) is None:
                patched[key] = {}
        return {**schemas.PortFields.model_validate(patched).model_dump(),
                "portgroup_id": group_id}

    await ctx.deps.records.update_port(ctx.param("port"), change)
    row = await ctx.deps.records.get_port(ctx.param("port"))
    return 200, views.port_doc(row, ctx.base_url, views.PORT_FIELDS)


async def _portgroup_id(ctx: Ctx, ident: str, node: str) -> int:
    """The portgroup a port joins (by UUID or name): it must be on the port's node."""
    return int((await ctx.deps.records.inventory.portgroup_of(str(ident), node))["id"])


async def _portgroup_uuid(ctx: Ctx, ident: str) -> str:
    return str((await ctx.deps.records.inventory.get(portgroups.KIND, str(ident)))["uuid"])



@endpoint
async def delete_port(ctx: Ctx) -> Any:
    await ctx.deps.records.delete_port(ctx.param("port"))
    return 204, None


routes = [
    Route("/v1/ports", list_ports, methods=["GET"]),
    Route("/v1/ports", create_port, methods=["POST"]),
    Route("/v1/ports/detail", list_ports_detail, methods=["GET"]),
    Route("/v1/ports/{port}", show_port, methods=["GET"]),
    Route("/v1/ports/{port}", patch_port, methods=["PATCH"]),
    Route("/v1/ports/{port}", delete_port, methods=["DELETE"]),
    Route("/v1/nodes/{node}/ports", list_node_ports, methods=["GET"]),
    Route("/v1/nodes/{node}/ports/detail", list_node_ports_detail, methods=["GET"]),
]
