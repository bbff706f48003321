"""The discovery inbox: machines discovered and waiting for an operator (pending), the
delivery manifest's state (arrived, missing, extras) and open conflicts; approve and reject
go to the bare-metal API as the user (admins only, as there), conflicts are resolved by
discoverd."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ironsight.baremetal.console.calls import path_of
from ironsight.baremetal.console.pages import (
    PREFIX,
    Refused,
    checked_form,
    console_of,
    first,
    fleet_wide,
    render,
)
from ironsight.common.auth.identity import Role

RESOLUTIONS = ("same_machine", "new_machine", "ignore")
STATUSES = ("pending", "approved", "rejected")


async def inbox(request: Request) -> Response:
    fleet_wide(request)
    calls = console_of(request).calls
    identity = request.scope["ironsight.console_session"].identity
    status = request.query_params.get("status", "pending")
    if status not in STATUSES:
        raise Refused(400, f"status: {status[:20]!r} is not one of {', '.join(STATUSES)}.")
    nodes, manifest, conflicts = await asyncio.gather(
        calls.bm(identity, "GET", "/v1/discovery/nodes", {"status": status, "limit": "1000"}),
        calls.discoverd("GET", "discovery/manifest"),
        calls.discoverd("GET", "discovery/conflicts"))
    problems = [r.error for r in (nodes, manifest, conflicts) if not r.ok]
    return render(request, "inbox.html", status=status, statuses=STATUSES,
                  nodes=nodes.data.get("nodes", []) if nodes.ok else [],
                  counts=nodes.data.get("counts", {}) if nodes.ok else {},
                  manifest=manifest.data if manifest.ok else None,
                  conflicts=conflicts.data.get("conflicts", []) if conflicts.ok else [],
                  resolutions=RESOLUTIONS, problems=problems,
                  message=request.query_params.get("done", "")[:300])


async def decide(request: Request) -> Response:
    """Approve or reject the chosen discovered nodes."""
    fleet_wide(request)
    form = await checked_form(request, role=Role.ADMIN)
    decision = request.path_params["decision"]
    nodes = [n for n in form.get("node", []) if isinstance(n, str) and n]
    if not nodes:
        raise Refused(400, "node: no node is selected.")
    identity = request.scope["ironsight.console_session"].identity
    reply = await console_of(request).calls.bm(identity, "POST",
                                               path_of("v1", "discovery", decision),
                                               body={"nodes": nodes})
    if not reply.ok:
        raise Refused(reply.status, reply.error)
    verb = "Approved" if decision == "approve" else "Rejected"
    return RedirectResponse(f"{PREFIX}/discovery?done={verb}+{len(reply.data['nodes'])}+node(s)",
                            status_code=303)


async def resolve(request: Request) -> Response:
    """Resolving is discoverd's, by the bare-metal service's own user of it: admins only,
    as in discoverd's API."""
    fleet_wide(request)
    form = await checked_form(request, role=Role.ADMIN)
    conflict = request.path_params["conflict"]
    if not conflict.isdigit() or len(conflict) > 18:
        raise Refused(400, f"conflict: {conflict[:20]!r} is not a conflict's number.")
    resolution = first(form, "resolution")
    if resolution not in RESOLUTIONS:
        raise Refused(400, f"resolution: {resolution[:30]!r} is not one of "
                           f"{', '.join(RESOLUTIONS)}.")
    body: dict[str, str] = {"resolution": resolution}
    user = request.scope["ironsight.console_session"].user
    if user:  # recorded by discoverd beside its caller, the service (noauth: nobody)
        body["on_behalf_of"] = user
    if first(form, "node"):
        body["node"] = first(form, "node")
    reply = await console_of(request).calls.discoverd(
        "POST", path_of("discovery", "conflicts", conflict), body=body)
    if reply.status == 403:
        raise Refused(403, "discoverd refused the bare-metal service's own user of it "
                           "([discoverd] username): resolving conflicts from the console needs "
                           f"that user to have the admin role in discoverd. ({reply.error})")
    if not reply.ok:
        raise Refused(reply.status, reply.error)
    return RedirectResponse(f"{PREFIX}/discovery?done=Conflict+{conflict}+resolved",
                            status_code=303)
