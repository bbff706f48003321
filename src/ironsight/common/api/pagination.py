"""Pagination links, both ends: the `next` link a list answer carries, and the query a
client follows it with. No web framework here: client code imports this module."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit


def next_link(base_url: str, path: str, params: Mapping[str, str], *, limit: int,
              marker: str) -> str:
    """`{base_url}/{path}?...`: the request's own filters, then `limit` and `marker`."""
    query = {k: v for k, v in params.items() if k not in ("limit", "marker")}
    query.update(limit=str(limit), marker=marker)
    return f"{base_url}/{path.lstrip('/')}?{urlencode(query)}"


def next_query(link: str | None, params: Mapping[str, str],
               seen: set[str]) -> dict[str, str] | None:
    """The query to ask for the page after one whose `next` is `link`, or None at the end.

    Only the link's query is used, against the client's own URL: a server builds links from
    its public endpoint, which the client may not reach it by. The client's filters are kept
    in case the link leaves some out; a link seen before (a server that loops) ends it.
    """
    if not link or link in seen:
        return None
    seen.add(link)
    return {**params, **dict(parse_qsl(urlsplit(link).query))}
