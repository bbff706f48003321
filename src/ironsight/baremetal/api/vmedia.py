"""`GET|HEAD /vmedia/{node}/{image}.iso`: the inspection ISO as one node's BMC fetches it.

Open without credentials (a BMC fetches media anonymously): the image's random name, valid
for one attempt, is what admits the request (conductor/vmedia.py). The bytes are the shared,
cached ISO with the node's parameter block in place of the placeholder, patched while they
are streamed; single byte ranges are served (BMCs read media lazily), as any web server
does. An unknown or withdrawn image is a plain 404 that says no more.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from starlette.concurrency import iterate_in_threadpool
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ironsight.baremetal.api.base import Ctx
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import NotFound
from ironsight.common.ids import is_uuid_like
from ironsight.ramdisk.iso import patched_range

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_NAME = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


def _range(header: str | None, size: int) -> tuple[int, int] | None:
    """(start, end exclusive) of a single `Range: bytes=` the file can serve; None: the whole
    file. A range past the end raises ValueError (416)."""
    if not header:
        return None
    match = _RANGE.match(header.strip())
    if match is None or match.group(1) == match.group(2) == "":
        return None  # not one we understand (several ranges...): the whole file, as allowed
    first, last = match.groups()
    if first == "":  # the last N bytes
        start, end = max(size - int(last), 0), size
    else:
        start = int(first)
        end = min(int(last) + 1, size) if last else size
    if start >= size or start >= end:
        raise ValueError
    return start, end


@endpoint
async def image(ctx: Ctx) -> Any:
    uuid, name = ctx.param("node").lower(), ctx.param("image")
    found = (ctx.deps.conductor.media.lookup(uuid, name)
             if is_uuid_like(uuid) and _NAME.match(name) else None)
    if found is None:
        raise NotFound("No such image.")
    iso, block = found
    size = iso.path.stat().st_size
    headers = {"Accept-Ranges": "bytes", "Cache-Control": "no-store",
               "Content-Type": "application/octet-stream"}
    try:
        wanted = _range(ctx.request.headers.get("range"), size)
    except ValueError:
        return Response(status_code=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    start, end = wanted or (0, size)
    status = 206 if wanted else 200
    if wanted:
        headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
    headers["Content-Length"] = str(end - start)
    if ctx.request.method == "HEAD":
        return Response(status_code=status, headers=headers)
    chunks: Iterator[bytes] = patched_range(iso, block, start, end)
    return StreamingResponse(iterate_in_threadpool(chunks), status_code=status,
                             headers=headers)


routes = [Route("/vmedia/{node}/{image}.iso", image, methods=["GET", "HEAD"])]
