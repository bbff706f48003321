"""Discovered nodes (ironsight only; Ironic keeps its discovery mark in plugin data and has
no approval): discoverd looks reports up over every node and creates the nodes of machines
nobody enrolled here, in one transaction with the check (conductor/discovery.py); an admin
approves or rejects them. Ironic's node documents are unchanged: the approval is read here
and filtered by `GET /v1/nodes?auto_discovered=true`."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import schemas
from ironsight.baremetal.api.base import Ctx, parse_limit
from ironsight.baremetal.api.node_extras import check_trait
from ironsight.baremetal.conductor.discovery import STATUSES, DiscoveryConflict
from ironsight.common.api.endpoint import endpoint
from ironsight.common.bmc import host_of
from ironsight.common.exceptions import Invalid


def _hosts(addresses: list[str]) -> list[str]:
    hosts = []
    for address in addresses:
        host = host_of(address)
        if host is None:
            raise Invalid(f"Invalid value for bmc_addresses: {address!r} (an IP address or "
                          "a host name)")
        hosts.append(host)
    return hosts


@endpoint
async def list_discovered(ctx: Ctx) -> Any:
    """`status` (pending, approved, rejected), `limit`, `marker`."""
    params = ctx.query({"status", "limit", "marker"})
    status = params.get("status")
    if status is not None and status not in STATUSES:
        raise Invalid(f"Invalid value for status: {status!r} (one of {', '.join(STATUSES)})")
    limit = parse_limit(params.get("limit"), ctx.deps.conf.api.max_limit)
    discovery = ctx.deps.conductor.discovery
    found = await discovery.list(status=status, limit=limit, marker=params.get("marker"))
    return 200, {"nodes": found, "counts": await discovery.count()}


@endpoint
async def lookup(ctx: Ctx) -> Any:
    ctx.query(set())
    body = schemas.DiscoveryLookup.model_validate(await ctx.body())
    found = await ctx.deps.conductor.discovery.lookup(body.macs, _hosts(body.bmc_addresses))
    return 200, {"matches": [m.to_dict() for m in found]}


@endpoint
async def create(ctx: Ctx) -> Any:
    """201 and the node; 200 and the matching nodes when known nodes match (nothing
    created); 429 beyond `max_pending`."""
    ctx.query(set())
    body = schemas.DiscoveredNode.model_validate(await ctx.body())
    traits = [check_trait(t) for t in body.traits]
    values = body.node.model_dump(exclude_none=True)
    ctx.deps.records.check_driver(values["driver"], values)
    try:
        row = await ctx.deps.conductor.discovery.create(
            values, macs=body.macs, bmc_hosts=_hosts(body.bmc_addresses), status=body.status,
            max_pending=body.max_pending, event=body.event)
    except DiscoveryConflict as exc:
        return 200, {"node": None, "matches": [m.to_dict() for m in exc.matches]}
    if traits:
        await ctx.deps.records.change_traits(row["uuid"], lambda _: traits)
    return 201, {"node": {"uuid": row["uuid"], "name": row.get("name"),
                          "discovery": row["discovery"], "driver": row["driver"]},
                 "matches": []}


async def _decide(ctx: Ctx, status: str) -> Any:
    ctx.query(set())
    body = schemas.DiscoveryDecision.model_validate(await ctx.body())
    done = await ctx.deps.conductor.discovery.set_status(body.nodes, status)
    return 200, {"nodes": [{"uuid": r["uuid"], "name": r.get("name"),
                            "discovery": r["discovery"]} for r in done]}


@endpoint
async def approve(ctx: Ctx) -> Any:
    return await _decide(ctx, "approved")


@endpoint
async def reject(ctx: Ctx) -> Any:
    return await _decide(ctx, "rejected")


routes = [
    Route("/v1/discovery/nodes", list_discovered, methods=["GET"]),
    Route("/v1/discovery/nodes", create, methods=["POST"]),
    Route("/v1/discovery/lookup", lookup, methods=["POST"]),
    Route("/v1/discovery/approve", approve, methods=["POST"]),
    Route("/v1/discovery/reject", reject, methods=["POST"]),
]
