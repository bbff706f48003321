"""Posting: retries with backoff against a real local HTTP server."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from ironsight.agent import post

BODY = b'{"inventory": {"interfaces": [{"mac_address": "52:54:00:12:34:56"}]}}'


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def test_a_202_is_returned_with_the_servers_body(callback_server):
    reply = post.post(callback_server.url, BODY, sleep=Sleeps())
    assert (reply.status, reply.body) == (202, '{"ok":1}')


def test_the_document_is_sent_as_json(callback_server):
    post.post(callback_server.url, BODY, sleep=Sleeps())
    assert callback_server.content_types == ["application/json"]
    assert callback_server.received[0]["inventory"]["interfaces"][0]["mac_address"] == \
        "52:54:00:12:34:56"


def test_503_is_retried_until_accepted(callback_server):
    callback_server.replies = [(503, "busy"), (503, "busy")]
    sleeps = Sleeps()
    assert post.post(callback_server.url, BODY, delay=0.01, sleep=sleeps).status == 202
    assert (len(callback_server.received), sleeps) == (3, [0.01, 0.02])


def test_409_node_locked_is_retried(callback_server):
    callback_server.replies = [(409, "locked")]
    assert post.post(callback_server.url, BODY, sleep=Sleeps()).status == 202
    assert len(callback_server.received) == 2


def test_429_is_retried_after_at_least_its_retry_after(callback_server):
    callback_server.replies = [(429, "slow down")]
    sleeps = Sleeps()
    assert post.post(callback_server.url, BODY, delay=0.5, sleep=sleeps).status == 202
    assert (len(callback_server.received), sleeps) == (2, [3.0])


def test_extra_headers_are_sent(callback_server):
    post.post(callback_server.url, BODY, sleep=Sleeps(),
              headers={"X-Ironsight-Callback-Token": "tok"})
    assert callback_server.tokens == ["tok"]


def test_400_is_final_and_carries_the_servers_message(callback_server):
    callback_server.replies = [(400, '{"error_message": "Schema error"}')]
    sleeps = Sleeps()
    with pytest.raises(post.PostError, match=r"HTTP 400 .*Schema error"):
        post.post(callback_server.url, BODY, sleep=sleeps)
    assert (len(callback_server.received), sleeps) == (1, [])


def test_5xx_gives_up_after_the_last_attempt(callback_server):
    callback_server.replies = [(500, "boom")] * 3
    with pytest.raises(post.PostError, match=r"HTTP 500.*gave up after 3 attempts"):
        post.post(callback_server.url, BODY, attempts=3, sleep=Sleeps())
    assert len(callback_server.received) == 3


def test_connection_errors_are_retried(dead_url):
    sleeps = Sleeps()
    with pytest.raises(post.PostError, match=r"cannot reach .*gave up after 4 attempts"):
        post.post(dead_url, BODY, attempts=4, sleep=sleeps)
    assert len(sleeps) == 3


def test_backoff_doubles_up_to_the_cap(dead_url):
    sleeps = Sleeps()
    with pytest.raises(post.PostError):
        post.post(dead_url, BODY, attempts=6, delay=1, max_delay=4, sleep=sleeps)
    assert sleeps == [1, 2, 4, 4, 4]


def test_an_unusable_url_is_final():
    sleeps = Sleeps()
    with pytest.raises(post.PostError, match="invalid callback URL"):
        post.post("nonsense", BODY, sleep=sleeps)
    assert sleeps == []


class _Server6(HTTPServer):
    address_family = socket.AF_INET6


@pytest.mark.skipif(not socket.has_ipv6, reason="needs IPv6")
def test_an_ipv6_literal_url_is_posted_to():
    """IPv6-only provisioning networks: http://[addr]:port/ as discoverd's URL. The Host
    header keeps the brackets, as RFC 7230 wants."""
    seen: list[tuple[str, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.headers["Host"], body))
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = _Server6(("::1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True).start()
    port = httpd.server_address[1]
    try:
        reply = post.post(f"http://[::1]:{port}/v1/continue", BODY, sleep=Sleeps())
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert reply.status == 202
    assert seen == [(f"[::1]:{port}", BODY)]
