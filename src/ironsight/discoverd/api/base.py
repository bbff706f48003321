"""What every discoverd endpoint shares: inspector API versions, `{"error": {"message"}}`
errors, headers, the service handle."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from ironsight.common import versions
from ironsight.common.exceptions import Invalid, IronsightError, NotAcceptable
from ironsight.common.http import json_response
from ironsight.common.versions import fmt

if TYPE_CHECKING:
    from ironsight.discoverd.service import DiscoverdService

LOG = logging.getLogger(__name__)

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 18)
VERSION_HEADER = "X-OpenStack-Ironic-Inspector-API-Version"


def parse_version(request: Request) -> tuple[int, int]:
    """Both the X- header and `OpenStack-API-Version: baremetal-introspection X.Y` are read
    (upstream documented the second but parsed only the first). No header: the newest."""
    raw = versions.requested(request, VERSION_HEADER, "baremetal-introspection")
    if raw is None or raw.lower() == "latest":
        return MAX_VERSION
    version = versions.parse(raw)
    if version is None:
        raise Invalid(f"Malformed API version {raw!r}: expected MAJOR.MINOR")
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptable(f"Unsupported API version {raw}, supported range is "
                            f"{fmt(MIN_VERSION)} to {fmt(MAX_VERSION)}")
    return version


def headers(version: tuple[int, int] | None) -> dict[str, str]:
    found = {"X-OpenStack-Ironic-Inspector-API-Minimum-Version": fmt(MIN_VERSION),
             "X-OpenStack-Ironic-Inspector-API-Maximum-Version": fmt(MAX_VERSION)}
    if version is not None:
        found[VERSION_HEADER] = fmt(version)
        found["OpenStack-API-Version"] = f"baremetal-introspection {fmt(version)}"
    return found


def error_response(exc: IronsightError, version: tuple[int, int] | None) -> Response:
    return json_response({"error": {"message": exc.message}}, status=exc.code,
                         headers=headers(version))


@dataclass
class Ctx:
    request: Request
    version: tuple[int, int]
    svc: DiscoverdService

    @property
    def base_url(self) -> str:
        public = self.svc.conf.introspection.public_endpoint
        return public.rstrip("/") if public else str(self.request.base_url).rstrip("/")

    def require(self, minor: int) -> None:
        if self.version < (1, minor):
            raise NotAcceptable(f"This call needs API version 1.{minor} or newer")

    def query(self, allowed: set[str]) -> dict[str, str]:
        params = dict(self.request.query_params)
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise Invalid(f"Unknown query parameter(s): {', '.join(unknown)}")
        return params


def endpoint(fn: Callable[[Ctx], Awaitable[Any]]) -> Callable[[Request], Awaitable[Response]]:
    """Wrap an endpoint: version negotiation, error mapping, headers. The endpoint returns
    (status, document or None)."""

    @functools.wraps(fn)
    async def handler(request: Request) -> Response:
        version: tuple[int, int] | None = None
        try:
            version = parse_version(request)
            status, doc = await fn(Ctx(request, version, request.app.state.svc))
        except IronsightError as exc:
            if exc.code >= 500:
                LOG.error("%s %s failed: %s", request.method, request.url.path, exc)
            return error_response(exc, version)
        except Exception:
            LOG.exception("%s %s crashed", request.method, request.url.path)
            return error_response(IronsightError("Internal server error; see the service log"),
                                  version)
        if doc is None:
            return Response(status_code=status, headers=headers(version))
        return json_response(doc, status=status, headers=headers(version))

    return handler
