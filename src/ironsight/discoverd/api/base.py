"""What discoverd's endpoints share: the inspector's microversions and their dependencies."""

from __future__ import annotations

from dataclasses import dataclass

from ironsight.common.api.endpoint import RequestContext
from ironsight.common.api.versions import VersionPolicy
from ironsight.common.config import Config
from ironsight.common.exceptions import Invalid
from ironsight.common.ratelimit import RateLimiter
from ironsight.discoverd.deadlines import Deadlines
from ironsight.discoverd.fleet.index import FleetIndex
from ironsight.discoverd.introspect import Introspector
from ironsight.discoverd.ironic import BareMetal
from ironsight.discoverd.members import Members
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.process import Processor
from ironsight.discoverd.rule_runner import RuleRunner
from ironsight.discoverd.webhooks import Webhooks

# Both the X- header and `OpenStack-API-Version: baremetal-introspection X.Y` are read
# (upstream documented the second but parsed only the first). No header: the newest.
VERSIONS = VersionPolicy(
    header="X-OpenStack-Ironic-Inspector-API-Version", service_type="baremetal-introspection",
    minimum=(1, 0), maximum=(1, 18), default_is_newest=True,
    malformed="Malformed API version {raw!r}: expected MAJOR.MINOR",
    unsupported="Unsupported API version {raw}, supported range is {min} to {max}",
    too_old="This call needs API version 1.{minor} or newer")


@dataclass(frozen=True)
class DiscoverdDeps:
    """What the endpoints may use."""

    conf: Config
    cache: NodeCache
    introspector: Introspector
    processor: Processor
    ironic: BareMetal  # names in paths are resolved to UUIDs through the bare-metal API
    members: Members
    ramdisk_limiter: RateLimiter  # per-address limit of /v1/continue and the boot scripts
    rules: RuleRunner  # inspection rules: the stored and built-in ones, and the engine
    deadlines: Deadlines | None = None  # the learned step deadlines
    fleet: FleetIndex | None = None  # every node's document, for fleet queries
    webhooks: Webhooks | None = None  # the webhook outbox, its deliveries listed and retried


Ctx = RequestContext[DiscoverdDeps]

# The most records an ironsight listing of discoverd answers with (`limit`).
MAX_LIMIT = 1000


def parse_limit(params: dict[str, str], default: int = 100) -> int:
    """`limit` of an ironsight listing (rejected callbacks, discovery conflicts): 1 to
    MAX_LIMIT; a 400 naming it otherwise."""
    raw = params.get("limit", str(default))
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 4 and 0 < int(raw) <= MAX_LIMIT):
        raise Invalid(f"Invalid value for limit: {raw!r} (1 to {MAX_LIMIT})")
    return int(raw)
