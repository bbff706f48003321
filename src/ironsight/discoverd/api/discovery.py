"""Auto-discovery's API (ironsight extensions; discovery.py): the discovered nodes' records,
the conflict inbox and its resolutions, the delivery manifest, the MACs that identify no
machine. A node's approval is the bare-metal API's (`/v1/discovery/approve`)."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.auth.identity import acting_user
from ironsight.common.exceptions import Invalid
from ironsight.discoverd import manifest
from ironsight.discoverd.api.base import Ctx, parse_limit
from ironsight.discoverd.conflicts import RESOLUTIONS
from ironsight.discoverd.discovery import OUTCOMES
from ironsight.discoverd.identity import BUILT_IN_NON_UNIQUE


@endpoint
async def summary(ctx: Ctx) -> Any:
    """Whether discovery is on, what it did in this replica, and its nodes' records."""
    ctx.query(set())
    discovery = ctx.deps.processor.discovery
    return 200, {"enabled": discovery.enabled,
                 "outcomes": {o: discovery.counts.get(o, 0) for o in OUTCOMES},
                 "nodes": sorted((await discovery.store.discovered()).values(),
                                 key=lambda r: r["created_at"])}


@endpoint
async def list_conflicts(ctx: Ctx) -> Any:
    """`all` (true: the resolved ones too), `limit`."""
    params = ctx.query({"all", "limit"})
    every = params.get("all", "false").lower()
    if every not in ("true", "false"):
        raise Invalid(f"Invalid value for all: {params['all']!r} (true or false)")
    found = await ctx.deps.processor.discovery.conflicts.list(unresolved=every == "false",
                                                             limit=parse_limit(params))
    return 200, {"conflicts": found}


def _conflict_id(ctx: Ctx) -> int:
    raw = ctx.param("conflict")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise Invalid(f"Invalid conflict id: {raw!r} (a number)")
    return int(raw)


@endpoint
async def show_conflict(ctx: Ctx) -> Any:
    ctx.query(set())
    view, _ = await ctx.deps.processor.discovery.conflicts.get(_conflict_id(ctx))
    return 200, view


@endpoint
async def resolve_conflict(ctx: Ctx) -> Any:
    """Body: `resolution` (same_machine, new_machine, ignore), `node` (same_machine),
    `on_behalf_of` (the person a service resolves for, as the console does: recorded beside
    the authenticated caller, never instead of it)."""
    ctx.query(set())
    body = await ctx.body()
    if not isinstance(body, dict) or set(body) - {"resolution", "node", "on_behalf_of"}:
        raise Invalid("The body must be a JSON object with 'resolution' and, for "
                      "same_machine, 'node' (and optionally 'on_behalf_of')")
    resolution, node = body.get("resolution"), body.get("node")
    if resolution not in RESOLUTIONS:
        raise Invalid(f"Invalid value for resolution: {resolution!r} (one of "
                      f"{', '.join(RESOLUTIONS)})")
    if node is not None and not isinstance(node, str):
        raise Invalid("Field 'node' must be a node UUID")
    return 200, await ctx.deps.processor.resolve_conflict(
        _conflict_id(ctx), resolution, node, _resolver(body.get("on_behalf_of")))


def _resolver(on_behalf_of: Any) -> str | None:
    """Who resolved: the caller, and whom it resolved for (`svc for alice`)."""
    user = acting_user()
    if on_behalf_of is None:
        return user
    if not isinstance(on_behalf_of, str) or not 0 < len(on_behalf_of) <= 128 or \
            not on_behalf_of.isprintable():
        raise Invalid("Field 'on_behalf_of' must be a user name (1 to 128 printable "
                      "characters)")
    return f"{user or 'anonymous'} for {on_behalf_of}"[:255]  # the column's size


@endpoint
async def import_manifest(ctx: Ctx) -> Any:
    """Body: `{"csv": "<the file>"}` (manifest.py's format). Every row checked, the
    password files too (on this host: discoverd reads them), before any is stored."""
    ctx.query(set())
    body = await ctx.body()
    if not isinstance(body, dict) or set(body) != {"csv"} or not isinstance(body["csv"], str):
        raise Invalid("The body must be a JSON object with one field, 'csv': the manifest")
    drivers = {*ctx.deps.conf.conductor.enabled_hardware_types, "fake"}
    entries = manifest.parse(body["csv"], drivers)
    errors = [e for e in (manifest.check_password_file(x) for x in entries) if e]
    if errors:
        raise manifest.ManifestError(errors)
    if not entries:
        raise Invalid("The manifest has no rows")
    added, replaced = await ctx.deps.processor.discovery.store.import_manifest(entries)
    return 200, {"added": added, "replaced": replaced}


@endpoint
async def manifest_status(ctx: Ctx) -> Any:
    """What arrived (with its node), what is missing, and the extras: discovered nodes
    that are on no manifest row."""
    ctx.query(set())
    store = ctx.deps.processor.discovery.store
    rows = await store.manifest_rows()
    arrived = [{"serial": r["serial"], "name": r["entry"].get("name"),
                "node_uuid": r["node_uuid"], "arrived_at": r["arrived_at"].isoformat()}
               for r in rows if r["node_uuid"]]
    missing = [{"serial": r["serial"], "name": r["entry"].get("name"),
                "macs": r["entry"].get("macs") or []} for r in rows if not r["node_uuid"]]
    extras = [{"node_uuid": n["node_uuid"], "serial": n["serial"],
               "source_address": n["source_address"], "created_at": n["created_at"]}
              for n in (await store.discovered()).values() if not n["manifest_serial"]]
    return 200, {"arrived": arrived, "missing": missing,
                 "extras": sorted(extras, key=lambda e: e["created_at"])}


@endpoint
async def non_unique_macs(ctx: Ctx) -> Any:
    ctx.query(set())
    conf = ctx.deps.conf.auto_discovery
    found = [{"mac": m, "source": "built-in", "reason": "a well-known shared BMC MAC"}
             for m in sorted(BUILT_IN_NON_UNIQUE)]
    found += [{"mac": m.lower(), "source": "configured",
               "reason": "[auto_discovery] non_unique_macs"} for m in conf.non_unique_macs]
    recorded = await ctx.deps.processor.discovery.store.non_unique()
    found += [{"mac": m, "source": "recorded", "reason": r} for m, r in sorted(recorded.items())]
    return 200, {"macs": found, "drivers": list(conf.non_unique_drivers)}


routes = [
    Route("/v1/discovery", summary, methods=["GET"]),
    Route("/v1/discovery/conflicts", list_conflicts, methods=["GET"]),
    Route("/v1/discovery/conflicts/{conflict}", show_conflict, methods=["GET"]),
    Route("/v1/discovery/conflicts/{conflict}", resolve_conflict, methods=["POST"]),
    Route("/v1/discovery/manifest", import_manifest, methods=["POST"]),
    Route("/v1/discovery/manifest", manifest_status, methods=["GET"]),
    Route("/v1/discovery/non_unique_macs", non_unique_macs, methods=["GET"]),
]
