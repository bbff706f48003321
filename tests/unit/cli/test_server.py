"""`ironsight serve`'s process set-up."""

from __future__ import annotations

import gc
import logging
import socket
from typing import Any

import pytest

from ironsight.cli.server import _settle_heap, baremetal_in_process, loopback_client
from ironsight.common import config


def test_what_start_up_made_is_out_of_the_collectors_reach() -> None:
    """Full collections then walk only what the services made since (bench/RESULTS.md)."""
    gc.unfreeze()
    leftover = [object() for _ in range(1000)]
    try:
        _settle_heap()
        assert gc.get_freeze_count() >= len(leftover)
    finally:
        gc.unfreeze()


# --- discoverd's way to the bare-metal API: in-process or over HTTP ---------------------------

def test_the_default_ironic_url_is_this_processs_own_listener() -> None:
    """`[introspection] ironic_url` = http://127.0.0.1:6385, `[api]` on 127.0.0.1:6385: the
    application sees the call come from 127.0.0.1, as over loopback."""
    assert loopback_client("http://127.0.0.1:6385", "127.0.0.1", 6385, tls=False) == (
        ("127.0.0.1", 6385), ("127.0.0.1", 0))
    assert loopback_client("http://127.0.0.1:6385/", "127.0.0.1", 6385, tls=False) is not None


@pytest.mark.parametrize(("url", "host", "port", "tls"), [
    ("http://127.0.0.1:6385", "127.0.0.1", 6386, False),  # another port
    ("http://:6385", "0.0.0.0", 6385, False),  # no host
    ("http://127.0.0.1:6385", "127.0.0.1", 6385, True),  # the listener speaks TLS
    ("https://127.0.0.1:6385", "127.0.0.1", 6385, False),
    ("http://127.0.0.1", "127.0.0.1", 6385, False),  # port 80
    ("http://user:pw@127.0.0.1:6385", "127.0.0.1", 6385, False),
    ("http://192.0.2.10:6385", "0.0.0.0", 6385, False),  # not this machine's (TEST-NET-1)
    ("http://192.0.2.10:6385", "127.0.0.1", 6385, False),
    ("http://127.0.0.1:6385", "::", 6385, False),  # asyncio binds :: for IPv6 only
    ("http://127.0.0.1:6385", "127.0.0.2", 6385, False),  # another loopback address
    ("http://haproxy.invalid:6385", "127.0.0.1", 6385, False),  # unresolvable
    ("http://127.0.0.1:notaport", "127.0.0.1", 6385, False),
])
def test_any_other_url_stays_on_http(url: str, host: str, port: int, tls: bool) -> None:
    assert loopback_client(url, host, port, tls=tls) is None


def test_a_listener_on_every_address_takes_loopback_calls() -> None:
    assert loopback_client("http://127.0.0.1:6385", "0.0.0.0", 6385, tls=False) == (
        ("127.0.0.1", 6385), ("127.0.0.1", 0))
    # the kernel connects to any 127.x address from 127.0.0.1: the client the app sees
    assert loopback_client("http://127.0.0.2:6385", "0.0.0.0", 6385, tls=False) == (
        ("127.0.0.2", 6385), ("127.0.0.1", 0))


def test_a_name_counts_only_when_the_listener_takes_all_its_addresses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"localhost": ["127.0.0.1"]}

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                 (a, port)) for a in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    assert loopback_client("http://localhost:6385", "127.0.0.1", 6385, tls=False) == (
        ("127.0.0.1", 6385), ("127.0.0.1", 0))
    # ::1 first: aiohttp would try it first, and another process may listen there
    answers["localhost"] = ["::1", "127.0.0.1"]
    assert loopback_client("http://localhost:6385", "127.0.0.1", 6385, tls=False) is None


def test_ipv6_loopback() -> None:
    if not socket.has_ipv6 or not _bindable("::1"):
        pytest.skip("no IPv6 loopback here")
    assert loopback_client("http://[::1]:6385", "::1", 6385, tls=False) == (
        ("::1", 6385), ("::1", 0))
    assert loopback_client("http://[::1]:6385", "::", 6385, tls=False) is not None
    assert loopback_client("http://[::1]:6385", "0.0.0.0", 6385, tls=False) is None


def _bindable(address: str) -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind((address, 0))
    except OSError:
        return False
    return True


def test_serve_says_which_way_discoverd_calls(caplog: pytest.LogCaptureFixture) -> None:
    class Baremetal:
        app = object()

    conf = config.load(overrides={"api": {"port": "16385"}, "introspection": {
        "ironic_url": "http://127.0.0.1:16385"}})
    with caplog.at_level(logging.INFO, logger="ironsight.cli.server"):
        local = baremetal_in_process(conf, Baremetal())
        assert local is not None and local.app is Baremetal.app
        assert local.client == ("127.0.0.1", 0)
        assert "discoverd calls the bare-metal API in-process" in caplog.text
        caplog.clear()
        assert baremetal_in_process(conf, None) is None  # serve --only discoverd
        assert "over HTTP at http://127.0.0.1:16385" in caplog.text
        caplog.clear()
        other = config.load(overrides={"api": {"port": "16385"}, "introspection": {
            "ironic_url": "http://127.0.0.1:16386"}})  # HAProxy in front, say
        assert baremetal_in_process(other, Baremetal()) is None
        assert "over HTTP at http://127.0.0.1:16386" in caplog.text


def test_the_console_finds_discoverd_in_the_same_process_when_no_url_names_it() -> None:
    from ironsight.cli.server import local_discoverd_url

    conf = config.load(overrides={"introspection": {"host": "0.0.0.0", "port": "15050"}})
    assert local_discoverd_url(conf, None) == "http://127.0.0.1:15050/v1"
    assert local_discoverd_url(conf, "baremetal") is None  # not in this process
    named = config.load(overrides={"discoverd": {"service_url": "http://di:5050/v1"}})
    assert local_discoverd_url(named, None) is None
    v6 = config.load(overrides={"introspection": {"host": "::1"}})
    assert local_discoverd_url(v6, None) == "http://[::1]:5050/v1"
