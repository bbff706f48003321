"""Fleet queries (an ironsight extension): CEL over every node's document (fleet/).

`GET /v1/fleet/nodes?where=EXPR` (or `POST /v1/fleet/query` with the expression in the body,
for long ones) answers the matching nodes a page at a time; a bad expression is a 400 whose
message names its position. `GET /v1/fleet/nodes/{node}` is one node's whole document, the
reference for writing expressions.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import iterate_in_threadpool
from starlette.responses import StreamingResponse
from starlette.routing import Route

from ironsight.common.api.endpoint import endpoint
from ironsight.common.cel import CelError, Program
from ironsight.common.cel import compile as cel_compile
from ironsight.common.clock import utcnow
from ironsight.common.exceptions import Invalid, NotFound
from ironsight.discoverd.api.base import Ctx, parse_limit
from ironsight.discoverd.component_events import CHANGES, SEVERITIES, Filters
from ironsight.discoverd.fleet import drift, export, query
from ironsight.discoverd.fleet.index import FleetIndex


class QueryBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    where: str = Field(min_length=1)
    limit: int = Field(default=100, ge=1, le=1000)
    marker: str | None = None
    fields: list[str] | None = None


def compile_where(source: str) -> Program:
    try:
        return cel_compile(source)
    except CelError as exc:
        raise Invalid(f"Invalid value for where: {exc}") from None


def _index(ctx: Ctx) -> FleetIndex:
    if ctx.deps.fleet is None:
        raise NotFound("Fleet queries are not available on this service.")
    return ctx.deps.fleet


async def _answer(ctx: Ctx, where: str, limit: int, marker: str | None,
                  fields: tuple[str, ...], sort: tuple[str, bool] | None = None,
                  offset: int = 0) -> Any:
    program = compile_where(where)
    if sort is not None:
        if marker is not None:
            raise Invalid("marker and sort cannot be used together: a sorted answer is paged "
                          "by offset")
        verdict = await _index(ctx).verdict(program)  # a console page: as of now
        return 200, query.sorted_page(verdict, sort=sort, offset=offset, limit=limit,
                                      fields=fields)
    verdict = await _index(ctx).verdict(program, fresh=marker is None)
    return 200, query.page(verdict, limit=limit, marker=marker, fields=fields)


def _offset(params: dict[str, str]) -> int:
    raw = params.get("offset", "0")
    if not (raw.isascii() and raw.isdigit() and len(raw) < 10):
        raise Invalid(f"Invalid value for offset: {raw!r} (a whole number: the matching "
                      "nodes skipped, with sort)")
    return int(raw)


@endpoint
async def list_matching(ctx: Ctx) -> Any:
    """`where` (CEL, required), `limit` (1-1000, default 100), `marker` (a UUID: the page
    after it), `fields` (dotted names of the document; default: a summary); `sort` (a
    dotted name, `-` in front: descending) with `offset` instead of `marker`."""
    params = ctx.query({"where", "limit", "marker", "fields", "sort", "offset"})
    where = params.get("where")
    if not where:
        raise Invalid("Missing the where parameter: a CEL expression over the node document "
                      "(docs/fleet.md)")
    return await _answer(ctx, where, parse_limit(params), params.get("marker"),
                         query.parse_fields(params.get("fields")),
                         query.parse_sort(params.get("sort")), _offset(params))


@endpoint
async def post_query(ctx: Ctx) -> Any:
    ctx.query(set())
    body = QueryBody.model_validate(await ctx.body())
    fields = query.parse_fields(",".join(body.fields) if body.fields else None)
    return await _answer(ctx, body.where, body.limit, body.marker, fields)


@endpoint
async def show_document(ctx: Ctx) -> Any:
    ctx.query(set())
    index = _index(ctx)
    node = await ctx.deps.ironic.get_node(ctx.param("node"), fields="uuid")
    await index.refresh()
    doc = index.document(str(node["uuid"]))
    if doc is None:
        raise NotFound(f"Node {ctx.param('node')} could not be found.")
    return 200, doc


@endpoint
async def show_drift(ctx: Ctx) -> Any:
    """`vendor`, `product`: one model's group only."""
    params = ctx.query({"vendor", "product"})
    docs = await _index(ctx).snapshot()
    groups = await asyncio.to_thread(drift.drift, docs, vendor=params.get("vendor"),
                                     product=params.get("product"))
    return 200, {"groups": [g.as_dict() for g in groups], "min_group": drift.MIN_GROUP}


_UNITS = {"d": 86400, "h": 3600, "m": 60}


def parse_since(raw: str) -> dt.datetime:
    """An RFC 3339 time, or a span back from now: `30d`, `12h`, `90m`."""
    text = raw.strip()
    if text[:-1].isdigit() and text[-1:] in _UNITS and len(text) <= 8:
        return utcnow() - dt.timedelta(seconds=int(text[:-1]) * _UNITS[text[-1]])
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise Invalid(f"Invalid value for since: {raw!r} (an RFC 3339 time, or a span such "
                      "as 30d, 12h, 90m)") from None
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC).replace(tzinfo=None)
    return when


def _choice(params: dict[str, str], name: str, allowed: tuple[str, ...]) -> str | None:
    value = params.get(name)
    if value is not None and value not in allowed:
        raise Invalid(f"Invalid value for {name}: {value!r} (one of {', '.join(allowed)})")
    return value


@endpoint
async def list_events(ctx: Ctx) -> Any:
    """Component change events, newest first: `node` (UUID or name), `since`, `severity`
    (this one or worse), `component`, `change`, `limit`, `marker` (an event id)."""
    params = ctx.query({"node", "since", "severity", "component", "change", "limit",
                        "marker"})
    nodes: list[str] = []
    if params.get("node"):
        nodes.append(str((await ctx.deps.ironic.get_node(params["node"],
                                                        fields="uuid"))["uuid"]))
    marker = params.get("marker")
    if marker is not None and not (marker.isascii() and marker.isdigit() and len(marker) < 19):
        raise Invalid(f"Invalid value for marker: {marker!r} (an event id)")
    filters = Filters(nodes=nodes,
                      since=parse_since(params["since"]) if "since" in params else None,
                      severity=_choice(params, "severity", SEVERITIES),
                      component=params.get("component"),
                      change=_choice(params, "change", CHANGES))
    limit = parse_limit(params)
    events = await ctx.deps.processor.component_events.list(
        filters, limit=limit, marker=int(marker) if marker is not None else None)
    return 200, {"events": events,
                 "next_marker": events[-1]["id"] if len(events) == limit else None}


@endpoint
async def export_fleet(ctx: Ctx) -> Any:
    """`format` (ndjson, csv, components, netbox; default ndjson), `where` (CEL: only the
    matching nodes). Streamed: the answer starts before the last row is written."""
    params = ctx.query({"format", "where"})
    kind = params.get("format", "ndjson")
    if kind not in export.FORMATS:
        raise Invalid(f"Invalid value for format: {kind!r} (one of {', '.join(export.FORMATS)})")
    index = _index(ctx)
    docs: Sequence[Mapping[str, Any]]
    if params.get("where"):
        docs = (await index.verdict(compile_where(params["where"]))).matched
    else:
        docs = await index.snapshot()
    chunks = export.WRITERS[kind](docs)
    return StreamingResponse(iterate_in_threadpool(chunks), media_type=export.MEDIA_TYPES[kind])


routes = [
    Route("/v1/fleet/export", export_fleet, methods=["GET"]),
    Route("/v1/fleet/events", list_events, methods=["GET"]),
    Route("/v1/fleet/drift", show_drift, methods=["GET"]),
    Route("/v1/fleet/nodes", list_matching, methods=["GET"]),
    Route("/v1/fleet/query", post_query, methods=["POST"]),
    Route("/v1/fleet/nodes/{node}", show_document, methods=["GET"]),
]
