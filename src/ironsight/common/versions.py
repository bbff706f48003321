"""OpenStack-style API microversions, as both services negotiate them: a service-specific
`X-OpenStack-...-API-Version` header, or the generic `OpenStack-API-Version: <type> X.Y`."""

from __future__ import annotations

import re

from starlette.requests import Request

Version = tuple[int, int]
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")


def fmt(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def requested(request: Request, header: str, service_type: str) -> str | None:
    """The version string a request asks for, from either header; None when it asks none."""
    raw = request.headers.get(header)
    if raw is None:
        for part in request.headers.get("openstack-api-version", "").split(","):
            service, _, value = part.strip().partition(" ")
            if service.lower() == service_type:
                raw = value
    return raw.strip() if raw is not None else None


def parse(raw: str) -> Version | None:
    """(major, minor) of 'X.Y'; None when malformed."""
    match = _VERSION_RE.match(raw)
    return (int(match.group(1)), int(match.group(2))) if match else None
