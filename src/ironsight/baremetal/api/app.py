"""The bare-metal service's ASGI application."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from ironsight.baremetal.api import nodes, ports, ramdisk, root
from ironsight.baremetal.api.base import error_response
from ironsight.common.exceptions import IronsightError

if TYPE_CHECKING:
    from ironsight.baremetal.service import BaremetalService


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = f"The resource could not be found: {request.url.path}"
    elif exc.status_code == 405:
        message = f"Method {request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    return error_response(IronsightError(message, code=exc.status_code), None)


def create_app(svc: BaremetalService) -> Starlette:
    app = Starlette(routes=[*root.routes, *nodes.routes, *ports.routes, *ramdisk.routes],
                    exception_handlers={HTTPException: _http_error})
    app.state.svc = svc
    return app
