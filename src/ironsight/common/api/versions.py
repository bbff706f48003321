"""OpenStack API microversions, negotiated the same way by both services.

A request asks for a version with its service's own header (`X-OpenStack-Ironic-API-Version`,
`X-OpenStack-Ironic-Inspector-API-Version`) or the generic `OpenStack-API-Version: <service
type> X.Y`; answers say which one they speak and the supported range. What differs between the
two services (header names, range, the default for a request that asks none, the error texts
their clients know) is a `VersionPolicy`, not code.
"""

from __future__ import annotations

import re
import uuid as uuidlib
from dataclasses import dataclass

from starlette.requests import Request

from ironsight.common.exceptions import Invalid, IronsightError, NotAcceptable, RoutingError

Version = tuple[int, int]
# At most 9 digits each side: a version header is short, and int() of a long digit string costs
# time (and past 4300 digits raises). Longer is malformed (400), like any other garbage.
_VERSION_RE = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})")
# The longest header value looked at; a longer one is malformed without being parsed.
MAX_HEADER_LENGTH = 64


def fmt(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def parse(raw: str) -> Version | None:
    """(major, minor) of 'X.Y'; None when malformed."""
    match = _VERSION_RE.fullmatch(raw)
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True)
class VersionPolicy:
    """One service's microversions. The message templates are str.format()ed with `header`,
    `raw` (what the request asked), `min`, `max` and `minor`."""

    header: str
    service_type: str
    minimum: Version
    maximum: Version
    # a request without a version header gets the oldest (Ironic) or the newest (inspector)
    default_is_newest: bool
    malformed: str
    unsupported: str
    too_old: str  # an endpoint or feature newer than the request's version
    request_ids: bool = False  # answer with openstack-request-id (Ironic does)
    vary: bool = False
    malformed_status: int = 400  # Ironic: 406
    # a version of another major (Ironic words it apart); None: `unsupported` as for any
    other_major: str | None = None
    # refused by the web framework before the API (Ironic's webob): RoutingError's form
    framework_form: bool = False

    @property
    def min_header(self) -> str:
        return self.header.removesuffix("Version") + "Minimum-Version"

    @property
    def max_header(self) -> str:
        return self.header.removesuffix("Version") + "Maximum-Version"

    def requested(self, request: Request) -> str | None:
        """The version string a request asks for, from either header; None when it asks none."""
        raw = request.headers.get(self.header)
        if raw is None:
            for part in request.headers.get("openstack-api-version", "").split(","):
                service, _, value = part.strip().partition(" ")
                if service.lower() == self.service_type:
                    raw = value
        return raw.strip() if raw is not None else None

    def negotiate(self, request: Request) -> Version:
        raw = self.requested(request)
        if raw is None:
            return self.maximum if self.default_is_newest else self.minimum
        if raw.lower() == "latest":
            return self.maximum
        version = parse(raw) if len(raw) <= MAX_HEADER_LENGTH else None
        if version is None:
            raw = raw if len(raw) <= MAX_HEADER_LENGTH else raw[:MAX_HEADER_LENGTH] + "..."
            raise self._refusal(self.malformed.format(**self._fields(raw)),
                                self.malformed_status)
        if not self.minimum <= version <= self.maximum:
            template = self.unsupported
            if self.other_major is not None and version[0] != self.minimum[0]:
                template = self.other_major
            raise self._refusal(template.format(**self._fields(raw)), 406)
        return version

    def _refusal(self, message: str, code: int) -> IronsightError:
        if self.framework_form:
            return RoutingError(message, code, description=message)
        if code == 406:
            return NotAcceptable(message)
        return Invalid(message) if code == 400 else IronsightError(message, code)

    def require(self, version: Version, minor: int) -> None:
        if version[1] < minor:
            raise NotAcceptable(self.too_old.format(minor=minor))

    def headers(self, version: Version | None) -> dict[str, str]:
        """What every answer carries; `version` is None when negotiation itself failed."""
        found = {self.min_header: fmt(self.minimum), self.max_header: fmt(self.maximum)}
        if self.request_ids:
            request_id = f"req-{uuidlib.uuid4()}"
            found["openstack-request-id"] = request_id
            found["x-openstack-request-id"] = request_id
        if self.vary:
            found["Vary"] = self.header
        if version is not None:
            found[self.header] = fmt(version)
            found["OpenStack-API-Version"] = f"{self.service_type} {fmt(version)}"
        return found

    def _fields(self, raw: str) -> dict[str, str]:
        return {"header": self.header, "raw": raw, "min": fmt(self.minimum),
                "max": fmt(self.maximum)}
