"""`/v1/runbooks` (1.92): stored and validated; ironsight runs no clean or service steps.
From 1.112 a runbook has traits of its own (`/v1/runbooks/{ident}/traits`) and its name
need no longer be a trait."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import stored
from ironsight.baremetal.api.base import Ctx
from ironsight.baremetal.api.inventory_schemas import RunbookFields, check_trait
from ironsight.baremetal.api.node_extras import check_trait as check_api_trait
from ironsight.baremetal.conductor import inventory
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid

KIND = inventory.RUNBOOKS
TRAITS_MINOR = 112


def _check_name(ctx: Ctx, values: stored.Row) -> None:
    """Below 1.112 the name was the runbook's trait, so it must look like one."""
    if not ctx.at_least(TRAITS_MINOR):
        try:
            check_trait(values["name"])
        except ValueError as exc:
            raise Invalid(f"name: {exc}") from None


RESOURCE = stored.Resource(
    kind=KIND, collection="runbooks", minor=92,
    fields={"uuid": 92, "name": 92, "steps": 92, "disable_ramdisk": 92, "public": 92,
            "owner": 92, "description": 112, "traits": 112, "extra": 92, "created_at": 92,
            "updated_at": 92},
    list_fields=("uuid", "name"),
    sort_keys=frozenset({"id", "uuid", "name", "owner", "created_at", "updated_at"}),
    model=RunbookFields,
    patchable=frozenset({"name", "steps", "disable_ramdisk", "public", "owner",
                         "description", "extra"}),
    ident="runbook_ident",
    output_only=frozenset({"traits"}),
    check_values=_check_name, project_list="owner_or_public")


async def _change(ctx: Ctx, change: Any) -> None:
    ident = ctx.param("ident")
    RESOURCE.check_ident(ident)
    await ctx.deps.records.inventory.change(KIND, ident, lambda row: {
        "traits": change(list(row["traits"] or []))})


@endpoint
async def get_traits(ctx: Ctx) -> Any:
    row = await stored.get_row(RESOURCE, ctx, ctx.param("ident"))
    return 200, {"traits": list(row["traits"] or [])}


@endpoint
async def put_traits(ctx: Ctx) -> Any:
    body = await ctx.body()
    traits = body.get("traits") if isinstance(body, dict) else None
    if not isinstance(body, dict) or set(body) != {"traits"} or not isinstance(traits, list):
        raise Invalid("A single runbook trait may be added via PUT /v1/runbooks/<runbook "
                      "identifier>/traits/<trait> with no body, or all runbook traits may be "
                      "replaced via PUT /v1/runbooks/<runbook identifier>/traits with the "
                      "list of traits specified in the request body.")
    wanted = list(dict.fromkeys(check_api_trait(t) for t in traits))
    await _change(ctx, lambda _: wanted)
    return 204, None


@endpoint
async def put_trait(ctx: Ctx) -> Any:
    trait = check_api_trait(ctx.param("trait"))
    if int(ctx.request.headers.get("content-length") or 0) and await ctx.body():
        raise Invalid("No body should be provided when adding a trait")
    await _change(ctx, lambda cur: cur if trait in cur else [*cur, trait])
    location = f"{ctx.base_url}/v1/runbooks/{ctx.param('ident')}/traits/{trait}"
    return 204, None, {"Location": location}


@endpoint
async def delete_traits(ctx: Ctx) -> Any:
    await _change(ctx, lambda _: [])
    return 204, None


@endpoint
async def delete_trait(ctx: Ctx) -> Any:
    """Removing a trait the runbook does not have is a no-op (Ironic 39: 204)."""
    trait = ctx.param("trait")
    await _change(ctx, lambda cur: [t for t in cur if t != trait])
    return 204, None


_TRAITS = "/v1/runbooks/{ident}/traits"
routes = [*stored.build(RESOURCE),
          Route(_TRAITS, get_traits, methods=["GET"]),
          Route(_TRAITS, put_traits, methods=["PUT"]),
          Route(_TRAITS, delete_traits, methods=["DELETE"]),
          Route(_TRAITS + "/{trait}", put_trait, methods=["PUT"]),
          Route(_TRAITS + "/{trait}", delete_trait, methods=["DELETE"])]
