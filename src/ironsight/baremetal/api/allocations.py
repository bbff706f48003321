"""`/v1/allocations` (1.52) and `/v1/nodes/{node}/allocation`: Ironic's allocation API.
Listing and showing are the stored resources' (stored.py); creating, patching and deleting
go through the conductor's allocations (conductor/allocations.py), which does the matching."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from starlette.routing import Route

from ironsight.baremetal.api import project_scope, schemas, stored
from ironsight.baremetal.api.base import Ctx
from ironsight.baremetal.api.inventory_schemas import check_trait
from ironsight.baremetal.conductor.allocations import ALLOCATIONS
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid, NotAcceptable
from ironsight.common.ids import is_uuid_like

OWNER = 60  # the microversion that shows and takes `owner`
BACKFILL = 58  # ... that takes `node` in a new allocation


def _listed(value: Any) -> Any:
    return [] if value is None else value


def _obj(value: Any) -> Any:
    return {} if value is None else value


class AllocationFields(BaseModel):
    """What a client may set in a new allocation (Ironic's schema), each error naming its
    field."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    resource_class: str | None = Field(default=None, max_length=80)
    traits: Annotated[list[str], BeforeValidator(_listed)] = Field(default_factory=list)
    candidate_nodes: Annotated[list[str], BeforeValidator(_listed)] = Field(
        default_factory=list)
    owner: str | None = Field(default=None, max_length=255)
    extra: Annotated[dict[str, Any], BeforeValidator(_obj)] = Field(default_factory=dict)

    @field_validator("traits")
    @classmethod
    def _traits(cls, v: list[str]) -> list[str]:
        return [check_trait(t) for t in v]


class AllocationPatch(BaseModel):
    """What a JSON patch may change (Ironic: name and extra)."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    extra: Annotated[dict[str, Any], BeforeValidator(_obj)] = Field(default_factory=dict)


RESOURCE = stored.Resource(
    kind=ALLOCATIONS, collection="allocations", minor=52,
    fields={"uuid": 52, "name": 52, "node_uuid": 52, "state": 52, "last_error": 52,
            "resource_class": 52, "traits": 52, "candidate_nodes": 52, "extra": 52,
            "owner": OWNER, "created_at": 52, "updated_at": 52},
    # Ironic lists allocations whole (there is no /detail)
    list_fields=("uuid", "name", "node_uuid", "state", "last_error", "resource_class",
                 "traits", "candidate_nodes", "extra", "owner", "created_at", "updated_at"),
    sort_keys=frozenset({"id", "uuid", "name", "state", "resource_class", "owner",
                         "last_error", "created_at", "updated_at"}),
    model=AllocationPatch, patchable=frozenset({"name", "extra"}), ident="allocation_ident",
    filters={"node": lambda raw: ("node_id", raw),
             "resource_class": lambda raw: ("resource_class", raw),
             "state": lambda raw: ("state", raw),
             "owner": lambda raw: ("owner", raw)},
    project_list="owner")


def _check_name(name: Any, verb: str) -> None:
    if name is None:
        return
    try:
        schemas._check_name(str(name))
    except ValueError:
        raise Invalid(f"Cannot {verb} allocation with invalid name '{name}'") from None


@endpoint
async def list_allocations(ctx: Ctx) -> Any:
    if "owner" in ctx.request.query_params and not ctx.at_least(OWNER):
        raise NotAcceptable("Request not acceptable: the owner filter needs API version "
                            f"1.{OWNER} or newer.")
    return await stored.list_docs(RESOURCE, ctx, detail=False)


@endpoint
async def show_allocation(ctx: Ctx) -> Any:
    fields = stored._parse_fields(RESOURCE, ctx, ctx.query({"fields"}).get("fields"))
    row = await ctx.deps.records.allocations.get(ctx.param("ident"))
    return 200, RESOURCE.doc(ctx, row, fields or RESOURCE.shown_fields(ctx))


@endpoint
async def create_allocation(ctx: Ctx) -> Any:
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("Request body must be a JSON object describing the allocation.")
    if body.get("owner") is not None and not ctx.at_least(OWNER):
        raise NotAcceptable(f"Request not acceptable: the field owner needs API version "
                            f"1.{OWNER} or newer.")
    node = body.pop("node", None)
    if node is not None and not ctx.at_least(BACKFILL):
        raise Invalid("Cannot set node when creating an allocation in this API version")
    if node is not None and not isinstance(node, str):
        raise Invalid(f"node: {node!r} is not a node UUID or name")
    uuid = body.pop("uuid", None)
    if uuid is not None and (not isinstance(uuid, str) or not is_uuid_like(uuid)):
        raise Invalid(f"Expected UUID for uuid: {uuid}")
    _check_name(body.get("name"), "create")
    values = project_scope.owned_by(ctx, AllocationFields.model_validate(body).model_dump(),
                                    "allocation")
    if uuid is not None:
        values["uuid"] = uuid.lower()
    row = await ctx.deps.records.allocations.create(values, node)
    doc = RESOURCE.doc(ctx, row, RESOURCE.shown_fields(ctx))
    return 201, doc, {"Location": f"{ctx.base_url}/v1/allocations/{row['uuid']}"}


@endpoint
async def patch_allocation(ctx: Ctx) -> Any:
    ops = await ctx.body()
    row = await ctx.deps.records.allocations.get(ctx.param("ident"))
    current = {k: row.get(k) for k in RESOURCE.patchable}
    patched = schemas.apply_patch(current, ops, set(RESOURCE.patchable))
    _check_name(patched.get("name"), "update")
    values = AllocationPatch.model_validate(patched).model_dump()
    row = await ctx.deps.records.inventory.update(ALLOCATIONS, row, values)
    return 200, RESOURCE.doc(ctx, row, RESOURCE.shown_fields(ctx))


@endpoint
async def delete_allocation(ctx: Ctx) -> Any:
    row = await ctx.deps.records.allocations.get(ctx.param("ident"))
    await ctx.deps.records.allocations.delete(row)
    return 204, None


@endpoint
async def node_allocation(ctx: Ctx) -> Any:
    """The node's allocation (Ironic: a 404 when it has none)."""
    fields = stored._parse_fields(RESOURCE, ctx, ctx.query({"fields"}).get("fields"))
    row = await ctx.deps.records.allocations.of_node(ctx.param("node"))
    return 200, RESOURCE.doc(ctx, row, fields or RESOURCE.shown_fields(ctx))


@endpoint
async def delete_node_allocation(ctx: Ctx) -> Any:
    row = await ctx.deps.records.allocations.of_node(ctx.param("node"))
    await ctx.deps.records.allocations.delete(row)
    return 204, None


routes = [
    Route("/v1/allocations", list_allocations, methods=["GET"]),
    Route("/v1/allocations", create_allocation, methods=["POST"]),
    Route("/v1/allocations/{ident}", show_allocation, methods=["GET"]),
    Route("/v1/allocations/{ident}", patch_allocation, methods=["PATCH"]),
    Route("/v1/allocations/{ident}", delete_allocation, methods=["DELETE"]),
    Route("/v1/nodes/{node}/allocation", node_allocation, methods=["GET"]),
    Route("/v1/nodes/{node}/allocation", delete_node_allocation, methods=["DELETE"]),
]
