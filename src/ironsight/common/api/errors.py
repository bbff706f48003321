"""Error bodies: the two envelopes our APIs answer with, and one decoder for every client.

- Ironic's: `{"error_message": "<a JSON string: {faultcode, faultstring, debuginfo}>"}` (the
  fault document encoded as a string inside JSON, which its clients decode twice);
- ironic-inspector's: `{"error": {"message": "..."}}`.

The decoder reads either (and the plain-text bodies of older services and proxies), so the
CLI, the discoverd client library and discoverd's bare-metal client show the same message
for the same answer. No web framework here: client code imports this module.
"""

from __future__ import annotations

import contextlib
import http
import json
from collections.abc import Callable
from typing import Any

from ironsight.common.exceptions import IronsightError, RoutingError

Envelope = Callable[[IronsightError], dict[str, Any]]
# A plain-text error body (an HTML page from a proxy, say) is shown up to this length.
MAX_TEXT = 500


def ironic_envelope(exc: IronsightError) -> dict[str, Any]:
    if isinstance(exc, RoutingError):  # pecan's (webob's) own document, as Ironic's
        return {"error_message": json.dumps({
            "code": exc.code, "title": http.HTTPStatus(exc.code).phrase,
            "description": exc.description})}
    fault = {"faultcode": "Client" if exc.code < 500 else "Server",
             "faultstring": exc.message, "debuginfo": None}
    return {"error_message": json.dumps(fault)}


def inspector_envelope(exc: IronsightError) -> dict[str, Any]:
    return {"error": {"message": exc.message}}


def _fault_text(fault: Any) -> str | None:
    """The human part of a decoded fault (Ironic's, the inspector's, or a 406 version
    document with `description`)."""
    if isinstance(fault, dict):
        for key in ("faultstring", "description", "message", "title"):
            if isinstance(fault.get(key), str) and fault[key]:
                return str(fault[key])
    if isinstance(fault, str) and fault:
        return fault
    return None


def error_message(body: bytes, fallback: str) -> str:
    """The message an error answer carries, whatever its envelope; `fallback` (say, the
    reason phrase) when the body has none."""
    try:
        doc = json.loads(body) if body else None
    except (UnicodeDecodeError, ValueError):
        doc = None
    if isinstance(doc, dict):
        raw = doc.get("error_message")
        if isinstance(raw, str):
            with contextlib.suppress(ValueError):
                raw = json.loads(raw)
        text = _fault_text(raw) or _fault_text(doc.get("error"))
        if text:
            return text
    text = body.decode(errors="replace").strip()[:MAX_TEXT]
    return text or fallback


# pydantic's error types -> what jsonschema says of the same problem
_JSONSCHEMA_WORDS = {"string_too_long": "is too long", "too_long": "is too long",
                     "string_too_short": "is too short", "too_short": "is too short"}


def format_validation_error(exc: Any) -> str:
    """One line per problem, each naming the field (a pydantic ValidationError)."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "body"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field"
        elif err.get("type") in _JSONSCHEMA_WORDS:
            # jsonschema's words first, as Ironic's schema errors say them (clients match
            # them); the value itself is not shown (it may be long, or a secret)
            msg = f"the value {_JSONSCHEMA_WORDS[err['type']]} ({msg})"
        parts.append(f"Invalid input for field '{loc}': {msg}")
    return "; ".join(parts)
