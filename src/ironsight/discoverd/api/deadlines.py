"""`GET /v1/deadlines` (an ironsight extension): the step deadlines discoverd holds waiting
attempts to (deadlines.py), learned from this fleet's recent successful attempts, with the
settings they come from; and `GET /v1/board`, the running attempts against them."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.clock import utcnow
from ironsight.discoverd.api.base import Ctx, parse_limit
from ironsight.discoverd.board import board, running


@endpoint
async def list_deadlines(ctx: Ctx) -> Any:
    ctx.query(set())
    found = ctx.deps.deadlines
    conf = ctx.deps.conf.deadlines
    learned = (await found.current(utcnow())).listed() if found is not None else []
    return 200, {
        "enabled": conf.enabled, "factor": conf.factor, "min_seconds": conf.min_seconds,
        "max_seconds": conf.max_seconds, "samples": conf.samples,
        "min_samples": conf.min_samples, "steps": list(conf.steps),
        "learned_at": found.learned_at.isoformat() if found and found.learned_at else None,
        "deadlines": [d.as_dict() for d in learned]}




@endpoint
async def inspection_board(ctx: Ctx) -> Any:
    """`GET /v1/board?limit=50` (an ironsight extension, a reader may): the running attempts
    by the step each waits for, and the `limit` quiet the longest, first (board.py)."""
    limit = parse_limit(ctx.query({"limit"}), default=50)
    now = utcnow()
    found = await running(ctx.deps.cache.db, ctx.deps.deadlines, now)
    return 200, board(found, now, limit)


routes = [Route("/v1/deadlines", list_deadlines, methods=["GET"]),
          Route("/v1/board", inspection_board, methods=["GET"])]
