"""HTTP pieces shared by both services' APIs: bounded JSON bodies and JSON responses."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ironsight.common.exceptions import Invalid, IronsightError


class PayloadTooLarge(IronsightError):
    code = 413


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(data, separators=(",", ":"), default=str).encode()
    return Response(body, status_code=status, headers=headers, media_type="application/json")


async def read_json(request: Request, max_size: int) -> Any:
    """The request's JSON body, refusing oversized or malformed input with a clear message."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_size:
        raise PayloadTooLarge(f"Request body is {declared} bytes; the limit is {max_size}.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_size:
            raise PayloadTooLarge(f"Request body is larger than the limit of {max_size} bytes.")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        raise Invalid("Request body is empty; a JSON document is required.")
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Invalid(f"Request body is not valid JSON: {exc}") from None


def format_validation_error(exc: Any) -> str:
    """One line per problem, each naming the field (pydantic ValidationError)."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "body"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field"
        parts.append(f"Invalid input for field '{loc}': {msg}")
    return "; ".join(parts)
