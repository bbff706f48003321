"""`/v1/rules`: ironic-inspector's rules API (python-ironic-inspector-client's `rules.*`,
`openstack baremetal introspection rule ...`). It lists, shows and deletes only the rules
created through it; processing applies them with the Ironic-dialect ones (see
inspection_rules.py), at priority 0."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Conflict, Invalid
from ironsight.discoverd.api.base import Ctx
from ironsight.discoverd.rules.model import Rule
from ironsight.discoverd.rules.validate import parse_inspector, to_inspector


def _links(ctx: Ctx, uuid: str) -> list[dict[str, str]]:
    return [{"rel": "self", "href": f"{ctx.base_url}/v1/rules/{uuid}"}]


def _doc(ctx: Ctx, rule: Rule) -> dict[str, Any]:
    return {**to_inspector(rule), "links": _links(ctx, rule.uuid)}


@endpoint
async def create(ctx: Ctx) -> Any:
    ctx.query(set())
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("Invalid inspection rule: the body must be a JSON object")
    rule = parse_inspector(body)
    if any(r.uuid == rule.uuid for r in ctx.deps.rules.rules.built_in()):
        raise Conflict(f"Rule with UUID {rule.uuid} already exists (a built-in rule)")
    stored = await ctx.deps.rules.rules.store.create(rule)
    # 200 before API 1.6, as ironic-inspector answered then
    return (201 if ctx.at_least(6) else 200), _doc(ctx, stored)


@endpoint
async def list_rules(ctx: Ctx) -> Any:
    ctx.query(set())
    rules = await ctx.deps.rules.rules.store.list("inspector")
    return 200, {"rules": [{"uuid": r.uuid, "description": r.description, "scope": r.scope,
                            "links": _links(ctx, r.uuid)} for r in rules]}


@endpoint
async def show(ctx: Ctx) -> Any:
    ctx.query(set())
    return 200, _doc(ctx, await ctx.deps.rules.rules.store.get(ctx.param("uuid"), "inspector"))


@endpoint
async def delete_one(ctx: Ctx) -> Any:
    ctx.query(set())
    await ctx.deps.rules.rules.store.delete(ctx.param("uuid"), "inspector")
    return 204, None


@endpoint
async def delete_all(ctx: Ctx) -> Any:
    ctx.query(set())
    await ctx.deps.rules.rules.store.delete_all("inspector")
    return 204, None


routes = [
    Route("/v1/rules", list_rules, methods=["GET"]),
    Route("/v1/rules", create, methods=["POST"]),
    Route("/v1/rules", delete_all, methods=["DELETE"]),
    Route("/v1/rules/{uuid}", show, methods=["GET"]),
    Route("/v1/rules/{uuid}", delete_one, methods=["DELETE"]),
]
