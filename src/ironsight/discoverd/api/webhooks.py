"""The webhook outbox's deliveries (an ironsight extension; webhooks.py), so that an
operator sees what reached the receivers, what is being retried and what failed, and can
send a failed one again (admin)."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid, NotFound
from ironsight.discoverd.api.base import Ctx, parse_limit
from ironsight.discoverd.webhooks import STATUSES, Webhooks

MAX_ID = 2**31 - 1  # the column's range on PostgreSQL


def _webhooks(ctx: Ctx) -> Webhooks:
    if ctx.deps.webhooks is None:
        raise NotFound("Webhooks are not available in this service")
    return ctx.deps.webhooks


def _number(raw: str, what: str) -> int:
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and 0 < int(raw) <= MAX_ID):
        raise Invalid(f"Invalid value for {what}: {raw!r} (a delivery id)")
    return int(raw)


@endpoint
async def list_deliveries(ctx: Ctx) -> Any:
    """Newest first. `status` (pending, delivered, failed), `limit` (1-1000, default 100),
    `marker` (the last id of the previous page), `payload` (true: each with its payload)."""
    params = ctx.query({"status", "limit", "marker", "payload"})
    status = params.get("status")
    if status is not None and status not in STATUSES:
        raise Invalid(f"Invalid value for status: {status!r} (one of {', '.join(STATUSES)})")
    limit = parse_limit(params)
    marker = _number(params["marker"], "marker") if "marker" in params else None
    payload = params.get("payload", "false").lower()
    if payload not in ("true", "false"):
        raise Invalid(f"Invalid value for payload: {params['payload']!r} (true or false)")
    found = await _webhooks(ctx).list(status, limit, marker, payload=payload == "true")
    return 200, {"deliveries": found,
                 "next_marker": found[-1]["id"] if len(found) == limit else None}


@endpoint
async def show_delivery(ctx: Ctx) -> Any:
    ctx.query(set())
    return 200, await _webhooks(ctx).get(_number(ctx.param("delivery"), "delivery id"))


@endpoint
async def retry_delivery(ctx: Ctx) -> Any:
    """A failed or pending delivery due now (its attempts kept); 409 for a delivered one."""
    ctx.query(set())
    return 200, await _webhooks(ctx).retry(_number(ctx.param("delivery"), "delivery id"))


routes = [
    Route("/v1/webhooks/deliveries", list_deliveries, methods=["GET"]),
    Route("/v1/webhooks/deliveries/{delivery}", show_delivery, methods=["GET"]),
    Route("/v1/webhooks/deliveries/{delivery}/retry", retry_delivery, methods=["POST"]),
]
