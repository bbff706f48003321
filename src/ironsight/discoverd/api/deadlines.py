"""`GET /v1/deadlines` (an ironsight extension): the step deadlines discoverd holds waiting
attempts to (deadlines.py), learned from this fleet's recent successful attempts, with the
settings they come from."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.clock import utcnow
from ironsight.discoverd.api.base import Ctx


@endpoint
async def list_deadlines(ctx: Ctx) -> Any:
    ctx.query(set())
    found = ctx.deps.deadlines
    conf = ctx.deps.conf.deadlines
    now = utcnow()
    stale = found is None or found.learned_at is None or (
        now - found.learned_at).total_seconds() >= conf.learn_interval
    learned = (await found.learn(now) if stale and found is not None
               else found.listed() if found is not None else [])
    return 200, {
        "enabled": conf.enabled, "factor": conf.factor, "min_seconds": conf.min_seconds,
        "max_seconds": conf.max_seconds, "samples": conf.samples,
        "min_samples": conf.min_samples, "steps": list(conf.steps),
        "learned_at": found.learned_at.isoformat() if found and found.learned_at else None,
        "deadlines": [d.as_dict() for d in learned]}


routes = [Route("/v1/deadlines", list_deadlines, methods=["GET"])]
