"""`/v1/nodes` and its sub-resources."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.routing import Route

from ironsight.baremetal import raid, states
from ironsight.baremetal.api import microversions, ports, project_scope, schemas, views
from ironsight.baremetal.api.base import Ctx, missing_ident, parse_bool, parse_limit, parse_sort
from ironsight.baremetal.api.node_extras import check_trait
from ironsight.baremetal.conductor.discovery import STATUSES
from ironsight.baremetal.conductor.records import Change, Event
from ironsight.baremetal.interfaces import INTERFACE_FIELDS
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.pagination import next_link
from ironsight.common.exceptions import (
    Conflict,
    Invalid,
    InvalidParameterValue,
    NotAcceptable,
)
from ironsight.common.ids import is_uuid_like

_EQUAL_FILTERS = ("driver", "provision_state", "instance_uuid", "instance_name",
                  "resource_class", "conductor_group", "owner", "lessee", "shard",
                  "parent_node")
_BOOL_FILTERS = ("maintenance", "associated", "reserved", "retired", "sharded")
# Filters with a rule of their own: the chassis (by UUID), a part of the description, a
# project (owner or lessee), a fault (none is ever recorded: ironsight has no fault detection),
# the conductor serving the node (the hash ring's answer: `_on_conductor`)
_OTHER_FILTERS = ("chassis_uuid", "description_contains", "project", "fault", "conductor",
                  # ironsight only: discovered nodes (api/discovery.py), and by approval
                  "auto_discovered", "discovery")
_LIST_PARAMS = {"fields", "limit", "marker", "sort_key", "sort_dir", "detail",
                "include_children", *_EQUAL_FILTERS, *_BOOL_FILTERS, *_OTHER_FILTERS}
# Ironic's node faults (ironic.common.faults)
_FAULTS = ("power failure", "clean failure", "rescue abort failure", "service failure")
_SORT_KEYS = {"id", "uuid", "name", "driver", "provision_state", "power_state", "created_at",
              "updated_at", "provision_updated_at", "maintenance", "instance_uuid"}
_DICT_FIELDS = ("driver_info", "properties", "extra", "instance_info")
_PATCHABLE = {"name", "driver", *_DICT_FIELDS, "instance_uuid", "instance_name", "chassis_uuid",
              "resource_class", "owner", "lessee", "description", "retired", "retired_reason",
              "protected", "protected_reason", "automated_clean", "conductor_group", "shard",
              "parent_node", "network_data", "disable_power_off", "maintenance",
              "maintenance_reason", *INTERFACE_FIELDS}
# What a field removed by a JSON patch becomes.
_REMOVED = {**{k: {} for k in _DICT_FIELDS}, "retired": False, "protected": False,
            "maintenance": False, "disable_power_off": False, "conductor_group": ""}


def _node_doc(ctx: Ctx, row: dict[str, Any], fields: tuple[str, ...] | list[str]) -> dict[str, Any]:
    conductor = ctx.deps.conductor
    doc = views.node_doc(row, ctx.base_url, fields,
                         conductor.drivers.secret_keys(row.get("driver")), ctx.version,
                         conductor.host_for(row["uuid"]))
    project_scope.redact(ctx, row, doc)
    return doc


def _full_doc(ctx: Ctx, row: dict[str, Any]) -> dict[str, Any]:
    doc = _node_doc(ctx, row, views.NODE_FIELDS)
    views.add_subresource_links(doc, ctx.base_url)
    return doc


async def _with_related(ctx: Ctx, rows: list[dict[str, Any]],
                        shown: tuple[str, ...] | list[str]) -> None:
    """Fill each row's `traits`, `allocation_uuid` and `chassis_uuid` when the documents
    show them."""
    if "traits" in shown and ctx.at_least(37) and rows:
        found = await ctx.deps.records.traits_of(r["id"] for r in rows)
        for r in rows:
            r["traits"] = found.get(r["id"], [])
    held = [r["allocation_id"] for r in rows if r.get("allocation_id")]
    if "allocation_uuid" in shown and ctx.at_least(52) and held:
        uuids = await ctx.deps.records.allocations.uuids_of(held)
        for r in rows:
            r["allocation_uuid"] = uuids.get(r.get("allocation_id") or 0)
    joined = [r["chassis_id"] for r in rows if r.get("chassis_id") and "chassis_uuid" not in r
              ] if "chassis_uuid" in shown else []
    if joined:
        uuids = await ctx.deps.records.chassis_uuids_of(joined)
        for r in rows:
            if "chassis_uuid" not in r:
                r["chassis_uuid"] = uuids.get(r.get("chassis_id") or 0)


def _check_version(ctx: Ctx, fields: Any) -> None:
    """Ironic refuses (406) a field set in a request older than the field."""
    for field in fields:
        if views.FIELD_VERSIONS.get(field, 1) > ctx.version[1]:
            raise NotAcceptable("Request not acceptable.")  # Ironic's words, all of them


async def _list(ctx: Ctx, detail: bool) -> tuple[int, dict[str, Any]]:
    params = ctx.query(_LIST_PARAMS)
    microversions.check_filters("nodes", params, ctx.version)
    if params.get("detail") is not None and parse_bool("detail", params["detail"]):
        detail = True
    fields = views.parse_fields(params.get("fields"), views.NODE_FIELDS)
    _check_version(ctx, [*(fields or ()), params.get("sort_key", "id")])
    if fields is not None and detail:
        raise Invalid("Can not specify ?detail=True and fields in the same request.")
    shown = tuple(fields) if fields else (views.NODE_FIELDS if detail else views.NODE_LIST_FIELDS)
    columns = views.node_columns_for(shown) | {"driver", "reservation", "id", "owner"}
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    sort_key, sort_dir = parse_sort(params, _SORT_KEYS)
    filters: dict[str, Any] = {}
    for key in _EQUAL_FILTERS:
        if key in params:
            filters[key] = params[key]
    if "conductor_group" in filters:
        filters["conductor_group"] = filters["conductor_group"].lower()
    if "shard" in filters:
        filters["shard"] = [s for s in filters["shard"].split(",") if s]
    for key in _BOOL_FILTERS:
        if key in params:
            filters[key] = parse_bool(key, params[key])
    _other_filters(params, filters)
    project = project_scope.list_project(ctx)
    if project is not None:  # a project's caller: the nodes it owns or leases
        filters["_project"] = project

    async def page(marker: str | None) -> list[dict[str, Any]]:
        return await ctx.deps.records.list_nodes(
            columns=columns, filters=filters, limit=limit, marker=marker, sort_key=sort_key,
            sort_dir=sort_dir)

    if "conductor" in params:
        rows = await _on_conductor(ctx, page, params.get("marker"), params["conductor"], limit)
    else:
        rows = await page(params.get("marker"))
    await _with_related(ctx, rows, shown)
    body: dict[str, Any] = {"nodes": [_full_doc(ctx, r) if detail and not fields else
                                      _node_doc(ctx, r, shown) for r in rows]}
    if rows and len(rows) == limit:
        path = "v1/nodes/detail" if detail and "detail" not in params else "v1/nodes"
        body["next"] = next_link(ctx.base_url, path, params, limit=limit,
                                 marker=rows[-1]["uuid"])
    return 200, body


async def _on_conductor(ctx: Ctx, page: Callable[[str | None], Awaitable[list[dict[str, Any]]]],
                        marker: str | None, host: str, limit: int) -> list[dict[str, Any]]:
    """The first `limit` nodes after `marker` that conductor `host` serves. Which conductor
    serves a node is the hash ring's answer, not a column, so the pages are read in order
    and filtered here (as Ironic filters this one after its query)."""
    found: list[dict[str, Any]] = []
    while len(found) < limit:
        rows = await page(marker)
        found += [r for r in rows
                  if ctx.deps.conductor.host_for(r["uuid"]) == host][:limit - len(found)]
        if len(rows) < limit:
            break
        marker = rows[-1]["uuid"]
    return found


def _other_filters(params: dict[str, str], filters: dict[str, Any]) -> None:
    if "chassis_uuid" in params:
        if not is_uuid_like(params["chassis_uuid"]):
            raise InvalidParameterValue(
                f"Expected UUID for chassis_uuid: {params['chassis_uuid']}")
        filters["chassis_uuid"] = params["chassis_uuid"].lower()
    for key in ("description_contains", "project"):
        if key in params:
            filters[key] = params[key]
    if "fault" in params:
        if params["fault"] not in _FAULTS:
            raise InvalidParameterValue(f"Unknown fault: {params['fault']!r}. Valid faults "
                                        f"are: {', '.join(_FAULTS)}")
        filters["fault"] = params["fault"]
    if "auto_discovered" in params:
        filters["auto_discovered"] = parse_bool("auto_discovered", params["auto_discovered"])
    if "discovery" in params:
        if params["discovery"] not in STATUSES:
            raise InvalidParameterValue(f"Invalid value for discovery: {params['discovery']!r} "
                                        f"(one of {', '.join(STATUSES)})")
        filters["discovery"] = params["discovery"]


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
    _check_version(ctx, [k for k, v in body.items() if v not in (None, "")])
    data = schemas.NodeCreate.model_validate(body)
    initial = states.ENROLL if ctx.at_least(11) else states.AVAILABLE
    values = project_scope.owned_by(ctx, data.model_dump(exclude_none=True), "node")
    if data.retired and initial == states.AVAILABLE:
        raise Conflict("Node can not have 'retired' set in provision state 'available'")
    _sync_instance_name(values, None)
    row = await ctx.deps.records.create_node(values, initial)
    row["traits"] = []
    doc = _full_doc(ctx, row)
    return 201, doc, {"Location": f"{ctx.base_url}/v1/nodes/{row['uuid']}"}


@endpoint
async def show_node(ctx: Ctx) -> Any:
    params = ctx.query({"fields"})
    microversions.check_filters("nodes", params, ctx.version)
    fields = views.parse_fields(params.get("fields"), views.NODE_FIELDS)
    _check_version(ctx, fields or ())
    row = await ctx.deps.records.get_node(ctx.param("node"))
    await _with_related(ctx, [row], fields or views.NODE_FIELDS)
    if fields:
        return 200, _node_doc(ctx, row, fields)
    return 200, _full_doc(ctx, row)


def _patch(ctx: Ctx, ops: Any) -> Change:
    """The change a JSON patch of the node makes, checked as Ironic checks a PATCH."""
    if isinstance(ops, list):
        _check_version(ctx, {str(op.get("path", "")).strip("/").split("/")[0]
                             for op in ops if isinstance(op, dict)})

    def change(row: dict[str, Any]) -> dict[str, Any]:
        patched = schemas.apply_patch({k: row[k] for k in _PATCHABLE}, ops, _PATCHABLE)
        for key, empty in _REMOVED.items():
            if patched.get(key) is None:
                patched[key] = empty
        new = schemas.NodePatched.model_validate(patched).model_dump()
        if new["chassis_uuid"] is not None:
            new["chassis_uuid"] = new["chassis_uuid"].lower()
        elif row.get("chassis_uuid") and not ctx.at_least(25):
            raise NotAcceptable("Request not acceptable: removing a node's chassis_uuid needs "
                                "API version 1.25 or newer.")
        project_scope.check_node_patch(ctx, row, [k for k in new if new[k] != row.get(k)])
        _check_flags(row, new)
        _sync_instance_name(new, row)
        if new["driver"] != row["driver"] and row.get("console_enabled"):
            # the new driver could not stop the console the old one started (Ironic's 409)
            raise Conflict(f"Node {ctx.param('node')} can not update the driver while the "
                           "console is enabled. Please stop the console first.")
        return new

    return change


@endpoint
async def patch_node(ctx: Ctx) -> Any:
    row = await ctx.deps.records.update_node(ctx.param("node"), _patch(ctx, await ctx.body()))
    await _with_related(ctx, [row], views.NODE_FIELDS)
    return 200, _full_doc(ctx, row)


def _check_flags(row: dict[str, Any], new: dict[str, Any]) -> None:
    """Ironic's rules for the retired, protected and maintenance flags and their reasons."""
    state = row["provision_state"]
    for flag, allowed in (("retired", None), ("protected", (states.ACTIVE, states.RESCUE))):
        reason = f"{flag}_reason"
        if not new[flag]:
            if new[reason] and new[reason] != row[reason]:
                raise InvalidParameterValue(
                    f"The {reason} field can only be set when {flag} is True")
            new[reason] = None
        elif not row[flag]:
            if flag == "retired" and state == states.AVAILABLE:
                raise Conflict(f"Node {row['uuid']} can not have 'retired' set in provision "
                               f"state 'available', the current state is '{state}'")
            if allowed and state not in allowed:
                raise Conflict(f"Node {row['uuid']} can only be made protected in provision "
                               f"states 'active' or 'rescue', the current state is "
                               f"'{state}'")
    if not new["maintenance"]:
        new["maintenance_reason"] = None


def _sync_instance_name(new: dict[str, Any], row: dict[str, Any] | None) -> None:
    """As Ironic: a node without an instance_name takes instance_info's display_name when
    instance_info changes."""
    info = new.get("instance_info") or {}
    changed = row is None or info != row["instance_info"]
    if changed and not new.get("instance_name") and info.get("display_name"):
        new["instance_name"] = str(info["display_name"])[:255]


@endpoint
async def delete_node(ctx: Ctx) -> Any:
    await ctx.deps.records.delete_node(ctx.param("node"))
    return 204, None


# --- states ---------------------------------------------------------------------------------


@endpoint
async def get_states(ctx: Ctx) -> Any:
    """Ironic's NodeStates: the fields of the request's version, and no links."""
    row = await ctx.deps.records.get_node(ctx.param("node"))
    doc: dict[str, Any] = {
        "console_enabled": bool(row.get("console_enabled")), "last_error": row["last_error"],
        "power_state": row["power_state"],
        "provision_state": views.shown_state(row["provision_state"], ctx.version),
        "target_power_state": row["target_power_state"],
        "target_provision_state": row["target_provision_state"],
        "provision_updated_at": views.iso(row["provision_updated_at"]),
    }
    if ctx.at_least(views.FIELD_VERSIONS["raid_config"]):
        doc.update(raid_config={}, target_raid_config=row["target_raid_config"] or {})
    if ctx.at_least(views.FIELD_VERSIONS["boot_mode"]):
        doc.update(boot_mode=None, secure_boot=None)
    return 200, doc


@endpoint
async def set_target_raid_config(ctx: Ctx) -> Any:
    """Store the RAID configuration the node should get ({} unsets it). Only the fake RAID
    interface (fake-hardware's default) takes one: with no-raid, a 404 as in Ironic."""
    config = raid.check_target(await ctx.body())

    def change(row: dict[str, Any]) -> dict[str, Any]:
        if config and row["raid_interface"] != raid.STORING_INTERFACE:
            raise raid.unsupported(row["driver"], f": the node's raid_interface is "
                                                  f"{row['raid_interface']}")
        return {**row, "target_raid_config": config or None}

    await ctx.deps.records.update_node(ctx.param("node"), change)
    return 204, None


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
        if not isinstance(target, str) or target not in states.TARGET_EVENTS:
            shown = repr(target) if isinstance(target, str | int | float | None) else \
                f"a JSON {'object' if isinstance(target, dict) else 'array'}"
            raise InvalidParameterValue(
                f"target: {shown} is not a provision action supported by ironsight "
                f"(one of: {', '.join(states.TARGET_EVENTS)})")
    body = schemas.ProvisionTarget.model_validate(raw)
    if not ctx.at_least(states.TARGET_VERSIONS[body.target]):
        raise NotAcceptable("Request not acceptable.")
    _check_provision_options(body)
    await ctx.deps.conductor.do_provision_action(ctx.param("node"),
                                                 states.TARGET_EVENTS[body.target])
    return 202, None, _states_location(ctx)


def _check_provision_options(body: schemas.ProvisionTarget) -> None:
    """The arguments Ironic requires of some targets, with its texts."""
    if body.target == "rescue" and not (body.rescue_password or "").strip():
        raise Invalid('A non-empty "rescue_password" is required when setting target '
                      'provision state to rescue')
    if body.target == "clean" and not body.clean_steps and not body.runbook:
        raise Invalid('"clean_steps" is required when setting target provision state to '
                      'clean')
    if body.target == "service" and not body.service_steps and not body.runbook:
        raise Invalid('"service_steps" is required when setting target provision state '
                      'to service')


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


@endpoint
async def add_history_event(ctx: Ctx) -> Any:
    """ironsight only (admin): another service's event in the node's history, e.g.
    discoverd's summary of the inspection rules that matched. Ironic has no such call;
    its own conductor writes these events, here discoverd is a separate service."""
    ctx.query(set())
    body = schemas.HistoryEvent.model_validate(await ctx.body())
    await ctx.deps.records.add_history(ctx.param("node"), body.event, severity=body.severity,
                                       event_type=body.event_type)
    return 201, None


@endpoint
async def apply_changes(ctx: Ctx) -> Any:
    """ironsight only (a member, as for a PATCH; the events carry the caller's user name,
    as every history event does): a node PATCH, trait changes and history events in one
    request and one transaction, all or nothing. discoverd writes what an inspection's
    hooks and rules decided this way: one request where Ironic's API needs a PATCH, a
    request per trait and (here) a history POST. Adding a trait the node has, or removing
    one it lacks, changes nothing."""
    ctx.query(set())
    body = schemas.NodeChanges.model_validate(await ctx.body())
    add = [check_trait(t) for t in body.add_traits]
    remove = set(body.remove_traits)

    def traits(current: list[str]) -> list[str]:
        return [t for t in [*current, *add] if t not in remove]

    port_changes = []
    for n, item in enumerate(body.ports):
        touched = ports.patched_fields(item.patch)
        moved = touched & {"node_uuid", "portgroup_uuid"}
        if moved:
            raise Invalid(f"ports[{n}].patch: {', '.join(sorted(moved))} cannot be changed "
                          f"here; PATCH /v1/ports/{item.uuid} does it")
        if not is_uuid_like(item.uuid):
            raise Invalid(f"Invalid value for ports[{n}].uuid: {item.uuid!r} (a port UUID)")
        if "physical_network" in touched:  # checked against its group
            current = await ctx.deps.records.get_port(item.uuid)
            change = await ports.port_change(ctx, current, item.patch)
        else:
            change = ports.in_place_change(item.patch)  # checked on the port as written
        port_changes.append((item.uuid.lower(), change))
    await ctx.deps.records.update_node(
        ctx.param("node"), _patch(ctx, body.patch) if body.patch else dict,
        traits=traits if add or remove else None,
        events=[Event(e.event, e.severity, e.event_type) for e in body.events],
        ports=port_changes)
    return 204, None


@endpoint
async def node_snapshot(ctx: Ctx) -> Any:
    """ironsight only: the node (`fields` as for `GET /v1/nodes/{node}`) and its ports in
    detail, read together in one transaction: what discoverd reads of a node to process
    its ramdisk's report, in one request instead of two."""
    params = ctx.query({"fields"})
    fields = views.parse_fields(params.get("fields"), views.NODE_FIELDS)
    _check_version(ctx, fields or ())
    row, port_rows = await ctx.deps.records.node_with_ports(ctx.param("node"))
    await _with_related(ctx, [row], fields or views.NODE_FIELDS)
    node = _node_doc(ctx, row, fields) if fields else _full_doc(ctx, row)
    return 200, {"node": node, "ports": [
        views.port_doc(p, ctx.base_url, views.PORT_FIELDS, ctx.version) for p in port_rows]}


@endpoint
async def post_to_node(ctx: Ctx) -> Any:
    """Ironic routes `POST /v1/nodes/X` to node creation with X as the body."""
    raise Invalid(f"Schema error for node: {ctx.param('node')!r} is not of type 'object'")


routes = [
    Route("/v1/nodes", list_nodes, methods=["GET"]),
    Route("/v1/nodes", create_node, methods=["POST"]),
    Route("/v1/nodes", missing_ident("node_ident"), methods=["PATCH", "DELETE"]),
    Route("/v1/nodes/detail", list_nodes_detail, methods=["GET"]),
    Route("/v1/nodes/{node}", show_node, methods=["GET"]),
    Route("/v1/nodes/{node}", patch_node, methods=["PATCH"]),
    Route("/v1/nodes/{node}", delete_node, methods=["DELETE"]),
    Route("/v1/nodes/{node}", post_to_node, methods=["POST"]),
    Route("/v1/nodes/{node}/states", get_states, methods=["GET"]),
    Route("/v1/nodes/{node}/states/power", set_power_state, methods=["PUT"]),
    Route("/v1/nodes/{node}/states/provision", set_provision_state, methods=["PUT"]),
    Route("/v1/nodes/{node}/states/raid", set_target_raid_config, methods=["PUT"]),
    Route("/v1/nodes/{node}/management/boot_device", get_boot_device, methods=["GET"]),
    Route("/v1/nodes/{node}/management/boot_device", set_boot_device, methods=["PUT"]),
    Route("/v1/nodes/{node}/management/boot_device/supported", supported_boot_devices,
          methods=["GET"]),
    Route("/v1/nodes/{node}/maintenance", put_maintenance, methods=["PUT"]),
    Route("/v1/nodes/{node}/maintenance", delete_maintenance, methods=["DELETE"]),
    Route("/v1/nodes/{node}/validate", validate_node, methods=["GET"]),
    Route("/v1/nodes/{node}/history", node_history, methods=["GET"]),
    Route("/v1/nodes/{node}/history", add_history_event, methods=["POST"]),
    Route("/v1/nodes/{node}/changes", apply_changes, methods=["POST"]),
    Route("/v1/nodes/{node}/snapshot", node_snapshot, methods=["GET"]),
]
