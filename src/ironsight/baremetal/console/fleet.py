"""The fleet table: every node that matches the view's filter, a page at a time, sorted and
with the columns chosen, all worked out by discoverd's fleet index (one CEL query)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ironsight.baremetal.console import filters
from ironsight.baremetal.console.calls import Calls
from ironsight.baremetal.console.pages import console_of, project_of, render

MAX_PAGE = 1000  # discoverd's largest page
ACTIONS = {
    "manage": "Manage",
    "inspect": "Inspect",
    "abort": "Abort",
    "provide": "Provide",
    "maintenance_on": "Maintenance on",
    "maintenance_off": "Maintenance off",
    "add_trait": "Add trait",
}


@dataclass
class Table:
    view: filters.View
    rows: list[dict[str, Any]] = field(default_factory=list)
    matched: int = 0
    evaluated: int = 0
    errors: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None  # why there are no rows (a bad expression, discoverd away)

    @property
    def pages(self) -> int:
        return max(1, -(-self.matched // self.view.per_page))


def _fields(view: filters.View) -> list[str]:
    wanted = ["uuid", "name", *(filters.COLUMNS[c][1] for c in view.columns)]
    return list(dict.fromkeys(wanted))


async def query(calls: Calls, view: filters.View) -> Table:
    table = Table(view)
    params = {"where": view.expression(), "limit": str(view.per_page),
              "offset": str((view.page - 1) * view.per_page),
              "sort": ("-" if view.desc else "") + filters.COLUMNS[view.sort][1],
              "fields": ",".join(_fields(view))}
    reply = await calls.discoverd("GET", "fleet/nodes", params)
    if not reply.ok:
        table.problem = reply.error
        return table
    data = reply.data
    table.matched, table.evaluated = data["matched"], data["evaluated"]
    table.errors = data["errors"]
    table.rows = [{"uuid": n["uuid"], "name": n.get("name"),
                   # discoverd answers each asked field under its dotted name
                   "cells": {c: n.get(filters.COLUMNS[c][1]) for c in view.columns}}
                  for n in data["nodes"]]
    return table


async def matching(calls: Calls, expression: str) -> tuple[list[dict[str, Any]], str | None]:
    """Every node the expression matches ({uuid, name}), in UUID order; or the problem."""
    found: list[dict[str, Any]] = []
    marker: str | None = None
    while True:
        params = {"where": expression, "limit": str(MAX_PAGE), "fields": "uuid,name"}
        if marker:
            params["marker"] = marker
        reply = await calls.discoverd("GET", "fleet/nodes", params)
        if not reply.ok:
            return [], reply.error
        found += reply.data["nodes"]
        marker = reply.data.get("next_marker")
        if not marker:
            return found, None


async def count(calls: Calls, expression: str) -> tuple[int, str | None]:
    reply = await calls.discoverd("GET", "fleet/nodes",
                                  {"where": expression, "limit": "1", "fields": "uuid"})
    return (reply.data["matched"], None) if reply.ok else (0, reply.error)


async def fleet_page(request: Request) -> Response:
    console = console_of(request)
    view = filters.parse(request.query_params, project_of(request))
    table = await query(console.calls, view)
    return render(request, "fleet.html", view=view, table=table, columns=filters.COLUMNS,
                  states=filters.STATES, actions=ACTIONS, per_page_choices=filters.PER_PAGE)
