"""The endpoint wrapper and the request context every endpoint of both services receives.

An endpoint is `async def name(ctx: RequestContext[Deps]) -> result`. The wrapper negotiates
the version, maps errors to the service's envelope (an unexpected exception is logged and
answers 500 without detail), and adds the version headers. A result is a Response, or
`(status, document or None[, extra headers])`.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from ironsight.common.api.app import ApiSpec, error_response, json_response
from ironsight.common.api.body import read_json
from ironsight.common.api.errors import format_validation_error
from ironsight.common.api.versions import Version
from ironsight.common.exceptions import Invalid, IronsightError

LOG = logging.getLogger(__name__)

D = TypeVar("D")


class RequestContext(Generic[D]):
    """One request: the Starlette request, the negotiated version, the API's spec and the
    dependencies its service gave `create_app`."""

    __slots__ = ("deps", "request", "spec", "version")

    def __init__(self, request: Request, version: Version, spec: ApiSpec, deps: D) -> None:
        self.request = request
        self.version = version
        self.spec = spec
        self.deps = deps

    def at_least(self, minor: int) -> bool:
        return self.version[1] >= minor

    def require(self, minor: int) -> None:
        """Refuse (406) a request older than the microversion that introduced a feature."""
        self.spec.versions.require(self.version, minor)

    @property
    def base_url(self) -> str:
        public = self.spec.public_endpoint
        return public.rstrip("/") if public else str(self.request.base_url).rstrip("/")

    def param(self, name: str) -> str:
        return str(self.request.path_params[name])

    async def body(self) -> Any:
        return await read_json(self.request, self.spec.max_body_size, self.spec.max_json_depth)

    def query(self, allowed: set[str]) -> dict[str, str]:
        params = dict(self.request.query_params)
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise Invalid(f"Unknown query parameter(s): {', '.join(unknown)}")
        return params


Endpoint = Callable[[RequestContext[Any]], Awaitable[Any]]


def endpoint(fn: Callable[[RequestContext[D]], Awaitable[Any]]
             ) -> Callable[[Request], Awaitable[Response]]:
    name = fn.__name__.rstrip("_")

    @functools.wraps(fn)
    async def handler(request: Request) -> Response:
        spec: ApiSpec = request.app.state.spec
        started = time.perf_counter()
        response = await _answer(fn, request, spec)
        if spec.metrics is not None:
            spec.metrics.observe_request(request.method, name, response.status_code,
                                         time.perf_counter() - started)
        return response

    return handler


async def _answer(fn: Callable[[RequestContext[D]], Awaitable[Any]], request: Request,
                  spec: ApiSpec) -> Response:
    version: Version | None = None
    try:
        version = spec.versions.negotiate(request)
        ctx = RequestContext(request, version, spec, request.app.state.deps)
        if spec.authorize is not None:
            await spec.authorize(ctx)
        result = await fn(ctx)
    except IronsightError as exc:
        if exc.code >= 500:
            LOG.error("%s %s failed: %s", request.method, request.url.path, exc)
        return error_response(spec, exc, version)
    except ValidationError as exc:
        return error_response(spec, Invalid(format_validation_error(exc)), version)
    except Exception:
        LOG.exception("%s %s crashed", request.method, request.url.path)
        return error_response(
            spec, IronsightError("Internal server error; see the service log."), version)
    headers = spec.versions.headers(version)
    if isinstance(result, Response):
        result.headers.update(headers)
        return result
    status, doc, *extra = result
    if extra:
        headers.update(extra[0])
    if doc is None:
        return Response(status_code=status, headers=headers)
    return json_response(doc, status=status, headers=headers)
