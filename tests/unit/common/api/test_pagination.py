"""Pagination: the `next` link a list answer carries, and how a client follows one."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from ironsight.common.api.pagination import next_link, next_query


def test_next_link_keeps_the_filters_and_sets_limit_and_marker() -> None:
    link = next_link("http://api:6385", "v1/nodes", {"driver": "fake", "marker": "old",
                                                      "limit": "5"}, limit=10, marker="u9")
    parts = urlsplit(link)
    assert (parts.netloc, parts.path) == ("api:6385", "/v1/nodes")
    assert parse_qs(parts.query) == {"driver": ["fake"], "limit": ["10"], "marker": ["u9"]}


def test_next_link_takes_a_request_path_with_its_slash() -> None:
    assert next_link("http://a", "/v1/ports", {}, limit=1, marker="m").startswith(
        "http://a/v1/ports?")


def test_a_client_follows_only_the_query_and_keeps_its_own_filters() -> None:
    seen: set[str] = set()
    query = next_query("http://public-name/v1/nodes?marker=u9&limit=10", {"driver": "fake"},
                       seen)
    assert query == {"driver": "fake", "marker": "u9", "limit": "10"}


def test_no_link_ends_the_pages() -> None:
    assert next_query(None, {}, set()) is None


def test_a_link_seen_before_ends_the_pages() -> None:
    seen: set[str] = set()
    assert next_query("http://a/v1/nodes?marker=x", {}, seen) is not None
    assert next_query("http://a/v1/nodes?marker=x", {}, seen) is None
