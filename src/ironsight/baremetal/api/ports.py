"""`/v1/ports` and `/v1/nodes/{node}/ports`."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.routing import Route

from ironsight.baremetal.api import schemas, views
from ironsight.baremetal.api.base import Ctx, endpoint, parse_bool, parse_limit, parse_sort
from ironsight.baremetal.db import api as dbapi
from ironsight.common.exceptions import Invalid, NotFound

_LIST_PARAMS = {"fields", "limit", "marker", "sort_key", "sort_dir", "node", "node_uuid",
                "address", "detail", "pxe_enabled"}
_SORT_KEYS = {"id", "uuid", "address", "created_at", "updated_at"}
_PATCHABLE = {"address", "node_uuid", "pxe_enabled", "local_link_connection",
              "physical_network", "extra"}


async def _node_id(conn: Any, ident: str, *, field: str) -> int:
    try:
        node = await dbapi.get_node(conn, ident)
    except NotFound as exc:
        # Ironic answers 400 here: the node is a field of the request, not the resource.
        raise Invalid(f"{field}: {exc}") from None
    return int(node["id"])


async def _list(ctx: Ctx, detail: bool, node_ident: str | None = None) -> Any:
    params = ctx.query(_LIST_PARAMS)
    if params.get("detail") is not None and parse_bool("detail", params["detail"]):
        detail = True
    fields = views.parse_fields(params.get("fields"), views.PORT_FIELDS)
    shown = tuple(fields) if fields else (views.PORT_FIELDS if detail else views.PORT_LIST_FIELDS)
    limit = parse_limit(params.get("limit"), ctx.svc.conf.api.max_limit)
    sort_key, sort_dir = parse_sort(params, _SORT_KEYS)
    filters: dict[str, Any] = {}
    async with ctx.svc.db.read() as conn:
        node = node_ident or params.get("node") or params.get("node_uuid")
        if node is not None:
            if node_ident is not None:
                filters["node_id"] = (await dbapi.get_node(conn, node))["id"]
            else:
                filters["node_id"] = await _node_id(conn, node, field="node")
        if "address" in params:
            try:
                filters["address"] = schemas.normalize_mac(params["address"])
            except ValueError as exc:
                raise Invalid(f"address: {exc}") from None
        if "pxe_enabled" in params:
            filters["pxe_enabled"] = parse_bool("pxe_enabled", params["pxe_enabled"])
        rows = await dbapi.list_ports(conn, filters=filters, limit=limit,
                                      marker=params.get("marker"), sort_key=sort_key,
                                      sort_dir=sort_dir)
    body: dict[str, Any] = {"ports": [views.port_doc(r, ctx.base_url, shown) for r in rows]}
    if rows and len(rows) == limit:
        query = {k: v for k, v in params.items() if k != "marker"}
        query.update(limit=str(limit), marker=rows[-1]["uuid"])
        body["next"] = f"{ctx.base_url}{ctx.request.url.path}?{urlencode(query)}"
    return 200, body


@endpoint
async def list_ports(ctx: Ctx) -> Any:
    return await _list(ctx, detail=False)


@endpoint
async def list_ports_detail(ctx: Ctx) -> Any:
    return await _list(ctx, detail=True)


@endpoint
async def list_node_ports(ctx: Ctx) -> Any:
    return await _list(ctx, detail=False, node_ident=ctx.request.path_params["node"])


@endpoint
async def list_node_ports_detail(ctx: Ctx) -> Any:
    return await _list(ctx, detail=True, node_ident=ctx.request.path_params["node"])


@endpoint
async def create_port(ctx: Ctx) -> Any:
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("Request body must be a JSON object describing the port.")
    data = schemas.PortCreate.model_validate(body)
    values = data.model_dump(exclude_none=True)
    node_uuid = values.pop("node_uuid")
    async with ctx.svc.db.begin() as conn:
        values["node_id"] = await _node_id(conn, node_uuid, field="node_uuid")
        row = await dbapi.create_port(conn, values)
        await dbapi.add_history(conn, values["node_id"], f"Port {row['address']} created",
                                event_type="port", conductor=ctx.svc.conductor.name)
    row["node_uuid"] = node_uuid
    doc = views.port_doc(row, ctx.base_url, views.PORT_FIELDS)
    return 201, doc, {"Location": f"{ctx.base_url}/v1/ports/{row['uuid']}"}


@endpoint
async def show_port(ctx: Ctx) -> Any:
    params = ctx.query({"fields"})
    fields = views.parse_fields(params.get("fields"), views.PORT_FIELDS)
    async with ctx.svc.db.read() as conn:
        row = await dbapi.get_port(conn, ctx.request.path_params["port"])
    return 200, views.port_doc(row, ctx.base_url, fields or views.PORT_FIELDS)


@endpoint
async def patch_port(ctx: Ctx) -> Any:
    ops = await ctx.body()
    async with ctx.svc.db.read() as conn:
        row = await dbapi.get_port(conn, ctx.request.path_params["port"])
    task = await ctx.svc.conductor.acquire(row["node_uuid"])
    try:
        current = {k: row[k] for k in _PATCHABLE}
        patched = schemas.apply_patch(current, ops, _PATCHABLE)
        for key in ("local_link_connection", "extra"):
            if patched.get(key) is None:
                patched[key] = {}
        new = schemas.PortFields.model_validate(patched).model_dump()
        async with ctx.svc.db.begin() as conn:
            if new["node_uuid"] != row["node_uuid"]:
                new["node_id"] = await _node_id(conn, new["node_uuid"], field="node_uuid")
            changes = {k: v for k, v in new.items() if k != "node_uuid" and v != row.get(k)}
            if changes:
                await dbapi.update_port(conn, row["id"], changes)
            row = await dbapi.get_port(conn, row["uuid"])
    finally:
        await task.release()
    return 200, views.port_doc(row, ctx.base_url, views.PORT_FIELDS)


@endpoint
async def delete_port(ctx: Ctx) -> Any:
    async with ctx.svc.db.read() as conn:
        row = await dbapi.get_port(conn, ctx.request.path_params["port"])
    task = await ctx.svc.conductor.acquire(row["node_uuid"])
    try:
        async with ctx.svc.db.begin() as conn:
            await dbapi.delete_port(conn, row["id"])
            await dbapi.add_history(conn, row["node_id"], f"Port {row['address']} deleted",
                                    event_type="port", conductor=ctx.svc.conductor.name)
    finally:
        await task.release()
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
