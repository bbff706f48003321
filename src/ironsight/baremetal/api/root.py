"""`/`, `/v1` and `/v1/drivers`: discovery documents that clients negotiate with."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.routing import Route

from ironsight.baremetal import raid
from ironsight.baremetal.api import microversions
from ironsight.baremetal.api.base import VERSIONS, Ctx, link, links
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.versions import fmt
from ironsight.common.clock import utcnow
from ironsight.common.exceptions import IronsightError, NotFound


def _version_doc(ctx: Ctx) -> dict[str, Any]:
    return {"id": "v1", "links": [link(ctx.base_url, "v1/")], "status": "CURRENT",
            "min_version": fmt(VERSIONS.minimum), "version": fmt(VERSIONS.maximum)}


@endpoint
async def root(ctx: Ctx) -> Any:
    version = _version_doc(ctx)
    return 200, {"name": "OpenStack Ironic API",
                 "description": "ironsight bare-metal service (Ironic v1 compatible API).",
                 "default_version": version, "versions": [version]}


@endpoint
async def v1(ctx: Ctx) -> Any:
    """Links to the resources the request's version has (Ironic's VERSIONED_CONTROLLERS)."""
    base = ctx.base_url
    doc: dict[str, Any] = {
        "id": "v1",
        "links": [link(base, "v1/"), {"href": "https://docs.openstack.org/ironic/latest/",
                                      "rel": "describedby", "type": "text/html"}],
        # one object, as Ironic 39 answers (its api-ref shows a list)
        "media_types": {"base": "application/json",
                        "type": "application/vnd.openstack.ironic.v1+json"},
        "chassis": links(base, "chassis"), "nodes": links(base, "nodes"),
        "ports": links(base, "ports"), "drivers": links(base, "drivers"),
        "version": _version_doc(ctx),
    }
    for name in microversions.resource_links(ctx.version):
        doc.setdefault(name, links(base, name))
    return 200, doc


@endpoint
async def refuse_v1_delete(ctx: Ctx) -> Any:
    """Ironic's v1 controller takes a DELETE and refuses it as a malformed request."""
    raise IronsightError("The server could not comply with the request since it is either "
                         "malformed or otherwise incorrect.", code=405)


@endpoint
async def list_shards(ctx: Ctx) -> Any:
    """Each shard and how many nodes it has, most first; the nodes in none count under
    "None", as in Ironic."""
    counts = await ctx.deps.records.shard_counts()
    return 200, {"shards": [{"name": str(name), "count": count} for name, count in counts]}


async def _hosts_by_driver(ctx: Ctx) -> dict[str, list[str]]:
    """The hosts of the live conductors (GET /v1/conductors) that run each hardware type;
    this replica's own host for those it runs, whatever its last heartbeat says."""
    timeout = dt.timedelta(seconds=ctx.deps.conf.conductor.heartbeat_timeout)
    found: dict[str, set[str]] = {
        name: {ctx.deps.conductor.host} for name in ctx.deps.conductor.drivers}
    for entry in await ctx.deps.records.inventory.conductor_hosts(utcnow() - timeout):
        for name in entry.drivers if entry.alive else ():
            found.setdefault(name, set()).add(entry.hostname)
    return {name: sorted(hosts) for name, hosts in found.items()}


def _driver_doc(ctx: Ctx, name: str, detail: bool, hosts: dict[str, list[str]]
                ) -> dict[str, Any]:
    drivers = ctx.deps.conductor.drivers
    loaded = name in drivers
    doc: dict[str, Any] = {"name": name, "hosts": hosts.get(name, []),
                           "type": "dynamic",
                           "links": links(ctx.base_url, f"drivers/{name}"),
                           "properties": links(ctx.base_url, f"drivers/{name}/properties")}
    if not loaded:
        doc["load_error"] = drivers.refused.get(name)
    if detail and loaded:
        drv = drivers[name]
        for iface, value in drv.interface_names().items():
            doc[f"default_{iface}_interface"] = value
            doc[f"enabled_{iface}_interfaces"] = list(drv.accepted(iface))
    return doc


@endpoint
async def list_drivers(ctx: Ctx) -> Any:
    params = ctx.query({"type", "detail"})
    detail = params.get("detail", "false").lower() in ("1", "true", "yes")
    drivers = ctx.deps.conductor.drivers
    names = sorted(set(drivers) | set(drivers.refused))
    hosts = await _hosts_by_driver(ctx)
    return 200, {"drivers": [_driver_doc(ctx, n, detail, hosts) for n in names]}


def _known(ctx: Ctx) -> str:
    name = ctx.param("driver")
    drivers = ctx.deps.conductor.drivers
    if name not in drivers and name not in drivers.refused:
        raise NotFound(f"Could not find the following driver(s) or hardware type(s): {name}.")
    return name


@endpoint
async def show_driver(ctx: Ctx) -> Any:
    return 200, _driver_doc(ctx, _known(ctx), True, await _hosts_by_driver(ctx))


@endpoint
async def driver_properties(ctx: Ctx) -> Any:
    name = _known(ctx)
    drv = ctx.deps.conductor.drivers.get(name)
    return 200, drv.properties() if drv else {}


@endpoint
async def raid_logical_disk_properties(ctx: Ctx) -> Any:
    """What a logical disk of a target RAID configuration may say, for the hardware types
    whose default RAID interface takes one (fake-hardware's `fake`); else 404, as Ironic."""
    name = _known(ctx)
    drv = ctx.deps.conductor.drivers.get(name)
    if drv is None or drv.interface_names().get("raid") != raid.STORING_INTERFACE:
        raise raid.unsupported(name)
    return 200, dict(raid.LOGICAL_DISK_PROPERTIES)


routes = [
    Route("/", root, methods=["GET", "POST"]),  # Ironic's root answers a POST as a GET
    Route("/v1", v1, methods=["GET"]),
    Route("/v1", refuse_v1_delete, methods=["DELETE"]),
    Route("/v1/", v1, methods=["GET"]),
    Route("/v1/shards", list_shards, methods=["GET"]),
    Route("/v1/drivers", list_drivers, methods=["GET"]),
    Route("/v1/drivers/{driver}", show_driver, methods=["GET"]),
    Route("/v1/drivers/{driver}/properties", driver_properties, methods=["GET"]),
    Route("/v1/drivers/{driver}/raid/logical_disk_properties", raid_logical_disk_properties,
          methods=["GET"]),
]
