"""What the bare-metal API's endpoints share: Ironic's microversions, their dependencies,
links, and the query parameters Ironic parses the same way everywhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ironsight.baremetal import fields
from ironsight.baremetal.conductor.manager import Conductor
from ironsight.baremetal.conductor.records import Records
from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.common.api.endpoint import RequestContext, endpoint
from ironsight.common.api.versions import VersionPolicy
from ironsight.common.config import Config
from ironsight.common.exceptions import Invalid
from ironsight.common.ratelimit import RateLimiter

VERSIONS = VersionPolicy(
    header="X-OpenStack-Ironic-API-Version", service_type="baremetal",
    minimum=(1, 1), maximum=(1, 115), default_is_newest=False,
    malformed="Invalid value for {header} header", malformed_status=406,
    unsupported="Version {raw} was requested but the minor version is not supported by this "
                "service. The supported version range is: [{min}, {max}].",
    other_major="Mutually exclusive versions requested. Version {raw} requested but not "
                "supported by this service. The supported version range is: [{min}, {max}].",
    too_old="Request not acceptable.", request_ids=True, vary=True, framework_form=True)


@dataclass(frozen=True)
class BaremetalDeps:
    """What the endpoints may use: the conductor's actions and records, the configuration,
    the passage to discoverd."""

    conf: Config
    conductor: Conductor
    records: Records
    ramdisk_limiter: RateLimiter  # per-address limit of /v1/continue_inspection
    # discoverd's API, for what the bare-metal API forwards there (/v1/inspection_rules)
    discoverd: DiscoverdProxy | None = None


Ctx = RequestContext[BaremetalDeps]


def link(base: str, path: str, rel: str = "self") -> dict[str, str]:
    return {"href": f"{base}/{path}", "rel": rel}


def links(base: str, path: str) -> list[dict[str, str]]:
    return [link(base, f"v1/{path}"), link(base, path, "bookmark")]


def parse_bool(name: str, raw: str) -> bool:
    try:
        return fields.ironic_bool(raw)
    except ValueError:
        raise Invalid(f"Invalid value for query parameter '{name}': {raw!r} is not a "
                      "boolean") from None


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


def missing_ident(name: str) -> Any:
    """A write to a collection that only its members take (`DELETE /v1/nodes`): Ironic's
    controller is reached without the identifier and says so."""

    @endpoint
    async def refuse(ctx: Ctx) -> Any:
        raise Invalid(f"Missing mandatory parameter: {name}")

    return refuse
