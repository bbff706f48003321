"""`/v1/introspection`: start, status, list, abort, data (and its history) and reapply.

Versions are only range-checked (by the policy in base.py), as ironic-inspector's server does:
no call here refuses an older version in range, so a client pinned to 1.0 (the inspector
client's default) reaches every call.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from starlette.routing import Route

from ironsight.common.api.body import parse_json, read_body
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.pagination import next_link
from ironsight.common.bmc import LOOKUP_FIELDS
from ironsight.common.config import Config
from ironsight.common.exceptions import Conflict, Invalid, NotFound
from ironsight.common.ids import MAC_RE, is_uuid_like
from ironsight.discoverd import diagnosis, states
from ironsight.discoverd.api.base import Ctx
from ironsight.discoverd.introspect import Known
from ironsight.discoverd.node_cache import Introspection, StoredRun
from ironsight.discoverd.pxe.bootfiles import kernel_args

LOG = logging.getLogger(__name__)

START_SIZE = 256 * 1024
MAX_PORTS = 1000
_BOOLS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def status_doc(ctx: Ctx, intro: Introspection) -> dict[str, Any]:
    return {"uuid": intro.uuid, "finished": intro.finished, "state": intro.state,
            "error": intro.error, "started_at": _iso(intro.started_at),
            "finished_at": _iso(intro.finished_at),
            "links": [{"rel": "self",
                       "href": f"{ctx.base_url}/v1/introspection/{intro.uuid}"}]}


async def _uuid(ctx: Ctx) -> str:
    """Path parameter as a node UUID: names are resolved through the bare-metal API."""
    ident = ctx.param("node")
    if is_uuid_like(ident):
        return ident.lower()
    return str((await ctx.deps.ironic.get_node(ident, fields="uuid"))["uuid"])


@endpoint
async def start(ctx: Ctx) -> Any:
    params = ctx.query({"manage_boot"})
    manage_boot = True
    if "manage_boot" in params:
        raw = params["manage_boot"].lower()
        if raw not in _BOOLS:
            raise Invalid(f"Invalid value for manage_boot: {params['manage_boot']!r} "
                          "(true or false)")
        manage_boot = _BOOLS[raw]
    known = await _known(ctx)
    await ctx.deps.introspector.start(ctx.param("node"), manage_boot, known)
    return 202, {}


async def _known(ctx: Ctx) -> Known | None:
    """An ironsight extension: the start's caller may send what it knows of the node, so
    that discoverd need not read it back through the bare-metal API (the conductor does:
    it holds the node and has just read it): `{"node": {"provision_state",
    "maintenance", "driver_info": {BMC address fields only}}, "ports": [{"address"}]}`, in
    the bare-metal API's shapes. discoverd trusts it as it trusts that API (the call is an
    admin's). A body without `node` or `ports` is the upstream start, which ignores its
    body (openstacksdk sends `{"uuid": ...}`)."""
    raw = await read_body(ctx.request, START_SIZE, "Start")
    if not raw.strip():
        return None
    body = parse_json(raw, ctx.deps.conf.introspection.max_json_depth, "Start")
    if not isinstance(body, dict) or not {"node", "ports"} & set(body):
        return None
    if not {"node", "ports"} <= set(body) <= {"node", "ports", "uuid"}:
        raise Invalid("The body must be {\"node\": {...}, \"ports\": [...]}")
    if not is_uuid_like(ctx.param("node")):
        raise Invalid(f"A start with a body names the node by UUID, not "
                      f"{ctx.param('node')!r}")
    node, ports = body["node"], body["ports"]
    if not isinstance(node, dict) or set(node) != {"provision_state", "maintenance",
                                                   "driver_info"}:
        raise Invalid("node must be an object with provision_state, maintenance and "
                      "driver_info")
    if not isinstance(node["provision_state"], str):
        raise Invalid(f"Invalid value for node.provision_state: "
                      f"{node['provision_state']!r} (a string)")
    if not isinstance(node["maintenance"], bool):
        raise Invalid(f"Invalid value for node.maintenance: {node['maintenance']!r} "
                      "(true or false)")
    info = node["driver_info"]
    if not isinstance(info, dict) or set(info) - set(LOOKUP_FIELDS) or not all(
            isinstance(v, str) for v in info.values()):
        raise Invalid(f"node.driver_info must be an object of strings, of the fields "
                      f"{', '.join(LOOKUP_FIELDS)} only")
    if not isinstance(ports, list) or len(ports) > MAX_PORTS:
        raise Invalid(f"ports must be a list of at most {MAX_PORTS} ports")
    for n, port in enumerate(ports):
        if not isinstance(port, dict) or set(port) != {"address"}:
            raise Invalid(f"ports[{n}] must be an object with address")
        address = port["address"]
        if not isinstance(address, str) or not MAC_RE.match(address.lower()):
            raise Invalid(f"Invalid value for ports[{n}].address: {address!r} "
                          "(a MAC address)")
    return Known(node=node, ports=ports)


@endpoint
async def boot_params(ctx: Ctx) -> Any:
    """An ironsight extension for a ramdisk booted without discoverd's PXE side (the
    bare-metal service's virtual media): the kernel parameters a boot script would carry,
    with a new callback token (each call replaces the previous one, as each boot-script
    fetch does). Only while the introspection waits for its ramdisk."""
    uuid = await _uuid(ctx)
    intro = await ctx.deps.cache.get(uuid)  # 404 for an unknown node
    base = ramdisk_url(ctx.deps.conf)
    if not base:
        raise Conflict("discoverd does not know the URL a ramdisk booted from virtual media "
                       "reaches it at: set [introspection] ramdisk_url (or [pxe] http_url)")
    token = await ctx.deps.cache.issue_token(uuid)
    if token is None:
        raise Conflict(f"Introspection of node {uuid} is not waiting for its ramdisk (state "
                       f"{intro.state}): no callback token is issued")
    LOG.info("Node %s: a new callback token issued for a ramdisk booted without the PXE "
             "side", uuid)
    await ctx.deps.cache.timeline.record(uuid, diagnosis.MEDIA_REQUESTED, "discoverd")
    params = kernel_args(base, ctx.deps.conf.pxe.kernel_params, token, "")
    return 200, {"callback_url": f"{base}/v1/continue", "kernel_params": params}


def ramdisk_url(conf: Config) -> str:
    return (conf.introspection.ramdisk_url or conf.pxe.http_url).strip().rstrip("/")


@endpoint
async def attempts(ctx: Ctx) -> Any:
    """ironsight's own: the node's kept attempts with their timelines (diagnosis.py), oldest
    first; `?attempt=N` one of them."""
    params = ctx.query({"attempt"})
    found = await ctx.deps.cache.timeline.attempts(await _uuid(ctx))
    if "attempt" in params:
        raw = params["attempt"]
        found = [a for a in found if a["attempt"] == _attempt(raw)]
        if not found:
            raise NotFound(f"Attempt {raw} of node {ctx.param('node')} is not kept")
    return 200, {"attempts": found}


@endpoint
async def ramdisk_log(ctx: Ctx) -> Any:
    """ironsight's own: the ramdisk's log of an attempt as its beats sent it (the last
    64 KiB), `?attempt=N` (default: the latest)."""
    params = ctx.query({"attempt"})
    return 200, await ctx.deps.cache.timeline.logs(
        await _uuid(ctx), _attempt(params["attempt"]) if "attempt" in params else None)


def _attempt(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit() and 0 < len(raw) <= 9 and int(raw) > 0):
        raise Invalid(f"Invalid value for attempt: {raw!r} (a positive integer)")
    return int(raw)


@endpoint
async def status(ctx: Ctx) -> Any:
    return 200, status_doc(ctx, await ctx.deps.cache.get(await _uuid(ctx)))


@endpoint
async def list_statuses(ctx: Ctx) -> Any:
    params = ctx.query({"marker", "limit", "state", "uuid"})
    max_limit = ctx.deps.conf.introspection.max_limit
    try:
        limit = int(params.get("limit", "0"))
    except ValueError:
        raise Invalid(f"Invalid value for limit: {params['limit']!r}") from None
    if limit < 0 or limit > max_limit:
        raise Invalid(f"Invalid value for limit: {limit} (0 to {max_limit}; 0 means "
                      f"{max_limit})")
    limit = limit or max_limit
    wanted = [s for s in params.get("state", "").split(",") if s]
    bad = [s for s in wanted if s not in states.ALL]
    if bad:
        raise Invalid(f"Invalid state(s) {', '.join(bad)} (known: {', '.join(states.ALL)})")
    if "uuid" in params:  # ironsight's batched status read (one request for many nodes)
        uuids = [u.strip().lower() for u in params["uuid"].split(",") if u.strip()][:max_limit]
        found = await ctx.deps.cache.get_many(uuids)
        found = [i for i in found if not wanted or i.state in wanted]
        return 200, {"introspection": [status_doc(ctx, i) for i in found]}
    found = await ctx.deps.cache.list_recent(limit=limit, marker=params.get("marker"), state=wanted)
    body: dict[str, Any] = {"introspection": [status_doc(ctx, i) for i in found]}
    if len(found) == limit:
        body["next"] = next_link(ctx.base_url, "v1/introspection", params, limit=limit,
                                 marker=found[-1].uuid)
    return 200, body


@endpoint
async def abort(ctx: Ctx) -> Any:
    params = ctx.query({"reason"})
    reason = params.get("reason")
    if reason not in (None, "timeout", "boot_failed"):
        raise Invalid(f"Invalid value for reason: {reason!r} (timeout, boot_failed, or none)")
    # the caller gave up waiting, or could not boot the node: the code names the step
    await ctx.deps.introspector.abort(await _uuid(ctx), stalled=reason is not None)
    return 202, {}


async def _stored(ctx: Ctx, processed: bool) -> Any:
    uuid = await _uuid(ctx)
    await ctx.deps.cache.get(uuid)  # 404 for an unknown node before "no data"
    return 200, await ctx.deps.cache.get_data(uuid, processed=processed)


@endpoint
async def get_data(ctx: Ctx) -> Any:
    return await _stored(ctx, processed=True)


@endpoint
async def get_unprocessed(ctx: Ctx) -> Any:
    return await _stored(ctx, processed=False)


# --- data history (an ironsight extension: ironic-inspector keeps one run's data) ----------


def _run_doc(ctx: Ctx, uuid: str, run: StoredRun) -> dict[str, Any]:
    href = f"{ctx.base_url}/v1/introspection/{uuid}/data/history/{run.run}"
    return {"id": run.run, "started_at": _iso(run.started_at),
            "received_at": _iso(run.received_at), "processed_at": _iso(run.processed_at),
            "links": [{"rel": "self", "href": href},
                      {"rel": "unprocessed", "href": f"{href}/unprocessed"}]}


@endpoint
async def history(ctx: Ctx) -> Any:
    uuid = await _uuid(ctx)
    await ctx.deps.cache.get(uuid)  # 404 for an unknown node before an empty list
    runs = await ctx.deps.cache.history(uuid)
    return 200, {"uuid": uuid, "history": [_run_doc(ctx, uuid, r) for r in runs]}


def _run_id(ctx: Ctx) -> int:
    raw = ctx.param("run")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and 0 < int(raw) < 2**31):
        raise Invalid(f"Invalid history id {raw!r}: expected a positive integer (an id "
                      "listed by GET .../data/history)")
    return int(raw)


async def _stored_run(ctx: Ctx, processed: bool) -> Any:
    run = _run_id(ctx)
    uuid = await _uuid(ctx)
    await ctx.deps.cache.get(uuid)
    return 200, await ctx.deps.cache.get_run_data(uuid, run, processed=processed)


@endpoint
async def history_data(ctx: Ctx) -> Any:
    return await _stored_run(ctx, processed=True)


@endpoint
async def history_unprocessed(ctx: Ctx) -> Any:
    return await _stored_run(ctx, processed=False)


@endpoint
async def reapply(ctx: Ctx) -> Any:
    uuid = await _uuid(ctx)
    body = await read_body(ctx.request, ctx.deps.conf.introspection.max_callback_size)
    data = None
    if body.strip():
        data = parse_json(body, ctx.spec.max_json_depth)
    await ctx.deps.processor.reapply(uuid, data)
    return 202, {}


routes = [
    Route("/v1/introspection", list_statuses, methods=["GET"]),
    Route("/v1/introspection/{node}", start, methods=["POST"]),
    Route("/v1/introspection/{node}", status, methods=["GET"]),
    Route("/v1/introspection/{node}/abort", abort, methods=["POST"]),
    Route("/v1/introspection/{node}/boot_params", boot_params, methods=["POST"]),
    Route("/v1/introspection/{node}/attempts", attempts, methods=["GET"]),
    Route("/v1/introspection/{node}/logs", ramdisk_log, methods=["GET"]),
    Route("/v1/introspection/{node}/data", get_data, methods=["GET"]),
    Route("/v1/introspection/{node}/data/unprocessed", get_unprocessed, methods=["GET"]),
    Route("/v1/introspection/{node}/data/unprocessed", reapply, methods=["POST"]),
    Route("/v1/introspection/{node}/data/history", history, methods=["GET"]),
    Route("/v1/introspection/{node}/data/history/{run}", history_data, methods=["GET"]),
    Route("/v1/introspection/{node}/data/history/{run}/unprocessed", history_unprocessed,
          methods=["GET"]),
]
