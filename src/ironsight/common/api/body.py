"""Request bodies: read within a size limit, parse within a depth limit, and say what is wrong
with a message that names the field. Both services read every body through here, so an
oversized or hostile body costs the same bounded work on every endpoint."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from ironsight.common.exceptions import Invalid, IronsightError


class PayloadTooLarge(IronsightError):
    code = 413


async def read_body(request: Request, limit: int, what: str = "Request body") -> bytes:
    """The raw body, refused (413) as soon as it passes `limit` bytes: a declared length is
    checked before anything is read, a streamed one while it arrives."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"{what} is {declared} bytes; the limit is {limit}.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"{what} is larger than the limit of {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(raw: bytes, max_depth: int, what: str = "Request body") -> Any:
    """The JSON document in `raw`; `max_depth` bounds its nesting (arrays and objects), which
    the size limit alone does not: a 1 MB body can nest half a million levels deep."""
    if not raw.strip():
        raise Invalid(f"{what} is not valid JSON: it is empty; a JSON document is required.")
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Invalid(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise Invalid(f"{what} is nested more than {max_depth} levels deep.") from None
    if _depth_exceeds(doc, max_depth):
        raise Invalid(f"{what} is nested more than {max_depth} levels deep.")
    return doc


def _depth_exceeds(doc: Any, max_depth: int) -> bool:
    """Iterative, so that the check itself cannot overflow the stack."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, dict | list))
    return False


async def read_json(request: Request, max_size: int, max_depth: int,
                    what: str = "Request body") -> Any:
    return parse_json(await read_body(request, max_size, what), max_depth, what)

