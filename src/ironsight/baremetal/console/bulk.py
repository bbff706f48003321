"""Bulk actions: on the selected nodes or on all that match the view's filter. A first POST
shows the exact count to confirm; the second acts, node by node through the bare-metal API
as the user, and shows each node's result. "All that match" is worked out again when
confirmed: if the count changed meanwhile, nothing is done and the new count is shown to
confirm again."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ironsight.baremetal.console import fleet
from ironsight.baremetal.console.calls import Calls, path_of
from ironsight.baremetal.console.filters import View, parse
from ironsight.baremetal.console.pages import (
    Refused,
    checked_form,
    console_of,
    first,
    project_of,
    render,
)
from ironsight.common.auth.identity import Identity

TRAIT = re.compile(r"^(CUSTOM_[A-Z0-9_]{1,248}|[A-Z][A-Z0-9_]{0,254})$")
MAX_SELECTED = 10000
MAX_REASON = 255
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass(frozen=True)
class Plan:
    action: str
    scope: str  # "selected" or "matching"
    nodes: list[str]  # UUIDs (selected)
    view: View  # the filter (matching)
    trait: str
    reason: str


@dataclass(frozen=True)
class Result:
    uuid: str
    name: str | None
    ok: bool
    status: int
    message: str


def _plan(form: dict[str, Any], project: str | None) -> Plan:
    action = first(form, "action")
    if action not in fleet.ACTIONS:
        raise Refused(400, f"action: {action[:40]!r} is not one of "
                           f"{', '.join(fleet.ACTIONS)}.")
    scope = first(form, "scope", "selected")
    if scope not in ("selected", "matching"):
        raise Refused(400, f"scope: {scope[:20]!r} is not selected or matching.")
    nodes = [n for n in form.get("node", []) if isinstance(n, str)]
    bad = [n for n in nodes if not UUID.match(n)]
    if bad:
        raise Refused(400, f"node: {bad[0][:40]!r} is not a node UUID.")
    if len(nodes) > MAX_SELECTED:
        raise Refused(400, f"node: more than {MAX_SELECTED} selected; use all that match.")
    if scope == "selected" and not nodes:
        raise Refused(400, "node: no node is selected.")
    trait = first(form, "trait").strip()
    if action == "add_trait" and not TRAIT.match(trait):
        raise Refused(400, f"trait: {trait[:60]!r} is not a trait (upper case, digits and _; "
                           "a custom one starts with CUSTOM_).")
    reason = first(form, "reason").strip()
    if len(reason) > MAX_REASON:
        raise Refused(400, f"reason: longer than {MAX_REASON} characters.")
    view = parse({k: first(form, "f_" + k) for k in
                  ("state", "driver", "maintenance", "trait", "owner", "vendor",
                   "min_memory_gib", "min_cpus", "min_gpus", "where")}, project)
    if view.errors:
        raise Refused(400, "; ".join(view.errors))
    return Plan(action, scope, list(dict.fromkeys(nodes)), view, trait, reason)


async def _targets(calls: Calls, plan: Plan) -> tuple[list[dict[str, Any]], str | None]:
    if plan.scope == "matching":
        return await fleet.matching(calls, plan.view.expression())
    return [{"uuid": u, "name": None} for u in plan.nodes], None


async def confirm(request: Request) -> Response:
    form = await checked_form(request)
    plan = _plan(form, project_of(request))
    calls = console_of(request).calls
    if plan.scope == "matching":
        total, problem = await fleet.count(calls, plan.view.expression())
        if problem:
            raise Refused(400, problem)
    else:
        total = len(plan.nodes)
    return render(request, "bulk_confirm.html", plan=plan, total=total,
                  label=fleet.ACTIONS[plan.action], filter_params=plan.view.filter_params())


async def run(request: Request) -> Response:
    form = await checked_form(request)
    plan = _plan(form, project_of(request))
    console = console_of(request)
    expected = first(form, "expected")
    targets, problem = await _targets(console.calls, plan)
    if problem:
        raise Refused(400, problem)
    if str(len(targets)) != expected:
        return render(request, "bulk_confirm.html", code=409, plan=plan, total=len(targets),
                      label=fleet.ACTIONS[plan.action],
                      filter_params=plan.view.filter_params(),
                      changed=f"The filter now matches {len(targets)} nodes, not {expected}: "
                              "nothing was done. Confirm again.")
    session = request.scope["ironsight.console_session"]
    results = await act(console.calls, session.identity, plan, targets,
                        console.conf.console.bulk_concurrency)
    return render(request, "bulk_result.html", plan=plan, label=fleet.ACTIONS[plan.action],
                  results=results, done=sum(r.ok for r in results))


async def act(calls: Calls, identity: Identity, plan: Plan, targets: list[dict[str, Any]],
              concurrency: int) -> list[Result]:
    gate = asyncio.Semaphore(concurrency)
    reason = plan.reason or f"set from the console by {identity.user or 'anonymous'}"

    async def one(target: dict[str, Any]) -> Result:
        uuid = str(target["uuid"])
        node = path_of("v1", "nodes", uuid)
        async with gate:
            if plan.action in ("manage", "inspect", "abort", "provide"):
                reply = await calls.bm(identity, "PUT", node + "/states/provision",
                                       body={"target": plan.action})
            elif plan.action == "maintenance_on":
                reply = await calls.bm(identity, "PUT", node + "/maintenance",
                                       body={"reason": reason})
            elif plan.action == "maintenance_off":
                reply = await calls.bm(identity, "DELETE", node + "/maintenance")
            else:
                reply = await calls.bm(identity, "PUT", node + path_of("traits", plan.trait))
        return Result(uuid, target.get("name"), reply.ok, reply.status,
                      "done" if reply.ok else reply.error)

    return list(await asyncio.gather(*(one(t) for t in targets)))
