"""`/v1/nodes` and its sub-resources."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal import states
from ironsight.baremetal.api import schemas, views
from ironsight.baremetal.api.base import Ctx, links, parse_bool, parse_limit, parse_sort
from ironsight.baremetal.interfaces import INTERFACE_FIELDS
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.pagination import next_link
from ironsight.common.exceptions import Invalid, InvalidParameterValue, NotAcceptable

_LIST_PARAMS = {"fields", "limit", "marker", "sort_key", "sort_dir", "driver",
                "provision_state", "maintenance", "associated", "instance_uuid", "detail",
                "reserved"}
_SORT_KEYS = {"id", "uuid", "name", "driver", "provision_state", "power_state", "created_at",
              "updated_at", "provision_updated_at", "maintenance", "instance_uuid"}
_DICT_FIELDS = ("driver_info", "properties", "extra", "instance_info")
_PATCHABLE = {"name", "driver", *_DICT_FIELDS, "instance_uuid", *INTERFACE_FIELDS}

# Provision verbs and the microversion that introduced each.
_VERB_VERSIONS = {"manage": 4, "provide": 4, "inspect": 6, "abort": 13}


def _node_doc(ctx: Ctx, row: dict[str, Any], fields: tuple[str, ...] | list[str]) -> dict[str, Any]:
    conductor = ctx.deps.conductor
    return views.node_doc(row, ctx.base_url, fields,
                          conductor.drivers.secret_keys(row.get("driver")), ctx.version,
                          conductor.host)


def _full_doc(ctx: Ctx, row: dict[str, Any]) -> dict[str, Any]:
    doc = _node_doc(ctx, row, views.NODE_FIELDS)
    views.add_subresource_links(doc, ctx.base_url)
    return doc


async def _list(ctx: Ctx, detail: bool) -> tuple[int, dict[str, Any]]:
    params = ctx.query(_LIST_PARAMS)
    if params.get("detail") is not None and parse_bool("detail", params["detail"]):
        detail = True
    fields = views.parse_fields(params.get("fields"), views.NODE_FIELDS)
    if fields is not None and detail:
        raise Invalid("Can not specify ?detail=True and fields in the same request.")
    shown = tuple(fields) if fields else (views.NODE_FIELDS if detail else views.NODE_LIST_FIELDS)
    columns = views.node_columns_for(shown) | {"driver", "reservation"}
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    sort_key, sort_dir = parse_sort(params, _SORT_KEYS)
    filters: dict[str, Any] = {}
    for key in ("driver", "provision_state", "instance_uuid"):
        if key in params:
            filters[key] = params[key]
    for key in ("maintenance", "associated", "reserved"):
        if key in params:
            filters[key] = parse_bool(key, params[key])
    rows = await ctx.deps.records.list_nodes(columns=columns, filters=filters, limit=limit,
                                             marker=params.get("marker"), sort_key=sort_key,
                                             sort_dir=sort_dir)
    body: dict[str, Any] = {"nodes": [_node_doc(ctx, r, shown) for r in rows]}
    if rows and len(rows) == limit:
        path = "v1/nodes/detail" if detail and "detail" not in params else "v1/nodes"
        body["next"] = next_link(ctx.base_url, path, params, limit=limit,
                                 marker=rows[-1]["uuid"])
    return 200, body


@endpoint
async def list_nodes(ctx: Ctx) -> Any:
    return await _list(ctx, detail=False)


@endpoint
async def list_nodes_detail(ctx: Ctx) -> Any:
    return await _list(ctx, detail=True)


@endpoint
async def create_node(ctx: Ctx) -> Any:
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("Request body must be a JSON object describing the node.")
    data = schemas.NodeCreate.model_validate(body)
    initial = states.ENROLL if ctx.at_least(11) else states.AVAILABLE
    row = await ctx.deps.records.create_node(data.model_dump(exclude_none=True), initial)
    doc = _full_doc(ctx, row)
    return 201, doc, {"Location": f"{ctx.base_url}/v1/nodes/{row['uuid']}"}


@endpoint
async def show_node(ctx: Ctx) -> Any:
    params = ctx.query({"fields"})
    fields = views.parse_fields(params.get("fields"), views.NODE_FIELDS)
    row = await ctx.deps.records.get_node(ctx.param("node"))
    if fields:
        return 200, _node_doc(ctx, row, fields)
    return 200, _full_doc(ctx, row)


@endpoint
async def patch_node(ctx: Ctx) -> Any:
    ops = await ctx.body()

    def change(row: dict[str, Any]) -> dict[str, Any]:
        patched = schemas.apply_patch({k: row[k] for k in _PATCHABLE}, ops, _PATCHABLE)
        for key in _DICT_FIELDS:
            if patched.get(key) is None:
                patched[key] = {}
        return schemas.NodeFields.model_validate(patched).model_dump()

    return 200, _full_doc(ctx, await ctx.deps.records.update_node(ctx.param("node"), change))


@endpoint
async def delete_node(ctx: Ctx) -> Any:
    await ctx.deps.records.delete_node(ctx.param("node"))
    return 204, None


# --- states ---------------------------------------------------------------------------------


@endpoint
async def get_states(ctx: Ctx) -> Any:
    row = await ctx.deps.records.get_node(ctx.param("node"))
    return 200, {
        "power_state": row["power_state"], "target_power_state": row["target_power_state"],
        "provision_state": views.shown_state(row["provision_state"], ctx.version),
        "target_provision_state": row["target_provision_state"],
        "provision_updated_at": views.iso(row["provision_updated_at"]),
        "last_error": row["last_error"], "console_enabled": False, "raid_config": {},
        "target_raid_config": {}, "boot_mode": None, "secure_boot": None,
        "links": links(ctx.base_url, f"nodes/{row['uuid']}/states"),
    }


def _states_location(ctx: Ctx) -> dict[str, str]:
    return {"Location": f"{ctx.base_url}/v1/nodes/{ctx.param('node')}/states"}


@endpoint
async def set_power_state(ctx: Ctx) -> Any:
    body = schemas.PowerTarget.model_validate(await ctx.body())
    await ctx.deps.conductor.change_power_state(ctx.param("node"), body.target)
    return 202, None, _states_location(ctx)


@endpoint
async def set_provision_state(ctx: Ctx) -> Any:
    raw = await ctx.body()
    if isinstance(raw, dict):
        target = raw.get("target")
        if not isinstance(target, str) or target not in _VERB_VERSIONS:
            shown = repr(target) if isinstance(target, str | int | float | None) else \
                f"a JSON {'object' if isinstance(target, dict) else 'array'}"
            raise InvalidParameterValue(
                f"target: {shown} is not a provision action supported by ironsight "
                f"(one of: {', '.join(_VERB_VERSIONS)})")
    body = schemas.ProvisionTarget.model_validate(raw)
    if not ctx.at_least(_VERB_VERSIONS[body.target]):
        raise NotAcceptable("Request not acceptable.")
    await ctx.deps.conductor.do_provision_action(ctx.param("node"), body.target)
    return 202, None, _states_location(ctx)


# --- management, maintenance, validate, history ---------------------------------------------


@endpoint
async def get_boot_device(ctx: Ctx) -> Any:
    return 200, await ctx.deps.conductor.get_boot_device(ctx.param("node"))


@endpoint
async def set_boot_device(ctx: Ctx) -> Any:
    params = ctx.query({"boot_device", "persistent"})
    raw = await ctx.body() if int(ctx.request.headers.get("content-length") or 0) else {}
    # Old clients pass the device as query parameters.
    if "boot_device" in params and isinstance(raw, dict):
        raw = {"boot_device": params["boot_device"],
               "persistent": parse_bool("persistent", params.get("persistent", "false"))}
    body = schemas.BootDevice.model_validate(raw)
    await ctx.deps.conductor.set_boot_device(ctx.param("node"), body.boot_device,
                                            body.persistent)
    return 204, None


@endpoint
async def supported_boot_devices(ctx: Ctx) -> Any:
    devices = await ctx.deps.conductor.supported_boot_devices(ctx.param("node"))
    return 200, {"supported_boot_devices": devices}


async def _set_maintenance(ctx: Ctx, on: bool, reason: str | None) -> Any:
    await ctx.deps.records.set_maintenance(ctx.param("node"), on, reason)
    return 202, None


@endpoint
async def put_maintenance(ctx: Ctx) -> Any:
    raw = await ctx.body() if int(ctx.request.headers.get("content-length") or 0) else {}
    body = schemas.Maintenance.model_validate(raw)
    return await _set_maintenance(ctx, True, body.reason)


@endpoint
async def delete_maintenance(ctx: Ctx) -> Any:
    return await _set_maintenance(ctx, False, None)


@endpoint
async def validate_node(ctx: Ctx) -> Any:
    row = await ctx.deps.records.get_node(ctx.param("node"))
    return 200, ctx.deps.conductor.validate(row)


@endpoint
async def node_history(ctx: Ctx) -> Any:
    params = ctx.query({"detail", "limit", "marker"})
    detail = parse_bool("detail", params.get("detail", "false"))
    row, events = await ctx.deps.records.history(ctx.param("node"))
    return 200, {"history": [views.history_doc(e, ctx.base_url, row["uuid"], detail)
                             for e in events]}


routes = [
    Route("/v1/nodes", list_nodes, methods=["GET"]),
    Route("/v1/nodes", create_node, methods=["POST"]),
    Route("/v1/nodes/detail", list_nodes_detail, methods=["GET"]),
    Route("/v1/nodes/{node}", show_node, methods=["GET"]),
    Route("/v1/nodes/{node}", patch_node, methods=["PATCH"]),
    Route("/v1/nodes/{node}", delete_node, methods=["DELETE"]),
    Route("/v1/nodes/{node}/states", get_states, methods=["GET"]),
    Route("/v1/nodes/{node}/states/power", set_power_state, methods=["PUT"]),
    Route("/v1/nodes/{node}/states/provision", set_provision_state, methods=["PUT"]),
    Route("/v1/nodes/{node}/management/boot_device", get_boot_device, methods=["GET"]),
    Route("/v1/nodes/{node}/management/boot_device", set_boot_device, methods=["PUT"]),
    Route("/v1/nodes/{node}/management/boot_device/supported", supported_boot_devices,
          methods=["GET"]),
    Route("/v1/nodes/{node}/maintenance", put_maintenance, methods=["PUT"]),
    Route("/v1/nodes/{node}/maintenance", delete_maintenance, methods=["DELETE"]),
    Route("/v1/nodes/{node}/validate", validate_node, methods=["GET"]),
    Route("/v1/nodes/{node}/history", node_history, methods=["GET"]),
]
