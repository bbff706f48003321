"""discoverd's ASGI application."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from ironsight.common.exceptions import IronsightError
from ironsight.discoverd.api import callback, introspection, root
from ironsight.discoverd.api.base import error_response

if TYPE_CHECKING:
    from ironsight.discoverd.service import DiscoverdService


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = (f"The resource could not be found: {request.url.path}" if exc.status_code == 404
               else f"Method {request.method} is not allowed on {request.url.path}"
               if exc.status_code == 405 else str(exc.detail))
    return error_response(IronsightError(message, code=exc.status_code), None)


def create_app(svc: DiscoverdService) -> Starlette:
    pxe_routes = svc.pxe.routes() if svc.pxe is not None else []
    app = Starlette(routes=[*root.routes, *introspection.routes, *callback.routes, *pxe_routes],
                    exception_handlers={HTTPException: _http_error})
    app.state.svc = svc
    return app
