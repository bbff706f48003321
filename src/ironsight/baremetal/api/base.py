"""What every bare-metal API endpoint shares: microversion negotiation, Ironic's error
envelope and response headers, the service handle."""

from __future__ import annotations

import functools
import json
import logging
import uuid as uuidlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from ironsight.common import versions
from ironsight.common.exceptions import Invalid, IronsightError, NotAcceptable
from ironsight.common.http import format_validation_error, json_response, read_json
from ironsight.common.versions import fmt

if TYPE_CHECKING:
    from ironsight.baremetal.service import BaremetalService

LOG = logging.getLogger(__name__)

MIN_VERSION = (1, 1)
MAX_VERSION = (1, 115)
VERSION_HEADER = "X-OpenStack-Ironic-API-Version"


def parse_version(request: Request) -> tuple[int, int]:
    raw = versions.requested(request, VERSION_HEADER, "baremetal")
    if raw is None:
        return MIN_VERSION
    if raw.lower() == "latest":
        return MAX_VERSION
    version = versions.parse(raw)
    if version is None:
        raise Invalid(f"Invalid value for {VERSION_HEADER} header: {raw!r} "
                      "(expected MAJOR.MINOR or 'latest')")
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptable(
            f"Version {raw} was requested but the minor version is not supported by this "
            f"service. The supported version range is: [{fmt(MIN_VERSION)}, {fmt(MAX_VERSION)}].")
    return version


def version_headers(version: tuple[int, int] | None) -> dict[str, str]:
    request_id = f"req-{uuidlib.uuid4()}"
    headers = {
        "X-OpenStack-Ironic-API-Minimum-Version": fmt(MIN_VERSION),
        "X-OpenStack-Ironic-API-Maximum-Version": fmt(MAX_VERSION),
        "openstack-request-id": request_id,
        "x-openstack-request-id": request_id,
        "Vary": "X-OpenStack-Ironic-API-Version",
    }
    if version is not None:
        headers[VERSION_HEADER] = fmt(version)
        headers["OpenStack-API-Version"] = f"baremetal {fmt(version)}"
    return headers


def error_response(exc: IronsightError, version: tuple[int, int] | None) -> Response:
    """Ironic's envelope: the fault document encoded as a JSON string inside JSON."""
    fault = {"faultcode": "Client" if exc.code < 500 else "Server",
             "faultstring": exc.message, "debuginfo": None}
    return json_response({"error_message": json.dumps(fault)}, status=exc.code,
                         headers=version_headers(version))


@dataclass
class Ctx:
    """Per-request context handed to endpoint functions."""

    request: Request
    version: tuple[int, int]
    svc: BaremetalService

    def at_least(self, minor: int) -> bool:
        return self.version >= (1, minor)

    def require(self, minor: int) -> None:
        if not self.at_least(minor):
            raise NotAcceptable("Request not acceptable.")

    @property
    def base_url(self) -> str:
        public = self.svc.conf.api.public_endpoint
        if public:
            return public.rstrip("/")
        return str(self.request.base_url).rstrip("/")

    async def body(self) -> Any:
        return await read_json(self.request, self.svc.conf.api.max_body_size)

    def query(self, allowed: set[str]) -> dict[str, str]:
        params = dict(self.request.query_params)
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise Invalid(f"Unknown query parameter(s): {', '.join(unknown)}")
        return params


Endpoint = Callable[[Ctx], Awaitable[Any]]


def endpoint(fn: Endpoint) -> Callable[[Request], Awaitable[Response]]:
    """Wrap an endpoint: negotiate the version, map errors, add Ironic's headers.

    The endpoint returns a Response, or (status, document[, extra headers]).
    """

    @functools.wraps(fn)
    async def handler(request: Request) -> Response:
        version: tuple[int, int] | None = None
        try:
            version = parse_version(request)
            result = await fn(Ctx(request, version, request.app.state.svc))
        except IronsightError as exc:
            if exc.code >= 500:
                LOG.error("%s %s failed: %s", request.method, request.url.path, exc)
            return error_response(exc, version)
        except ValidationError as exc:
            return error_response(Invalid(format_validation_error(exc)), version)
        except Exception:
            LOG.exception("%s %s crashed", request.method, request.url.path)
            return error_response(IronsightError("Internal server error; see the service log."),
                                  version)
        headers = version_headers(version)
        if isinstance(result, Response):
            result.headers.update(headers)
            return result
        status, doc, *extra = result
        if extra:
            headers.update(extra[0])
        if doc is None:
            return Response(status_code=status, headers=headers)
        return json_response(doc, status=status, headers=headers)

    return handler


def link(base: str, path: str, rel: str = "self") -> dict[str, str]:
    return {"href": f"{base}/{path}", "rel": rel}


def links(base: str, path: str) -> list[dict[str, str]]:
    return [link(base, f"v1/{path}"), link(base, path, "bookmark")]


def parse_bool(name: str, raw: str) -> bool:
    low = raw.lower()
    if low in ("1", "true", "yes", "on", "y"):
        return True
    if low in ("0", "false", "no", "off", "n"):
        return False
    raise Invalid(f"Invalid value for query parameter '{name}': {raw!r} is not a boolean")


def parse_limit(raw: str | None, max_limit: int) -> int:
    if raw is None:
        return max_limit
    try:
        limit = int(raw)
    except ValueError:
        raise Invalid(f"Invalid value for query parameter 'limit': {raw!r}") from None
    if limit < 0:
        raise Invalid(f"Invalid value for query parameter 'limit': {limit} is negative")
    return max_limit if limit == 0 else min(limit, max_limit)


def parse_sort(params: dict[str, str], allowed: set[str]) -> tuple[str, str]:
    key = params.get("sort_key", "id")
    direction = params.get("sort_dir", "asc")
    if key not in allowed:
        raise Invalid(f"Invalid value for query parameter 'sort_key': {key!r} "
                      f"(one of: {', '.join(sorted(allowed))})")
    if direction not in ("asc", "desc"):
        raise Invalid(f"Invalid value for query parameter 'sort_dir': {direction!r} "
                      "(asc or desc)")
    return key, direction
