"""Node sub-resources beyond states and management: traits (1.37), VIFs (1.28), virtual
media (1.89), console, indicators and vendor passthru (node_devices.py), and Ironic's answers
for the ones ironsight does not do (never a bare 404)."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import node_devices
from ironsight.baremetal.api.base import Ctx, link
from ironsight.common.api.app import allowed_methods, not_allowed
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import (
    Conflict,
    Invalid,
    NotFound,
    UnsupportedDriverExtension,
)

_TRAIT_RE = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
# os-traits' standard traits are upper-case words joined by '_' (ironsight does not ship
# their list: any such name is taken).
_STANDARD_TRAIT_RE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
VMEDIA_DEVICES = ("disk", "cdrom", "floppy")
_VMEDIA_SCHEMES = ("http", "https", "nfs", "cifs", "smb")


def check_trait(trait: Any) -> str:
    if not isinstance(trait, str) or not 1 <= len(trait) <= 255 or not (
            _TRAIT_RE.match(trait) or _STANDARD_TRAIT_RE.match(trait)):
        raise Invalid(f"Invalid trait {trait!r}: a trait is CUSTOM_ followed by upper-case "
                      "letters, digits and _, or a standard (os-traits) trait")
    return trait


# --- traits ---------------------------------------------------------------------------------


@endpoint
async def get_traits(ctx: Ctx) -> Any:
    row = await ctx.deps.records.get_node(ctx.param("node"))
    found = await ctx.deps.records.traits_of([row["id"]])
    return 200, {"traits": found.get(row["id"], [])}


@endpoint
async def put_traits(ctx: Ctx) -> Any:
    body = await ctx.body()
    traits = body.get("traits") if isinstance(body, dict) else None
    if not isinstance(body, dict) or set(body) != {"traits"} or not isinstance(traits, list):
        raise Invalid("A single node trait may be added via PUT /v1/nodes/<node identifier>"
                      "/traits/<trait> with no body, or all node traits may be replaced via "
                      "PUT /v1/nodes/<node identifier>/traits with the list of traits "
                      "specified in the request body.")
    wanted = [check_trait(t) for t in traits]
    await ctx.deps.records.change_traits(ctx.param("node"), lambda _: wanted)
    return 204, None


@endpoint
async def put_trait(ctx: Ctx) -> Any:
    trait = check_trait(ctx.param("trait"))
    if int(ctx.request.headers.get("content-length") or 0) and await ctx.body():
        raise Invalid("No body should be provided when adding a trait")
    await ctx.deps.records.change_traits(ctx.param("node"), lambda cur: [*cur, trait])
    location = f"{ctx.base_url}/v1/nodes/{ctx.param('node')}/traits/{trait}"
    return 204, None, {"Location": location}


@endpoint
async def delete_traits(ctx: Ctx) -> Any:
    await ctx.deps.records.change_traits(ctx.param("node"), lambda _: [])
    return 204, None


@endpoint
async def delete_trait(ctx: Ctx) -> Any:
    trait = ctx.param("trait")

    def without(current: list[str]) -> list[str]:
        if trait not in current:
            raise NotFound(f"Node {ctx.param('node')} doesn't have a trait '{trait}'")
        return [t for t in current if t != trait]

    await ctx.deps.records.change_traits(ctx.param("node"), without)
    return 204, None


# --- VIFs (the noop network: attachments are only recorded) -------------------------------


@endpoint
async def list_vifs(ctx: Ctx) -> Any:
    row = await ctx.deps.records.get_node(ctx.param("node"))
    vifs = (row["driver_internal_info"] or {}).get("vifs") or []
    return 200, {"vifs": [{"id": v} for v in vifs]}


@endpoint
async def attach_vif(ctx: Ctx) -> Any:
    body = await ctx.body()
    vif = body.get("id") if isinstance(body, dict) else None
    if not isinstance(vif, str) or not vif:
        raise Invalid("id: the VIF to attach is required (a string)")
    extra = set(body) - {"id", "port_uuid", "portgroup_uuid"}
    if extra:
        raise Invalid(f"Unknown field(s) {', '.join(sorted(extra))} in a VIF attachment")

    def attach(node: dict[str, Any], current: Any) -> list[str]:
        vifs = list(current or [])
        if vif in vifs:
            raise Conflict(f"Unable to attach VIF because VIF {vif} is already attached to "
                           f"Ironic node {node['uuid']}")
        return [*vifs, vif]

    await ctx.deps.records.change_internal(ctx.param("node"), "vifs", attach,
                                           f"VIF {vif} attached")
    return 204, None


@endpoint
async def detach_vif(ctx: Ctx) -> Any:
    vif = ctx.param("vif")

    def detach(node: dict[str, Any], current: Any) -> list[str]:
        vifs = list(current or [])
        if vif not in vifs:
            raise Invalid(f"Unable to detach VIF {vif} from node {node['uuid']} because it "
                          "is not attached to it.")
        return [v for v in vifs if v != vif]

    await ctx.deps.records.change_internal(ctx.param("node"), "vifs", detach,
                                           f"VIF {vif} detached")
    return 204, None


# --- virtual media (fake-hardware: recorded, as Ironic's fake management does nothing) ----


def _vmedia_capable(node: dict[str, Any], ctx: Ctx) -> None:
    driver = ctx.deps.conductor.drivers.for_node(node)
    if not driver.hw.provisions:
        raise UnsupportedDriverExtension(
            f"Driver {node['driver']} does not support virtual media (disabled or not "
            "implemented).")


@endpoint
async def get_vmedia(ctx: Ctx) -> Any:
    """What the BMC has inserted, read from it (redfish; the others have no reader, as
    Ironic's fake has none)."""
    return 200, {"vmedia": await ctx.deps.conductor.get_virtual_media(ctx.param("node"))}


@endpoint
async def attach_vmedia(ctx: Ctx) -> Any:
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("Request body must be a JSON object with device_type and image_url.")
    extra = set(body) - {"device_type", "image_url", "image_download_source"}
    if extra:
        raise Invalid(f"Unknown field(s) {', '.join(sorted(extra))} in a virtual media "
                      "attachment")
    device, url = body.get("device_type"), body.get("image_url")
    if device not in VMEDIA_DEVICES:
        raise Invalid(f"device_type: {device!r} is not one of {', '.join(VMEDIA_DEVICES)}")
    if not isinstance(url, str):
        raise Invalid("image_url: a URL is required")
    scheme = urllib.parse.urlparse(url).scheme
    if scheme not in _VMEDIA_SCHEMES:
        raise Invalid(f"Unsupported or missing URL scheme: {scheme}")
    source = body.get("image_download_source", "local")
    if source not in ("local", "http", "swift"):
        raise Invalid(f"image_download_source: {source!r} is not one of local, http, swift")

    def attach(node: dict[str, Any], current: Any) -> list[dict[str, Any]]:
        _vmedia_capable(node, ctx)
        kept = [m for m in (current or []) if m.get("device_type") != device]
        return [*kept, {"device_type": device, "image_url": url,
                        "image_download_source": source}]

    await ctx.deps.records.change_internal(ctx.param("node"), "vmedia", attach,
                                           f"Virtual media {device} attached")
    return 204, None


@endpoint
async def detach_vmedia(ctx: Ctx) -> Any:
    params = ctx.query({"device_types"})
    raw = params.get("device_types")
    if raw is None and int(ctx.request.headers.get("content-length") or 0):
        body = await ctx.body()
        raw = body.get("device_types") if isinstance(body, dict) else None
    types = [t.strip() for t in raw.split(",")] if isinstance(raw, str) else \
        list(raw) if isinstance(raw, list) else None
    if types:
        invalid = [str(t) for t in types if t not in VMEDIA_DEVICES]
        if invalid:
            raise Invalid(f"Invalid device type(s) {', '.join(invalid)} (valid are "
                          f"{', '.join(VMEDIA_DEVICES)})")

    def detach(node: dict[str, Any], current: Any) -> list[dict[str, Any]]:
        _vmedia_capable(node, ctx)
        return [m for m in (current or []) if types and m.get("device_type") not in types]

    await ctx.deps.records.change_internal(ctx.param("node"), "vmedia", detach,
                                           "Virtual media detached")
    return 204, None


# --- what ironsight does not do -------------------------------------------------------------


@endpoint
async def empty_list(ctx: Ctx) -> Any:
    """BIOS settings and firmware components: Ironic lists what its interfaces cached;
    ironsight's never cache any."""
    await ctx.deps.records.get_node(ctx.param("node"))
    key = ctx.request.url.path.rstrip("/").rsplit("/", 1)[-1]
    return 200, {key: []}


@endpoint
async def missing_setting(ctx: Ctx) -> Any:
    row = await ctx.deps.records.get_node(ctx.param("node"))
    raise NotFound(f"Node {row['uuid']} doesn't have a BIOS setting '{ctx.param('name')}'")


# Sub-resources ironsight does not serve -> the driver method Ironic's answer names.
# (Console, indicators and vendor passthru: node_devices.py.)
_UNSUPPORTED = {"firmware/cache": "firmware", "bios/cache": "bios", "volume": "storage"}


@endpoint
async def unsupported(ctx: Ctx) -> Any:
    """Anything else under a node, as Ironic's node controller answers it, after the node's
    own 404: another method of a route that exists is a 405 naming the methods there; a GET
    of an unknown sub-path is taken as an unknown field; a sub-resource Ironic has and
    ironsight does not is a 400 naming what the driver lacks."""
    row = await ctx.deps.records.get_node(ctx.param("node"))
    if allowed_methods(ctx.request.app.router.routes, ctx.request.scope):
        raise not_allowed(ctx.request)
    rest = ctx.param("rest").strip("/")
    if rest not in _UNSUPPORTED and ctx.request.method == "GET":
        raise Invalid(f"Field {rest.split('/')[0]} is not a valid field.")
    what = _UNSUPPORTED.get(rest, rest.split("/")[0] or "this sub-resource")
    raise UnsupportedDriverExtension(
        f"Driver {row['driver']} does not support {what} (disabled or not implemented).")


@endpoint
async def list_children(ctx: Ctx) -> Any:
    """The UUIDs of the nodes whose `parent_node` is this one (1.83)."""
    row = await ctx.deps.records.get_node(ctx.param("node"))
    found = await ctx.deps.records.list_nodes(
        columns=["uuid"], filters={"parent_node": row["uuid"]},
        limit=ctx.deps.conf.api.max_limit, marker=None,
        sort_key="id", sort_dir="asc")
    return 200, {"children": [child["uuid"] for child in found],
                 "links": link(ctx.base_url, f"v1/nodes/{row['uuid']}/children")}


_BOOT_MODES = ("bios", "uefi")


def _target(body: Any) -> Any:
    if not isinstance(body, dict) or "target" not in body:
        raise Invalid("Missing mandatory parameter: target")
    return body["target"]


@endpoint
async def set_boot_mode(ctx: Ctx) -> Any:
    mode = _target(await ctx.body())
    if mode not in _BOOT_MODES:
        raise Invalid(f"Invalid boot mode {mode} specified: expected one of "
                      f"{', '.join(_BOOT_MODES)}.")
    await ctx.deps.conductor.set_boot_mode(ctx.param("node"), mode)
    return 202, None


@endpoint
async def set_secure_boot(ctx: Ctx) -> Any:
    raw = _target(await ctx.body())
    if not isinstance(raw, bool):
        raise Invalid(f"Invalid secure boot state {raw} specified: expected true or false.")
    await ctx.deps.conductor.set_secure_boot(ctx.param("node"), raw)
    return 202, None


@endpoint
async def inject_nmi(ctx: Ctx) -> Any:
    body = await ctx.body() if int(ctx.request.headers.get("content-length") or 0) else {}
    if body not in ({}, None):
        raise Invalid("inject_nmi takes no arguments: the body must be empty or {}")
    await ctx.deps.conductor.inject_nmi(ctx.param("node"))
    return 204, None


routes = [
    Route("/v1/nodes/{node}/traits", get_traits, methods=["GET"]),
    Route("/v1/nodes/{node}/traits", put_traits, methods=["PUT"]),
    Route("/v1/nodes/{node}/traits", delete_traits, methods=["DELETE"]),
    Route("/v1/nodes/{node}/traits/{trait}", put_trait, methods=["PUT"]),
    Route("/v1/nodes/{node}/traits/{trait}", delete_trait, methods=["DELETE"]),
    Route("/v1/nodes/{node}/vifs", list_vifs, methods=["GET"]),
    Route("/v1/nodes/{node}/vifs", attach_vif, methods=["POST"]),
    Route("/v1/nodes/{node}/vifs/{vif}", detach_vif, methods=["DELETE"]),
    Route("/v1/nodes/{node}/vmedia", get_vmedia, methods=["GET"]),
    Route("/v1/nodes/{node}/vmedia", attach_vmedia, methods=["POST"]),
    Route("/v1/nodes/{node}/vmedia", detach_vmedia, methods=["DELETE"]),
    Route("/v1/nodes/{node}/bios", empty_list, methods=["GET"]),
    Route("/v1/nodes/{node}/bios/{name}", missing_setting, methods=["GET"]),
    Route("/v1/nodes/{node}/firmware", empty_list, methods=["GET"]),
    Route("/v1/nodes/{node}/children", list_children, methods=["GET"]),
    Route("/v1/nodes/{node}/states/boot_mode", set_boot_mode, methods=["PUT"]),
    Route("/v1/nodes/{node}/states/secure_boot", set_secure_boot, methods=["PUT"]),
    Route("/v1/nodes/{node}/management/inject_nmi", inject_nmi, methods=["PUT"]),
    *node_devices.routes,
]
# Last of all the app's routes: it answers every node sub-path no other route took.
fallback_routes = [
    Route("/v1/nodes/{node}/{rest:path}", unsupported,
          methods=["GET", "PUT", "POST", "PATCH", "DELETE"]),
]
fallback_routes[0].catch_all = True  # type: ignore[attr-defined]  # not "served": a 404
