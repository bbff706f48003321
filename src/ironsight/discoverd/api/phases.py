"""`POST /v1/phases` (an ironsight extension): steps of inspection attempts that the
bare-metal conductor took when it boots the nodes itself (diagnosis.CONDUCTOR_PHASES: its
power actions, its virtual media), for their timelines. The conductor gathers them and sends
those of all its nodes every fraction of a second in one request, so a fleet's inspection
does not pay a request per step: `{"nodes": [{"uuid", "phases": [{"phase", "at",
"details"}, ...]}, ...]}`. Checked whole first (a 400 names the field), then written in one
transaction; steps of a node without an introspection are dropped, and the answer lists the
nodes whose steps were written."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.routing import Route

from ironsight.common.api.body import parse_json, read_body
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid, IronsightError
from ironsight.common.ids import is_uuid_like
from ironsight.discoverd import diagnosis
from ironsight.discoverd.api.base import Ctx
from ironsight.discoverd.timeline import Step

SIZE = 2 * 1024 * 1024
MAX_NODES = 1000
MAX_STEPS = 8


@endpoint
async def add_phases(ctx: Ctx) -> Any:
    body = parse_json(await read_body(ctx.request, SIZE, "Phases"),
                      ctx.deps.conf.introspection.max_json_depth, "Phases")
    nodes = body.get("nodes") if isinstance(body, dict) else None
    if not isinstance(nodes, list) or not 0 < len(nodes) <= MAX_NODES or set(body) != {"nodes"}:
        raise Invalid(f"The body must be {{\"nodes\": [...]}} with 1 to {MAX_NODES} nodes")
    found: dict[str, list[Step]] = {}
    for n, node in enumerate(nodes):
        where = f"nodes[{n}]"
        if not isinstance(node, dict) or set(node) != {"uuid", "phases"}:
            raise Invalid(f"{where} must be an object with uuid and phases")
        if not isinstance(node["uuid"], str) or not is_uuid_like(node["uuid"]):
            raise Invalid(f"Invalid value for {where}.uuid: {node['uuid']!r} (a node UUID)")
        steps = node["phases"]
        if not isinstance(steps, list) or not 0 < len(steps) <= MAX_STEPS:
            raise Invalid(f"{where}.phases must be a list of 1 to {MAX_STEPS} steps")
        found.setdefault(node["uuid"].lower(), []).extend(
            _step(f"{where}.phases[{i}]", step) for i, step in enumerate(steps))
    recorded = await ctx.deps.cache.timeline.record_bulk("conductor", found)
    if recorded is None:
        raise IronsightError("The steps could not be recorded now; please retry later",
                             code=503)
    return 202, {"recorded": recorded}


def _step(where: str, step: Any) -> Step:
    if not isinstance(step, dict) or set(step) - {"phase", "at", "details"}:
        raise Invalid(f"{where} must be an object with phase, at and details")
    phase, details, at = step.get("phase"), step.get("details"), step.get("at")
    if phase not in diagnosis.CONDUCTOR_PHASES:
        raise Invalid(f"Invalid value for {where}.phase: {phase!r} (one of "
                      f"{', '.join(diagnosis.CONDUCTOR_PHASES)})")
    if details is not None and not isinstance(details, dict):
        raise Invalid(f"Field '{where}.details' must be a JSON object")
    when = None
    if at is not None:
        try:
            when = dt.datetime.fromisoformat(str(at))
        except ValueError:
            raise Invalid(f"Invalid value for {where}.at: {at!r} (ISO 8601)") from None
        if when.tzinfo is not None:
            when = when.astimezone(dt.UTC).replace(tzinfo=None)
    return phase, details, when


routes = [Route("/v1/phases", add_phases, methods=["POST"])]
