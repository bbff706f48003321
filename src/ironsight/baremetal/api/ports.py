"""`/v1/ports` and `/v1/nodes/{node}/ports`."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import microversions, portgroups, project_scope, schemas, views
from ironsight.baremetal.api.base import Ctx, missing_ident, parse_bool, parse_limit, parse_sort
from ironsight.baremetal.conductor.records import Change
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.pagination import next_link
from ironsight.common.exceptions import Conflict, Invalid, NotAcceptable
from ironsight.common.ids import is_uuid_like

_LIST_PARAMS = {"fields", "limit", "marker", "sort_key", "sort_dir", "node", "node_uuid",
                "address", "detail", "pxe_enabled", "portgroup", "shard"}
_SORT_KEYS = {"id", "uuid", "address", "created_at", "updated_at"}
_PATCHABLE = {"address", "node_uuid", "pxe_enabled", "local_link_connection",
              "physical_network", "extra", "portgroup_uuid"}


async def _list(ctx: Ctx, detail: bool, node_ident: str | None = None) -> Any:
    params = ctx.query(_LIST_PARAMS)
    microversions.check_filters("ports", params, ctx.version)
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
    if "shard" in params:
        filters["shard"] = [s for s in params["shard"].split(",") if s]
    if "pxe_enabled" in params:
        filters["pxe_enabled"] = parse_bool("pxe_enabled", params["pxe_enabled"])
    if "portgroup" in params:  # an unknown one is a 404, as Ironic
        filters["portgroup_id"] = (await ctx.deps.records.inventory.get(
            portgroups.KIND, params["portgroup"]))["id"]
    project = project_scope.list_project(ctx)
    if project is not None:  # a project's caller: the ports of its nodes
        filters["project"] = project
    node = node_ident or params.get("node") or params.get("node_uuid")
    rows = await ctx.deps.records.list_ports(
        node=node, node_field=None if node_ident is not None else "node", filters=filters,
        limit=limit, marker=params.get("marker"), sort_key=sort_key, sort_dir=sort_dir)
    body: dict[str, Any] = {
        "ports": [views.port_doc(r, ctx.base_url, shown, ctx.version) for r in rows]}
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
    _check_physnet_version(ctx, body)
    data = schemas.PortCreate.model_validate(body)
    values = data.model_dump(exclude_none=True)
    node = values.pop("node_uuid")
    await project_scope.check_create_on_node(ctx, node, "baremetal:port:create")
    if group is not None:
        values["portgroup_id"] = await _portgroup_id(ctx, group, node)
        await _check_physnet(ctx, values["portgroup_id"], values.get("physical_network"), None)
    row = await ctx.deps.records.create_port(values, node)
    row["portgroup_uuid"] = None if group is None else await _portgroup_uuid(ctx, group)
    doc = views.port_doc(row, ctx.base_url, views.PORT_FIELDS, ctx.version)
    return 201, doc, {"Location": f"{ctx.base_url}/v1/ports/{row['uuid']}"}


def _ident(ctx: Ctx) -> str:
    """The port in the path: a UUID or a name (Ironic's args.uuid_or_name: a MAC is not)."""
    ident = ctx.param("port")
    if not is_uuid_like(ident) and not schemas._NAME_RE.match(ident):
        raise Invalid(f"Expected UUID or name for port_ident: {ident}")
    return ident


PHYSNET = 34  # the microversion of a port's physical_network


def _check_physnet_version(ctx: Ctx, fields: Any) -> None:
    if "physical_network" in fields and not ctx.at_least(PHYSNET):
        raise NotAcceptable("Request not acceptable.")


async def _check_physnet(ctx: Ctx, group_id: int | None, physnet: str | None,
                         port: str | None) -> None:
    """A port joins a portgroup only on its members' physical network (Ironic's 409)."""
    if group_id is None:
        return
    members = await ctx.deps.records.inventory.portgroup_ports(group_id, 1000)
    others = {m.get("physical_network") for m in members if m["uuid"] != port}
    if others and physnet not in others:
        raise Conflict(
            f"Port with physical network {physnet} cannot become a member of port group "
            f"{members[0]['portgroup_uuid']} which has ports in physical network "
            f"{sorted(map(str, others))[0]}.")


@endpoint
async def show_port(ctx: Ctx) -> Any:
    params = ctx.query({"fields"})
    fields = views.parse_fields(params.get("fields"), views.PORT_FIELDS)
    row = await ctx.deps.records.get_port(_ident(ctx))
    return 200, views.port_doc(row, ctx.base_url, fields or views.PORT_FIELDS, ctx.version)


@endpoint
async def patch_port(ctx: Ctx) -> Any:
    ops = await ctx.body()
    ident = _ident(ctx)
    _check_physnet_version(ctx, patched_fields(ops))  # a 406 before a 404, as Ironic
    current = await ctx.deps.records.get_port(ident)
    await ctx.deps.records.update_port(ident, await port_change(ctx, current, ops))
    row = await ctx.deps.records.get_port(ident)
    return 200, views.port_doc(row, ctx.base_url, views.PORT_FIELDS, ctx.version)


def patched_fields(ops: Any) -> set[str]:
    """The top-level fields a JSON patch touches."""
    if not isinstance(ops, list):
        return set()
    return {str(op.get("path", "")).strip("/").split("/")[0] for op in ops
            if isinstance(op, dict)}


def in_place_change(ops: Any) -> Change:
    """The change a JSON patch makes of a port that stays on its node, in its portgroup
    and on its physical network (none of those patched: the caller's check), checked when
    applied to the port as it is then (no read ahead)."""

    def change(row: dict[str, Any]) -> dict[str, Any]:
        return _patched(row, ops, row["portgroup_id"])

    return change


def _patched(row: dict[str, Any], ops: Any, group_id: int | None) -> dict[str, Any]:
    """The port's fields after the patch, checked, in `group_id`'s portgroup."""
    patched = schemas.apply_patch({k: row[k] for k in _PATCHABLE}, ops, _PATCHABLE)
    patched.pop("portgroup_uuid")
    for key in ("local_link_connection", "extra"):
        if patched.get(key) is None:
            patched[key] = {}
    return {**schemas.PortFields.model_validate(patched).model_dump(), "portgroup_id": group_id}


async def port_change(ctx: Ctx, current: dict[str, Any], ops: Any) -> Change:
    """The change a JSON patch of the port `current` makes, checked as Ironic checks a
    PATCH (its fields, its version, its portgroup's physical network)."""
    _check_physnet_version(ctx, patched_fields(ops))
    wanted = schemas.apply_patch({k: current[k] for k in _PATCHABLE}, ops, _PATCHABLE)
    group = wanted["portgroup_uuid"]
    group_id = None if group is None else await _portgroup_id(ctx, group, wanted["node_uuid"])
    if group_id is not None and (group != current["portgroup_uuid"] or wanted[
            "physical_network"] != current["physical_network"]):
        await _check_physnet(ctx, group_id, wanted["physical_network"], current["uuid"])

    def change(row: dict[str, Any]) -> dict[str, Any]:
        return _patched(row, ops, group_id)

    return change


async def _portgroup_id(ctx: Ctx, ident: str, node: str) -> int:
    """The portgroup a port joins (by UUID or name): it must be on the port's node."""
    return int((await ctx.deps.records.inventory.portgroup_of(str(ident), node))["id"])


async def _portgroup_uuid(ctx: Ctx, ident: str) -> str:
    return str((await ctx.deps.records.inventory.get(portgroups.KIND, str(ident)))["uuid"])



@endpoint
async def delete_port(ctx: Ctx) -> Any:
    ident = ctx.param("port")
    if not is_uuid_like(ident):  # Ironic deletes by UUID only (args.uuid)
        raise Invalid(f"Expected UUID for port_uuid: {ident}")
    await ctx.deps.records.delete_port(ident)
    return 204, None


routes = [
    Route("/v1/ports", list_ports, methods=["GET"]),
    Route("/v1/ports", create_port, methods=["POST"]),
    Route("/v1/ports", missing_ident("port_ident"), methods=["PATCH", "DELETE"]),
    Route("/v1/ports/detail", list_ports_detail, methods=["GET"]),
    Route("/v1/ports/{port}", show_port, methods=["GET"]),
    Route("/v1/ports/{port}", patch_port, methods=["PATCH"]),
    Route("/v1/ports/{port}", delete_port, methods=["DELETE"]),
    Route("/v1/nodes/{node}/ports", list_node_ports, methods=["GET"]),
    Route("/v1/nodes/{node}/ports/detail", list_node_ports_detail, methods=["GET"]),
]
