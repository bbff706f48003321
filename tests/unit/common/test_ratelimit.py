"""The per-address token bucket of the ramdisk endpoints."""

from __future__ import annotations

import pytest

from ironsight.common.exceptions import ConfigError
from ironsight.common.ratelimit import RateLimiter, TooManyRequests, parse_networks


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limiter(per_minute: float = 60, burst: int = 3, exempt: str = "",
            max_addresses: int = 100) -> tuple[RateLimiter, Clock]:
    clock = Clock()
    networks = parse_networks([e for e in exempt.split(",") if e], "test")
    return RateLimiter(per_minute, burst, networks, max_addresses=max_addresses,
                       clock=clock), clock


def test_a_burst_passes_then_the_next_request_is_refused_with_retry_after() -> None:
    rl, _ = limiter(per_minute=60, burst=3)
    for _ in range(3):
        rl.check("10.0.0.1")
    with pytest.raises(TooManyRequests) as refused:
        rl.check("10.0.0.1")
    assert refused.value.code == 429
    assert refused.value.headers == {"Retry-After": "1"}


def test_tokens_come_back_at_the_configured_rate() -> None:
    rl, clock = limiter(per_minute=6, burst=1)  # one per 10 s
    rl.check("10.0.0.1")
    clock.now += 5
    with pytest.raises(TooManyRequests) as refused:
        rl.check("10.0.0.1")
    assert refused.value.retry_after == 5
    clock.now += 5
    rl.check("10.0.0.1")


def test_addresses_have_their_own_buckets() -> None:
    rl, _ = limiter(burst=1)
    rl.check("10.0.0.1")
    rl.check("10.0.0.2")
    with pytest.raises(TooManyRequests):
        rl.check("10.0.0.1")


def test_ipv4_mapped_ipv6_is_the_same_address_as_ipv4() -> None:
    rl, _ = limiter(burst=1)
    rl.check("10.0.0.1")
    with pytest.raises(TooManyRequests):
        rl.check("::ffff:10.0.0.1")


def test_exempt_networks_are_never_limited() -> None:
    rl, _ = limiter(burst=1, exempt="127.0.0.0/8,::1")
    for _ in range(50):
        rl.check("127.0.0.1")
        rl.check("::1")
    assert rl.tracked == 0


def test_zero_disables_the_limit() -> None:
    rl, _ = limiter(per_minute=0, burst=1)
    for _ in range(50):
        rl.check("10.0.0.1")


def test_memory_is_bounded_and_the_least_recently_seen_address_is_forgotten() -> None:
    rl, _ = limiter(burst=1, max_addresses=2)
    rl.check("10.0.0.1")
    rl.check("10.0.0.2")
    rl.check("10.0.0.3")  # forgets 10.0.0.1
    assert rl.tracked == 2
    rl.check("10.0.0.1")  # a full bucket again
    with pytest.raises(TooManyRequests):
        rl.check("10.0.0.3")


def test_a_bad_exempt_network_names_the_option() -> None:
    with pytest.raises(ConfigError, match=r"^\[introspection\] x: 'nope' is not an IP"):
        parse_networks(["nope"], "[introspection] x")
