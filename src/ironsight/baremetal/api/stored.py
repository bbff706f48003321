"""The endpoints of a stored inventory resource (chassis, portgroups, deploy templates...),
built from one description: Ironic serves them all the same way (microversion gate, list with
limit/marker/sort_key/sort_dir/fields/detail, show, create, JSON-patch, delete)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from starlette.routing import Route

from ironsight.baremetal.api import project_scope, schemas, views
from ironsight.baremetal.api.base import Ctx, links, parse_bool, parse_limit, parse_sort
from ironsight.baremetal.conductor.inventory import Check, Kind
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.pagination import next_link
from ironsight.common.exceptions import Invalid
from ironsight.common.ids import is_uuid_like

Row = dict[str, Any]
# A query parameter of the list, to a column filter (column, value).
Filter = Callable[[str], tuple[str, Any]]


@dataclass(frozen=True)
class Resource:
    """How Ironic serves one resource. `fields` maps each document field to the minor
    version that introduced it; `ident` names the path parameter in Ironic's errors
    ("Expected UUID for chassis_uuid"); `model` validates a whole new or patched resource."""

    kind: Kind
    collection: str
    minor: int
    fields: dict[str, int]
    list_fields: tuple[str, ...]
    sort_keys: frozenset[str]
    model: type[BaseModel]
    patchable: frozenset[str]
    ident: str
    filters: dict[str, Filter] = field(default_factory=dict)
    read_only: bool = False
    sub_links: tuple[str, ...] = ()
    # values computed from the row at show time (say, conductors' `alive`)
    computed: Callable[[Ctx, Row], Row] | None = None
    # checks in the write's transaction (say, a portgroup with ports can not be deleted)
    check_write: Check | None = None
    check_delete: Check | None = None
    # shown, but changed only through a sub-resource (say, a runbook's traits)
    output_only: frozenset[str] = frozenset()
    # version-dependent checks of a new or patched resource's values (say, runbook names)
    check_values: Callable[[Ctx, Row], None] | None = None
    # what a project's caller sees in the list: "node" (the resources of its nodes), "owner"
    # (its own), "owner_or_public" (its own and the public ones); None: the system's only
    project_list: str | None = None
    # a project's caller creating one on a node: Ironic's policy name and rule
    project_create: tuple[str, project_scope.Rule] | None = None

    def shown_fields(self, ctx: Ctx) -> list[str]:
        return [f for f, minor in self.fields.items() if ctx.at_least(minor)]

    def check_ident(self, ident: str) -> None:
        if not self.kind.named and not is_uuid_like(ident):
            raise Invalid(f"Expected UUID for {self.ident}: {ident}")

    def doc(self, ctx: Ctx, row: Row, fields: list[str] | tuple[str, ...]) -> Row:
        extra = self.computed(ctx, row) if self.computed else {}
        out: Row = {}
        for f in fields:
            value = extra[f] if f in extra else row.get(f)
            out[f] = views.iso(value) if f in ("created_at", "updated_at") else value
        key = row.get("uuid") or row.get("hostname")
        out["links"] = links(ctx.base_url, f"{self.collection}/{key}")
        full = len(fields) == len(self.shown_fields(ctx))  # Ironic: not in field-limited docs
        for sub in self.sub_links if full else ():
            out[sub] = links(ctx.base_url, f"{self.collection}/{key}/{sub}")
        return out


def _parse_fields(res: Resource, ctx: Ctx, raw: str | None) -> list[str] | None:
    return views.parse_fields(raw, res.shown_fields(ctx))


async def list_docs(res: Resource, ctx: Ctx, detail: bool, node: str | None = None,
                    key: str | None = None) -> Any:
    params = ctx.query({"fields", "limit", "marker", "sort_key", "sort_dir", "detail",
                        *res.filters})
    if params.get("detail") is not None and parse_bool("detail", params["detail"]):
        detail = True
    fields = _parse_fields(res, ctx, params.get("fields"))
    if fields and detail:
        raise Invalid("Can not specify ?detail=True and fields in the same request.")
    visible = res.shown_fields(ctx)
    shown = fields or (visible if detail else [f for f in res.list_fields if f in visible])
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    sort_key, sort_dir = parse_sort(params, set(res.sort_keys))
    marker = params.get("marker")
    if marker is not None and not res.kind.named and not is_uuid_like(marker):
        raise Invalid(f"Expected UUID for marker: {marker}")
    filters: Row = {}
    node_field = None  # a node in the path (404 when missing), not in the query (400)
    for name, parse in res.filters.items():
        if name in params:
            column, value = parse(params[name])
            if column == "node_id":
                node, node_field = value, "node"
            else:
                filters[column] = value
    project = project_scope.list_project(ctx)
    if project is not None:
        filters[f"_{res.project_list}"] = project
    rows = await ctx.deps.records.inventory.list_rows(
        res.kind, filters=filters, node=node, node_field=node_field, limit=limit,
        marker=marker, sort_key=sort_key, sort_dir=sort_dir)
    body: Row = {key or res.collection.split("/")[-1]: [res.doc(ctx, r, shown) for r in rows]}
    if rows and len(rows) == limit:
        body["next"] = next_link(ctx.base_url, ctx.request.url.path, params, limit=limit,
                                 marker=rows[-1]["uuid"])
    return 200, body


async def get_row(res: Resource, ctx: Ctx, ident: str) -> Row:
    res.check_ident(ident)
    return await ctx.deps.records.inventory.get(res.kind, ident)


def validated(res: Resource, values: Row) -> Row:
    """The values of a whole resource, checked by its model; `node_uuid` stays a name."""
    return res.model.model_validate(values).model_dump()


def build(res: Resource) -> list[Route]:
    """The routes of `res`: collection, detail, one resource."""
    path = f"/v1/{res.collection}"

    @endpoint
    async def list_all(ctx: Ctx) -> Any:
        return await list_docs(res, ctx, detail=False)

    @endpoint
    async def list_detail(ctx: Ctx) -> Any:
        return await list_docs(res, ctx, detail=True)

    @endpoint
    async def show(ctx: Ctx) -> Any:
        params = ctx.query({"fields"})
        fields = _parse_fields(res, ctx, params.get("fields"))
        row = await get_row(res, ctx, ctx.param("ident"))
        return 200, res.doc(ctx, row, fields or res.shown_fields(ctx))

    @endpoint
    async def create(ctx: Ctx) -> Any:
        body = await ctx.body()
        if not isinstance(body, dict):
            raise Invalid(f"Request body must be a JSON object describing the "
                          f"{res.kind.what.lower()}.")
        unknown = sorted(set(body) - (set(res.shown_fields(ctx)) - res.output_only) - {"uuid"})
        if unknown:
            raise Invalid(f"Unknown field(s) for {res.kind.what.lower()}: {', '.join(unknown)}")
        values = validated(res, {k: v for k, v in body.items() if k != "uuid"})
        if res.check_values is not None:
            res.check_values(ctx, values)
        if res.project_create is not None:
            policy, rule = res.project_create
            await project_scope.check_create_on_node(ctx, values.get("node_uuid"), policy, rule)
        elif res.project_list in ("owner", "owner_or_public"):  # a runbook: its own
            values = project_scope.owned_by(ctx, values, "runbook")
        if body.get("uuid") is not None:
            if not is_uuid_like(str(body["uuid"])):
                raise Invalid(f"Expected UUID for uuid: {body['uuid']}")
            values["uuid"] = str(body["uuid"]).lower()
        row = await ctx.deps.records.inventory.create(res.kind, values, res.check_write)
        doc = res.doc(ctx, row, res.shown_fields(ctx))
        return 201, doc, {"Location": f"{ctx.base_url}/v1/{res.collection}/{row['uuid']}"}

    @endpoint
    async def patch(ctx: Ctx) -> Any:
        ops = await ctx.body()
        row = await get_row(res, ctx, ctx.param("ident"))
        current = {k: row.get(k) for k in res.patchable}
        patched = schemas.apply_patch(current, ops, set(res.patchable))
        values = validated(res, {k: v for k, v in patched.items() if v is not None
                                 or k in res.model.model_fields})
        if res.check_values is not None:
            res.check_values(ctx, values)
        row = await ctx.deps.records.inventory.update(res.kind, row, values, res.check_write)
        return 200, res.doc(ctx, row, res.shown_fields(ctx))

    @endpoint
    async def delete(ctx: Ctx) -> Any:
        row = await get_row(res, ctx, ctx.param("ident"))
        await ctx.deps.records.inventory.delete(res.kind, row, res.check_delete)
        return 204, None

    routes = [Route(path, list_all, methods=["GET"]),
              Route(f"{path}/detail", list_detail, methods=["GET"]),
              Route(f"{path}/{{ident}}", show, methods=["GET"])]
    if not res.read_only:
        routes += [Route(path, create, methods=["POST"]),
                   Route(f"{path}/{{ident}}", patch, methods=["PATCH"]),
                   Route(f"{path}/{{ident}}", delete, methods=["DELETE"])]
    return routes
