"""A node's page: its summary and last error, its hardware by tab (from its fleet document:
the latest inspection's inventory and what was derived from it), its inspection attempts
with their timelines and ramdisk logs, the rules that ran, its history, the hardware
difference between two stored inspections, and side-by-side comparison of nodes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ironsight.baremetal.console.calls import Calls, path_of
from ironsight.baremetal.console.pages import Refused, console_of, project_of, render
from ironsight.common.dotted import pick

TABS = {"summary": "Summary", "cpu": "CPU", "memory": "Memory", "disks": "Disks",
        "nics": "NICs", "pci": "PCI & GPUs", "bmc": "BMC", "attempts": "Inspections",
        "rules": "Rules", "history": "History", "diff": "Changes"}
MAX_COMPARE = 8
# what the comparison shows, in rows: (label, dotted field of the document)
COMPARED = (("Name", "name"), ("State", "provision_state"), ("Driver", "driver"),
            ("Vendor", "hardware.vendor"), ("Product", "hardware.product"),
            ("Serial", "hardware.serial"), ("BIOS", "hardware.bios_version"),
            ("CPU model", "hardware.cpu_model"), ("CPUs", "hardware.cpu_count"),
            ("Architecture", "hardware.cpu_architecture"),
            ("Memory GiB", "hardware.memory_gib"), ("DIMMs", "hardware.dimm_count"),
            ("Disks", "hardware.disk_count"), ("Disk GB", "hardware.disk_total_gb"),
            ("NICs", "hardware.nic_count"), ("NIC speeds", "hardware.nic_speeds_mbps"),
            ("GPUs", "hardware.gpu_count"), ("Switches", "hardware.switches"),
            ("Traits", "traits"), ("Inspected", "inspected_at"))


NODE_TABS = ("summary", "history")  # what the API shows of a node its project only leases


async def _node(calls: Calls, request: Request, ident: str, *,
                hardware: bool = False) -> dict[str, Any]:
    """The node as the user may see it (the API's 404 if not); with `hardware`, only if the
    user may also read its hardware and inspections."""
    reply = await calls.bm(request.scope["ironsight.console_session"].identity, "GET",
                           path_of("v1", "nodes", ident))
    if not reply.ok:
        raise Refused(reply.status, reply.error)
    node: dict[str, Any] = reply.data
    if hardware and not hardware_readable(request, node):
        raise Refused(403, f"The hardware and inspections of node "
                           f"{node.get('name') or node['uuid']} are its owner's to read: your "
                           f"project {project_of(request)!r} leases it (as the API's policy "
                           "baremetal:node:inventory:get).")
    return node


def hardware_readable(request: Request, node: Mapping[str, Any]) -> bool:
    """discoverd's answers are read as the service: the console applies the API's rule that a
    node's inventory is for the whole fleet's users and its owner's, not its lessee's."""
    project = project_of(request)
    return project is None or node.get("owner") == project


async def _latest(calls: Calls, uuid: str) -> dict[str, Any] | None:
    """The node's latest inspection attempt (None: none, or discoverd did not answer)."""
    reply = await calls.discoverd("GET", path_of("introspection", uuid, "attempts"))
    found: dict[str, Any] | None = reply.data["attempts"][-1] \
        if reply.ok and reply.data["attempts"] else None
    return found


async def _document(calls: Calls, uuid: str) -> tuple[dict[str, Any], str | None]:
    reply = await calls.discoverd("GET", path_of("fleet", "nodes", uuid))
    return (reply.data, None) if reply.ok else ({}, reply.error)


async def node_page(request: Request) -> Response:
    calls = console_of(request).calls
    identity = request.scope["ironsight.console_session"].identity
    tab = request.query_params.get("tab", "summary")
    if tab not in TABS:
        raise Refused(404, f"tab: {tab[:30]!r} is not one of {', '.join(TABS)}.")
    node = await _node(calls, request, request.path_params["node"],
                       hardware=tab not in NODE_TABS)
    uuid = node["uuid"]
    readable = hardware_readable(request, node)
    tabs = TABS if readable else {t: TABS[t] for t in NODE_TABS}
    context: dict[str, Any] = {"node": node, "tab": tab, "tabs": tabs, "problem": None,
                               "latest": None}
    if tab == "summary":
        ports = await calls.bm(identity, "GET", path_of("v1", "nodes", uuid, "ports"),
                               {"detail": "True"})
        context["ports"] = ports.data.get("ports", []) if ports.ok else []
        if readable:
            context["latest"] = await _latest(calls, uuid)
    elif tab in ("cpu", "memory", "disks", "nics", "pci", "bmc", "rules"):
        context["doc"], context["problem"] = await _document(calls, uuid)
        context["inventory"] = context["doc"].get("inventory", {})
        context["hardware"] = context["doc"].get("hardware", {})
    elif tab == "attempts":
        reply = await calls.discoverd("GET", path_of("introspection", uuid, "attempts"))
        context["attempts"] = list(reversed(reply.data["attempts"])) if reply.ok else []
        context["problem"] = None if reply.ok or reply.status == 404 else reply.error
    elif tab == "history":
        reply = await calls.bm(identity, "GET", path_of("v1", "nodes", uuid, "history"),
                               {"detail": "True"})
        context["history"] = list(reversed(reply.data.get("history", []))) if reply.ok else []
        context["problem"] = None if reply.ok else reply.error
    else:
        context.update(await _diff(calls, uuid, request.query_params))
    return render(request, "node.html", **context)


async def _diff(calls: Calls, uuid: str, params: Mapping[str, str]) -> dict[str, Any]:
    reply = await calls.discoverd("GET", path_of("introspection", uuid, "data", "history"))
    runs = sorted(r["id"] for r in reply.data.get("history", [])) if reply.ok else []
    out: dict[str, Any] = {"runs": runs, "changes": None, "old": None, "new": None,
                           "problem": None if reply.ok or reply.status == 404 else reply.error}
    if len(runs) < 2:
        return out
    try:
        old = int(params.get("old", runs[-2]))
        new = int(params.get("new", runs[-1]))
    except ValueError:
        raise Refused(400, "old, new: a stored inspection's number") from None
    if old not in runs or new not in runs:
        raise Refused(404, f"old, new: inspections kept for this node are {runs}")
    answers = await asyncio.gather(*(
        calls.discoverd("GET", path_of("introspection", uuid, "data", "history", str(run)))
        for run in (old, new)))
    if not all(a.ok for a in answers):
        out["problem"] = next(a.error for a in answers if not a.ok)
        return out
    before = flatten(answers[0].data.get("inventory") or {})
    after = flatten(answers[1].data.get("inventory") or {})
    out.update(old=old, new=new, changes=[
        (key, before.get(key), after.get(key)) for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)])
    return out


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted paths to leaves; list items by index, or by name where they have one."""
    out: dict[str, Any] = {}
    if isinstance(value, Mapping):
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list) and value and not all(
            isinstance(v, str | int | float | bool) or v is None for v in value):
        for index, item in enumerate(value):
            label = item.get("name") if isinstance(item, Mapping) else None
            out.update(flatten(item, f"{prefix}[{label or index}]"))
    else:
        out[prefix] = value
    return out


async def raw_json(request: Request) -> Response:
    """The node's whole document (API fields, inventory, derived hardware), as a download."""
    calls = console_of(request).calls
    node = await _node(calls, request, request.path_params["node"], hardware=True)
    doc, problem = await _document(calls, node["uuid"])
    if problem:
        raise Refused(503, problem)
    name = node.get("name") or node["uuid"]
    return Response(json.dumps(doc, indent=2, sort_keys=True), media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{name}.json"'})


async def ramdisk_log(request: Request) -> Response:
    calls = console_of(request).calls
    node = await _node(calls, request, request.path_params["node"], hardware=True)
    params = {"attempt": request.query_params["attempt"]} \
        if "attempt" in request.query_params else {}
    reply = await calls.discoverd("GET", path_of("introspection", node["uuid"], "logs"),
                                  params)
    if not reply.ok:
        raise Refused(reply.status, reply.error)
    return Response(str(reply.data.get("log") or ""), media_type="text/plain; charset=utf-8")


async def live(request: Request) -> Response:
    """Where the node and its inspection stand now: polled by the node page (console.js)."""
    calls = console_of(request).calls
    node = await _node(calls, request, request.path_params["node"])
    latest = await _latest(calls, node["uuid"]) if hardware_readable(request, node) else None
    phases = latest["phases"] if latest else []
    return JSONResponse({
        "provision_state": node["provision_state"], "power_state": node["power_state"],
        "maintenance": node["maintenance"], "last_error": node.get("last_error") or "",
        "attempt": latest["attempt"] if latest else None,
        "result": latest["result"] if latest else None,
        "failure_code": latest["failure_code"] if latest else None,
        "step": phases[-1]["phase"] if phases else None,
        "steps": [{"phase": p["phase"], "at": p["at"]} for p in phases]},
        headers={"Cache-Control": "no-store"})


async def compare(request: Request) -> Response:
    calls = console_of(request).calls
    idents = list(dict.fromkeys(request.query_params.getlist("node")))
    if not 2 <= len(idents) <= MAX_COMPARE:
        raise Refused(400, f"node: choose 2 to {MAX_COMPARE} nodes to compare "
                           f"({len(idents)} given).")
    nodes = await asyncio.gather(*(_node(calls, request, i, hardware=True) for i in idents))
    docs = await asyncio.gather(*(_document(calls, n["uuid"]) for n in nodes))
    rows = [(label, [pick(doc, name) for doc, _ in docs]) for label, name in COMPARED]
    return render(request, "compare.html", nodes=nodes, rows=rows,
                  problems=[p for _, p in docs if p])
