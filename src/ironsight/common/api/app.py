"""What makes one service's API, and the ASGI application built from it.

Each service describes its API once (`ApiSpec`: microversions, error envelope, public
endpoint, body limits) and hands `create_app` its routes and its dependencies: the objects
its endpoints may use (a conductor, a node cache...). Endpoints then receive those through
their request context, typed, and never the assembled service. Cross-cutting behaviour for
both APIs (authentication: `ironsight.common.auth`) goes here, once.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ironsight.common.api.errors import Envelope
from ironsight.common.api.metrics import CONTENT_TYPE, Metrics
from ironsight.common.api.versions import Version, VersionPolicy
from ironsight.common.auth.identity import Identity
from ironsight.common.auth.middleware import Authenticator, AuthMiddleware
from ironsight.common.auth.policy import AccessRules
from ironsight.common.exceptions import IronsightError, RoutingError


@dataclass(frozen=True)
class ApiSpec:
    versions: VersionPolicy
    envelope: Envelope
    public_endpoint: str  # base URL of links in answers; empty: taken from each request
    max_body_size: int
    max_json_depth: int
    metrics: Metrics | None = None  # served on GET /metrics; requests are timed into it
    # who may call what; no authenticator: no checks (an app serving only open endpoints)
    authenticator: Authenticator | None = None
    access: AccessRules = field(default_factory=AccessRules)
    # refuses a request older than its route (method, path, version), as the service's
    # upstream does; None: every route exists at every version
    gate: Callable[[str, str, Version], None] | None = None
    # after routing, before the endpoint: refuses what the caller may not do to this very
    # resource (a project's caller, another project's node); given the RequestContext
    authorize: Callable[[Any], Awaitable[None]] | None = None
    # before a role refusal of a project's caller: the "not found" text of a resource its
    # project may not know exists (given the Request and the caller), else None
    conceal: Callable[[Request, Identity], Awaitable[str | None]] | None = None


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None
                  ) -> Response:
    body = json.dumps(data, separators=(",", ":"), default=str).encode()
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def error_response(spec: ApiSpec, exc: IronsightError, version: Version | None) -> Response:
    headers = spec.versions.headers(version)
    headers.update(getattr(exc, "headers", None) or {})  # Retry-After of a 429
    return json_response(spec.envelope(exc), status=exc.code, headers=headers)


def allowed_methods(routes: Sequence[BaseRoute], scope: Scope) -> list[str]:
    """The methods the routes serving a path answer (Allow of a 405), HEAD left out as
    Ironic's framework does; a catch-all route does not count."""
    methods: set[str] = set()
    for route in routes:
        if getattr(route, "catch_all", False) or not isinstance(route, Route):
            continue
        if route.matches(scope)[0] is not Match.NONE:
            methods.update(route.methods or ())
    return sorted(methods - {"HEAD"})


def not_allowed(request: Request) -> RoutingError:
    allow = allowed_methods(request.app.router.routes, request.scope)
    return RoutingError(f"Method {request.method} is not allowed on {request.url.path}",
                        405, headers={"Allow": ", ".join(allow)})


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 (no route) and 405 (no such method), as the framework's answer
    in the service's envelope."""
    assert isinstance(exc, HTTPException)
    spec: ApiSpec = request.app.state.spec
    error: IronsightError
    if exc.status_code == 404:
        error = RoutingError(f"The resource could not be found: {request.url.path}", 404)
    elif exc.status_code == 405:
        error = not_allowed(request)
    else:
        error = IronsightError(str(exc.detail), code=exc.status_code)
    return error_response(spec, error, None)


class VersionGate:
    """Refuses a request older than its route before routing, as Ironic's controllers do
    (a write to a resource that did not exist yet is refused for its version, not for its
    method). A version that cannot be negotiated is left to the endpoint to answer."""

    def __init__(self, app: ASGIApp, spec: ApiSpec) -> None:
        self.app = app
        self.spec = spec

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.spec.gate is not None:
            try:
                version = self.spec.versions.negotiate(Request(scope))
            except IronsightError:
                version = None
            if version is not None:
                try:
                    self.spec.gate(scope["method"], scope["path"], version)
                except IronsightError as exc:
                    await error_response(self.spec, exc, version)(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def _metrics_route(metrics: Metrics) -> Route:
    async def scrape(request: Request) -> Response:
        return Response(await metrics.render(), media_type=CONTENT_TYPE)

    return Route("/metrics", scrape, methods=["GET"])


def routed_by(routes: Sequence[BaseRoute]) -> Callable[[Scope], bool]:
    """Whether one of `routes` serves a request's method and path. A catch-all route (marked
    `catch_all`, answering "not found" in the service's words) does not count."""
    serving = [route for route in routes if not getattr(route, "catch_all", False)]

    def routed(scope: Scope) -> bool:
        return any(route.matches(scope)[0] is Match.FULL for route in serving)

    return routed


def create_app(spec: ApiSpec, deps: Any, routes: Sequence[BaseRoute]) -> Starlette:
    """The service's application; every request passes the authentication middleware first
    when the spec has an authenticator."""
    served = [*routes, _metrics_route(spec.metrics)] if spec.metrics else list(routes)
    middleware = []
    if spec.authenticator is not None:

        def deny(scope: Scope, status: int, message: str, headers: dict[str, str]) -> Response:
            try:  # the version the request asked for, in the refusal's headers too
                version: Version | None = spec.versions.negotiate(Request(scope))
            except IronsightError:
                version = None
            response = error_response(spec, IronsightError(message, code=status), version)
            response.headers.update(headers)
            return response

        conceal = None
        if spec.conceal is not None:
            hook = spec.conceal

            async def conceal(scope: Scope, identity: Identity) -> str | None:
                return await hook(Request(scope), identity)

        middleware.append(Middleware(AuthMiddleware, authenticator=spec.authenticator,
                                     rules=spec.access, deny=deny, routed=routed_by(served),
                                     conceal=conceal))
    if spec.gate is not None:
        middleware.append(Middleware(VersionGate, spec=spec))
    app = Starlette(routes=served, middleware=middleware,
                    exception_handlers={HTTPException: _http_error})
    app.state.spec = spec
    app.state.deps = deps
    return app
