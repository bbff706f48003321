"""Per-source-address rate limits for the unauthenticated ramdisk endpoints (the callbacks and
the PXE boot scripts): a token bucket per address, in memory.

Each process keeps its own buckets: N replicas behind a load balancer let an address through
up to N times the limit. The number of addresses tracked is capped; beyond it the one seen
least recently is forgotten (a forgotten address starts again with a full bucket), so a flood
from many addresses costs bounded memory.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ironsight.common.exceptions import ConfigError, IronsightError

if TYPE_CHECKING:
    from ironsight.common.config import Config

MAX_ADDRESSES = 10000
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class TooManyRequests(IronsightError):
    """429, with the seconds after which the address may try again (`Retry-After`)."""

    code = 429

    def __init__(self, retry_after: float) -> None:
        self.retry_after = max(1, math.ceil(retry_after))
        super().__init__(f"Too many requests from this address; retry after "
                         f"{self.retry_after} s")
        self.headers = {"Retry-After": str(self.retry_after)}


@dataclass
class _Bucket:
    tokens: float
    at: float


def parse_networks(values: Iterable[str], where: str) -> tuple[Network, ...]:
    """Addresses or networks (CIDR) of a config option; ConfigError names the option."""
    found = []
    for value in values:
        try:
            found.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ConfigError(f"{where}: {value!r} is not an IP address or network") from None
    return tuple(found)


def plain_address(host: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The client's address, an IPv4-mapped IPv6 one as IPv4 (a dual-stack listener's)."""
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class RateLimiter:
    def __init__(self, per_minute: float, burst: int, exempt: tuple[Network, ...] = (), *,
                 max_addresses: int = MAX_ADDRESSES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """`per_minute` 0 disables the limit. `burst` is the bucket's size (at least 1)."""
        self.rate = per_minute / 60.0
        self.burst = float(max(burst, 1))
        self.exempt = exempt
        self.max_addresses = max_addresses
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    @property
    def tracked(self) -> int:
        return len(self._buckets)

    def check(self, host: str | None) -> None:
        """Take one request's token for `host`, or raise TooManyRequests."""
        if self.rate <= 0:
            return
        address = plain_address(host)
        if address is not None and any(address in net for net in self.exempt):
            return
        key = str(address) if address is not None else str(host)
        now = self.clock()
        bucket = self._buckets.pop(key, None)
        if bucket is None:
            bucket = _Bucket(self.burst, now)
            while len(self._buckets) >= self.max_addresses:
                self._buckets.popitem(last=False)
        else:
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
        self._buckets[key] = bucket  # most recently seen last
        if bucket.tokens < 1:
            raise TooManyRequests((1 - bucket.tokens) / self.rate)
        bucket.tokens -= 1


def ramdisk_limiter(conf: Config) -> RateLimiter:
    """The ramdisk endpoints' limiter from `[introspection]` (both services read it)."""
    section = conf.introspection
    exempt = parse_networks(section.ramdisk_rate_limit_exempt,
                            "[introspection] ramdisk_rate_limit_exempt")
    return RateLimiter(section.ramdisk_rate_limit, section.ramdisk_rate_burst, exempt)
