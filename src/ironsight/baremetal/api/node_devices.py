"""A node's console (`states/console`), indicators (`management/indicators`, 1.63) and vendor
passthru, node and driver level, answered as Ironic 39 answers them. The conductor does the
work (and owns `console_enabled`); these endpoints check the request and shape the answer.
Nodes whose interfaces have none of these (no-console, no-vendor, a management without
indicators) get Ironic's 400s for them."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal import fields
from ironsight.baremetal.api.base import Ctx, links
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid, InvalidParameterValue, NotFound

_ALL = ["GET", "POST", "PUT", "PATCH", "DELETE"]


async def _fields(ctx: Ctx, required: str) -> dict[str, Any]:
    """The request's JSON object, which must hold `required` (and nothing else), as Ironic
    takes a body's fields as the arguments of its method."""
    raw = await ctx.body() if int(ctx.request.headers.get("content-length") or 0) else None
    body = raw if raw is not None else {}
    if not isinstance(body, dict):
        raise Invalid(f"The request body must be a JSON object with \"{required}\".")
    extra = sorted(set(body) - {required})
    if extra:
        raise Invalid(f"Unknown argument(s): {', '.join(extra)} (only \"{required}\" is "
                      "taken).")
    if body.get(required) is None:
        raise Invalid(f"Missing argument: \"{required}\"")
    return body


# --- console ----------------------------------------------------------------------------------


@endpoint
async def get_console(ctx: Ctx) -> Any:
    info = await ctx.deps.conductor.get_console(ctx.param("node"))
    return 200, {"console_enabled": info is not None, "console_info": info}


@endpoint
async def set_console(ctx: Ctx) -> Any:
    ctx.query(set())
    raw = (await _fields(ctx, "enabled"))["enabled"]
    try:
        enabled = fields.ironic_bool(raw)
    except ValueError as exc:
        raise InvalidParameterValue(f"Invalid enabled: {exc}") from None
    await ctx.deps.conductor.set_console_mode(ctx.param("node"), enabled)
    location = f"{ctx.base_url}/v1/nodes/{ctx.param('node')}/states/console"
    return 202, None, {"Location": location}


# --- indicators -------------------------------------------------------------------------------


async def _indicator(ctx: Ctx) -> tuple[str, str]:
    """`name@component` split as Ironic splits it (at the first '@'); a malformed one is a
    400, after the node's own 404."""
    given = ctx.param("indicator")
    name, at, component = given.partition("@")
    if not at:
        await ctx.deps.records.get_node(ctx.param("node"))
        raise InvalidParameterValue(f'Malformed indicator name "{given}"')
    return component, name


@endpoint
async def list_indicators(ctx: Ctx) -> Any:
    node = ctx.param("node")
    found = await ctx.deps.conductor.supported_indicators(node)
    shown = []
    for component, indicators in found.items():
        for name, props in indicators.items():
            unique = f"{name}@{component}"
            shown.append({
                "name": unique, "component": component,
                "readonly": props.get("readonly", True), "states": props.get("states", []),
                "links": links(ctx.base_url, f"nodes/{node}/management/indicators/{unique}"),
            })
    return 200, {"indicators": shown}


@endpoint
async def get_indicator(ctx: Ctx) -> Any:
    component, name = await _indicator(ctx)
    state = await ctx.deps.conductor.get_indicator_state(ctx.param("node"), component, name)
    return 200, {"state": state}


@endpoint
async def set_indicator(ctx: Ctx) -> Any:
    state = (await _fields(ctx, "state"))["state"]
    if not isinstance(state, str):
        raise InvalidParameterValue(f"Invalid state: {state!r} is not a string")
    component, name = await _indicator(ctx)
    await ctx.deps.conductor.set_indicator_state(ctx.param("node"), component, name, state)
    return 204, None


# --- vendor passthru --------------------------------------------------------------------------


async def _call(ctx: Ctx) -> tuple[str, dict[str, Any]]:
    """The method a vendor call names and its arguments (the body: a JSON object)."""
    method = ctx.query({"method"}).get("method")
    if not method:
        raise Invalid("Missing mandatory parameter: method")
    raw = await ctx.body() if int(ctx.request.headers.get("content-length") or 0) else None
    args = raw if raw is not None else {}
    if not isinstance(args, dict):
        raise Invalid("The arguments of a vendor passthru method are a JSON object.")
    return method, args


@endpoint
async def node_vendor_methods(ctx: Ctx) -> Any:
    return 200, await ctx.deps.conductor.vendor_methods(ctx.param("node"))


@endpoint
async def node_vendor_passthru(ctx: Ctx) -> Any:
    method, args = await _call(ctx)
    is_async, result = await ctx.deps.conductor.vendor_passthru(
        ctx.param("node"), method, ctx.request.method, args)
    return (202, None) if is_async else (200, result)


def _driver(ctx: Ctx) -> str:
    name = ctx.param("driver")
    if name not in ctx.deps.conductor.drivers:
        raise NotFound(f"Could not find the following driver(s) or hardware type(s): {name}.")
    return name


@endpoint
async def driver_vendor_methods(ctx: Ctx) -> Any:
    """No hardware type here has driver-level vendor methods (Ironic's fake-hardware has
    none either: its fake vendor interface has only node methods)."""
    _driver(ctx)
    return 200, {}


@endpoint
async def driver_vendor_passthru(ctx: Ctx) -> Any:
    _driver(ctx)
    method, _ = await _call(ctx)
    raise InvalidParameterValue(f"No handler for method {method}")


routes = [
    Route("/v1/nodes/{node}/states/console", get_console, methods=["GET"]),
    Route("/v1/nodes/{node}/states/console", set_console, methods=["PUT"]),
    Route("/v1/nodes/{node}/management/indicators", list_indicators, methods=["GET"]),
    Route("/v1/nodes/{node}/management/indicators/{indicator}", get_indicator,
          methods=["GET"]),
    Route("/v1/nodes/{node}/management/indicators/{indicator}", set_indicator,
          methods=["PUT"]),
    Route("/v1/nodes/{node}/vendor_passthru/methods", node_vendor_methods, methods=["GET"]),
    Route("/v1/nodes/{node}/vendor_passthru", node_vendor_passthru, methods=_ALL),
    Route("/v1/drivers/{driver}/vendor_passthru/methods", driver_vendor_methods,
          methods=["GET"]),
    Route("/v1/drivers/{driver}/vendor_passthru", driver_vendor_passthru, methods=_ALL),
]
