"""`/v1/inspection_rules`: Ironic's inspection rules API (API 1.96), served by discoverd, where
rules run; the bare-metal API forwards its own `/v1/inspection_rules` here. Plus the dry run
(`POST /v1/inspection_rules/dry_run`, an ironsight extension).

Shapes, defaults and codes are Ironic's (docs/rules.md lists the differences): built-in rules
(`[inspection_rules] built_in_rules`) appear read-only with `built_in: true`; a rule reading an
inventory path that no stored inventory has, or a comparison whose positional args cannot
hold, is created with a `warnings` list. Rules are shown with their conditions and actions
as posted; a PATCH edits that shown form.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.pagination import next_link
from ironsight.common.exceptions import Conflict, Invalid, IronsightError, NotFound
from ironsight.common.ids import is_uuid_like
from ironsight.discoverd.api.base import Ctx
from ironsight.discoverd.rule_store import page, recent_inventories
from ironsight.discoverd.rules import jsonpatch
from ironsight.discoverd.rules.model import Facts, Rule
from ironsight.discoverd.rules.references import missing_paths
from ironsight.discoverd.rules.validate import (
    parse_inspector,
    parse_ironic,
    positional_warnings,
    to_ironic,
)

FIELDS = ("uuid", "description", "priority", "sensitive", "phase", "conditions", "actions",
          "created_at", "updated_at", "built_in", "links")
DEFAULT_FIELDS = ("uuid", "priority", "phase", "description")
BODY_FIELDS = ("uuid", "description", "priority", "sensitive", "phase", "conditions",
               "actions")
MAX_LIMIT = 1000
_BOOLS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False,
          "no": False, "off": False}


class BuiltInReadOnly(IronsightError):
    code = 403

    def __init__(self, uuid: str) -> None:
        super().__init__(f"Inspection rule {uuid} is built in ([inspection_rules] "
                         "built_in_rules): change it in that file, not through the API")


def _links(ctx: Ctx, uuid: str) -> list[dict[str, str]]:
    return [{"href": f"{ctx.base_url}/v1/inspection_rules/{uuid}", "rel": "self"},
            {"href": f"{ctx.base_url}/inspection_rules/{uuid}", "rel": "bookmark"}]


def _doc(ctx: Ctx, rule: Rule, fields: tuple[str, ...] | None = None) -> dict[str, Any]:
    doc = {**to_ironic(rule), "links": _links(ctx, rule.uuid)}
    if fields is None:
        return doc
    return {k: doc[k] for k in (*fields, "links") if k in doc}


def _fields(raw: str | None) -> tuple[str, ...] | None:
    if raw is None:
        return None
    wanted = tuple(f.strip() for f in raw.split(",") if f.strip())
    bad = [f for f in wanted if f not in FIELDS]
    if bad or not wanted:
        raise Invalid(f"fields: invalid field(s) {', '.join(bad) or raw!r} "
                      f"(known: {', '.join(FIELDS)})")
    return wanted


def _bool(name: str, raw: str) -> bool:
    try:
        return _BOOLS[raw.strip().lower()]
    except KeyError:
        raise Invalid(f"{name}: invalid value {raw!r} (true or false)") from None


def _limit(raw: str | None) -> int:
    if raw is None:
        return MAX_LIMIT
    try:
        limit = int(raw)
    except ValueError:
        raise Invalid(f"limit: invalid value {raw!r} (an integer)") from None
    if limit < 0:
        raise Invalid(f"limit: {limit} must be 0 or greater")
    return min(limit, MAX_LIMIT) or MAX_LIMIT


async def _all(ctx: Ctx) -> list[Rule]:
    """The Ironic dialect's rules: the stored ones and the built-in ones."""
    rule_set = ctx.deps.rules.rules
    return [*await rule_set.store.list("ironic"), *rule_set.built_in()]


def _built_in(ctx: Ctx, uuid: str) -> Rule | None:
    return next((r for r in ctx.deps.rules.rules.built_in() if r.uuid == uuid), None)


async def _find(ctx: Ctx, uuid: str) -> Rule:
    found = _built_in(ctx, uuid)
    if found is not None:
        return found
    return await ctx.deps.rules.rules.store.get(uuid, "ironic")


@endpoint
async def list_rules(ctx: Ctx) -> Any:
    params = ctx.query({"detail", "fields", "marker", "limit", "sort_key", "sort_dir", "phase"})
    detail = _bool("detail", params["detail"]) if "detail" in params else False
    fields = _fields(params.get("fields"))
    if detail and fields is not None:
        raise Invalid("Can not specify ?detail=True and fields in the same request.")
    phase = params.get("phase")
    if phase is not None and len(phase) > 16:
        raise Invalid("phase: at most 16 characters")
    limit = _limit(params.get("limit"))
    rules = [r for r in await _all(ctx) if phase is None or r.phase == phase]
    found, more = page(rules, sort_key=params.get("sort_key", "created_at"),
                       sort_dir=params.get("sort_dir", "asc"), marker=params.get("marker"),
                       limit=limit)
    shown = None if detail else fields or DEFAULT_FIELDS
    body: dict[str, Any] = {"inspection_rules": [_doc(ctx, r, shown) for r in found]}
    if more:
        body["next"] = next_link(ctx.base_url, "v1/inspection_rules", params, limit=limit,
                                 marker=found[-1].uuid)
    return 200, body


async def _warnings(ctx: Ctx, rule: Rule) -> list[str]:
    return [*positional_warnings(rule),
            *missing_paths(rule, await recent_inventories(ctx.deps.cache.db))]


@endpoint
async def create(ctx: Ctx) -> Any:
    ctx.query(set())
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("Invalid inspection rule: the body must be a JSON object")
    rule = parse_ironic(body)
    if _built_in(ctx, rule.uuid) is not None:
        raise Conflict(f"Inspection rule {rule.uuid} already exists (a built-in rule)")
    stored = await ctx.deps.rules.rules.store.create(rule)
    doc = _doc(ctx, stored)
    warnings = await _warnings(ctx, stored)
    if warnings:
        doc["warnings"] = warnings
    return 201, doc, {"Location": f"{ctx.base_url}/v1/inspection_rules/{stored.uuid}"}


@endpoint
async def show(ctx: Ctx) -> Any:
    params = ctx.query({"fields"})
    fields = _fields(params.get("fields"))
    return 200, _doc(ctx, await _find(ctx, ctx.param("uuid")), fields)


@endpoint
async def patch(ctx: Ctx) -> Any:
    ctx.query(set())
    uuid = ctx.param("uuid")
    if _built_in(ctx, uuid) is not None:
        raise BuiltInReadOnly(uuid)
    store = ctx.deps.rules.rules.store
    rule = await store.get(uuid, "ironic")
    ops = await ctx.body()
    current = to_ironic(rule, hide_sensitive=False)
    doc = jsonpatch.apply({k: current[k] for k in BODY_FIELDS if current.get(k) is not None},
                          ops)
    if doc.get("uuid", uuid) != uuid:
        raise Invalid("uuid: an inspection rule's UUID cannot be changed")
    if rule.sensitive and not doc.get("sensitive"):
        raise Invalid("sensitive: Inspection rules cannot have the sensitive flag unset.")
    new = parse_ironic({**doc, "uuid": uuid})
    stored = await store.replace(replace(new, created_at=rule.created_at))
    return 200, _doc(ctx, stored)


@endpoint
async def delete_one(ctx: Ctx) -> Any:
    ctx.query(set())
    uuid = ctx.param("uuid")
    if _built_in(ctx, uuid) is not None:
        raise BuiltInReadOnly(uuid)
    await ctx.deps.rules.rules.store.delete(uuid, "ironic")
    return 204, None


@endpoint
async def delete_all(ctx: Ctx) -> Any:
    ctx.query(set())
    await ctx.deps.rules.rules.store.delete_all("ironic")
    return 204, None


# --- dry run --------------------------------------------------------------------------------


def _inspector_body(body: dict[str, Any]) -> bool:
    """An inspector-dialect rule: its actions are named by `action`, its conditions read a
    `field` (Ironic's use `op` and `args`)."""
    items = [*(body.get("actions") or []), *(body.get("conditions") or [])]
    return any(isinstance(i, dict) and ("action" in i or "field" in i) for i in items)


async def _dry_run_rule(ctx: Ctx, given: Any) -> tuple[Rule, str | None]:
    if isinstance(given, str):
        if not is_uuid_like(given):
            raise Invalid(f"rule: {given!r} is neither a rule UUID nor a rule body")
        found = _built_in(ctx, given.lower())
        if found is None:
            found = await ctx.deps.rules.rules.store.get(given.lower())
        return found, found.uuid
    if isinstance(given, dict):
        rule = parse_inspector(given) if _inspector_body(given) else parse_ironic(given)
        return rule, None
    raise Invalid("rule: a rule UUID or a rule body (in either dialect) is required")


@endpoint
async def dry_run(ctx: Ctx) -> Any:
    """A rule against a node's latest stored data and its current bare-metal record; nothing
    is written anywhere and no `api-call` is made."""
    ctx.query(set())
    body = await ctx.body()
    if not isinstance(body, dict) or set(body) - {"node", "rule"}:
        raise Invalid("Expected an object with node and rule")
    ident = body.get("node")
    if not isinstance(ident, str) or not ident:
        raise Invalid("node: a node UUID or name is required")
    rule, rule_uuid = await _dry_run_rule(ctx, body.get("rule"))
    node = await ctx.deps.ironic.get_node(ident)
    uuid = str(node["uuid"])
    try:
        stored = await ctx.deps.cache.get_data(uuid, processed=True)
    except NotFound:
        raise NotFound(f"Node {uuid} has no stored introspection data to run a rule on"
                       ) from None
    stored = stored if isinstance(stored, dict) else {}
    inventory = stored.get("inventory") or {}
    plugin_data = {k: v for k, v in stored.items() if k not in ("inventory", "rules")}
    ports = await ctx.deps.ironic.list_ports(uuid)
    outcome = await ctx.deps.rules.run([rule], Facts(node=node, inventory=inventory,
                                                     plugin_data=plugin_data, ports=ports),
                                       node_uuid=uuid, live=False)
    trace = next((t for t in outcome.traces if t.uuid == rule.uuid), None)
    return 200, {
        "node": uuid, "rule": rule_uuid,
        "matched": bool(trace and trace.matched),
        "conditions": [c.to_dict() for c in trace.conditions] if trace else [],
        "actions": [a.to_dict() for a in trace.actions] if trace else [],
        "failure": outcome.failure,
        "warnings": [*(trace.warnings if trace else []), *positional_warnings(rule),
                     *missing_paths(rule, [inventory])]}


routes = [
    Route("/v1/inspection_rules", list_rules, methods=["GET"]),
    Route("/v1/inspection_rules", create, methods=["POST"]),
    Route("/v1/inspection_rules", delete_all, methods=["DELETE"]),
    Route("/v1/inspection_rules/dry_run", dry_run, methods=["POST"]),
    Route("/v1/inspection_rules/{uuid}", show, methods=["GET"]),
    Route("/v1/inspection_rules/{uuid}", patch, methods=["PATCH"]),
    Route("/v1/inspection_rules/{uuid}", delete_one, methods=["DELETE"]),
]
