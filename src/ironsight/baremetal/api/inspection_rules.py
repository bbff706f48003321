"""`/v1/inspection_rules` (Ironic 1.96): discoverd's rules API, forwarded.

Rules are stored and applied in discoverd (one engine for both dialects; docs/rules.md), so
the bare-metal API does not keep them: it checks the microversion (as Ironic does, before
anything else: a GET older than 1.96 is 404, a write 405), then hands the method, the sub-path,
the query and the body to discoverd's `/v1/inspection_rules...`, and gives its answer back as
the bare-metal API's own: links, `next` and `Location` point at this API, and an error is
Ironic's error body with discoverd's status. What python-ironicclient sends wrongly is put
right first (inspection_rules_compat.py). The service reaches discoverd with its own
credentials (baremetal/discoverd_proxy.py); which callers may read or write is decided here,
before forwarding (app.py: reads need a reader, writes an admin).

Two deliberate exceptions to "discoverd's status": 401 and 403 from discoverd mean that
discoverd refused the bare-metal service's own credentials, which the caller can do nothing
about, so they are a 503 that says so (as "discoverd unreachable" is).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.routing import Route

from ironsight.baremetal.api import inspection_rules_compat as compat
from ironsight.baremetal.api.base import Ctx
from ironsight.baremetal.discoverd_proxy import Answer, DiscoverdUnavailable
from ironsight.common.api.endpoint import endpoint
from ironsight.common.api.errors import error_message
from ironsight.common.exceptions import IronsightError

# What follows discoverd's API root in its links: `/v1/inspection_rules...` (self, next) or
# `/inspection_rules...` (bookmark); kept as it is after this API's own base URL.
_TAIL = re.compile(r"(?:/v1)?/inspection_rules(?:[/?].*)?$")


def rebase(href: str, base_url: str) -> str:
    """A link of discoverd's, moved to this API's base URL (unchanged when it is not one of
    the rules API's links)."""
    parts = urlsplit(href)
    tail = parts.path + (f"?{parts.query}" if parts.query else "")
    found = _TAIL.search(tail)
    return f"{base_url}{found.group(0)}" if found else href


def _rebase_links(doc: Any, base_url: str) -> None:
    if isinstance(doc, dict) and isinstance(doc.get("links"), list):
        for item in doc["links"]:
            if isinstance(item, dict) and isinstance(item.get("href"), str):
                item["href"] = rebase(item["href"], base_url)


def rebase_document(doc: Any, base_url: str) -> Any:
    """A rule, or a list of them (`inspection_rules`, with `next`), with its links, and only
    those, rebased: a rule's own args (an `api-call` URL, say) are left alone."""
    if not isinstance(doc, dict):
        return doc
    _rebase_links(doc, base_url)
    for rule in doc.get("inspection_rules") or ():
        _rebase_links(rule, base_url)
    if isinstance(doc.get("next"), str):
        doc["next"] = rebase(doc["next"], base_url)
    return doc


def _error(answer: Answer) -> IronsightError:
    message = error_message(answer.body, answer.reason or f"HTTP {answer.status}")
    if answer.status in (401, 403):
        return DiscoverdUnavailable(
            f"discoverd refused the bare-metal service's credentials (HTTP {answer.status}: "
            f"{message}); check [discoverd] username and password, or the service user's "
            "roles in discoverd.")
    return IronsightError(message, code=answer.status)


def _decoded(answer: Answer) -> Any:
    if not answer.body:
        return None
    try:
        return json.loads(answer.body)
    except ValueError:
        raise IronsightError("discoverd answered with a body that is not JSON",
                             code=502) from None


@endpoint
async def forward(ctx: Ctx) -> Any:
    proxy = ctx.deps.discoverd
    if proxy is None:
        raise DiscoverdUnavailable("This bare-metal API has no link to discoverd.")
    method = ctx.request.method
    rest = compat.sub_path(method, ctx.request.path_params.get("rest", "").strip("/"))
    path = "inspection_rules" + (f"/{quote(rest, safe='/')}" if rest else "")
    has_body = method in ("POST", "PATCH", "PUT")
    body = await ctx.body() if has_body else None
    if method == "POST" and not rest:
        body = compat.create_body(body)
    elif method == "PATCH":
        body = compat.patch_body(body)
    answer = await proxy.forward(method, path, dict(ctx.request.query_params), body,
                                 has_body=has_body)
    if answer.status >= 400:
        raise _error(answer)
    headers: dict[str, str] = {}
    location = answer.headers.get("location")
    if location:
        headers["Location"] = rebase(location, ctx.base_url)
    doc = rebase_document(_decoded(answer), ctx.base_url)
    return answer.status, doc, headers


_METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"]
routes = [
    Route("/v1/inspection_rules", forward, methods=_METHODS),
    Route("/v1/inspection_rules/{rest:path}", forward, methods=_METHODS),
]
