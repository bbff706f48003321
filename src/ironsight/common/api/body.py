"""Request bodies: read within a size limit, parse within a depth limit, and say what is wrong
with a message that names the field. Both services read every body through here, so an
oversized or hostile body costs the same bounded work on every endpoint, and what the rest of
the code sees is bounded: no nesting deeper than the limit, no integer outside 64 bits, no
float that is not finite, no lone surrogate (which no encoder downstream can write)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from starlette.requests import Request

from ironsight.common.exceptions import Invalid, IronsightError

# Integers a body may carry: signed 64 bits (what a database column holds). Longer literals are
# refused before int() sees them: Python's int-from-string is quadratic and, past 4300 digits,
# refused with a ValueError that names nothing.
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
_MAX_INT_DIGITS = len(str(MAX_INT))
_SURROGATE = re.compile("[\ud800-\udfff]")


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


class _OutOfRange:
    """Stands for a number literal the document may not carry, until the walk finds where it
    is (the parser's hooks do not know the field)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def describe(self) -> str:
        shown = self.text if len(self.text) <= 24 else f"{self.text[:12]}... ({len(self.text)} " \
            "characters)"
        return f"{shown} is not a number within range (integers from {MIN_INT} to {MAX_INT}, " \
            "finite floats)"


def _parse_int(text: str) -> int | _OutOfRange:
    if len(text) - text.startswith("-") > _MAX_INT_DIGITS:
        return _OutOfRange(text)
    value = int(text)
    return value if MIN_INT <= value <= MAX_INT else _OutOfRange(text)


def _parse_float(text: str) -> float | _OutOfRange:
    value = float(text)
    return value if math.isfinite(value) else _OutOfRange(text)


def parse_json(raw: bytes, max_depth: int, what: str = "Request body") -> Any:
    """The JSON document in `raw`; `max_depth` bounds its nesting (arrays and objects), which
    the size limit alone does not: a 1 MB body can nest half a million levels deep."""
    if not raw.strip():
        raise Invalid(f"{what} is not valid JSON: it is empty; a JSON document is required.")
    try:
        doc = json.loads(raw, parse_int=_parse_int, parse_float=_parse_float,
                         parse_constant=_OutOfRange)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Invalid(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise Invalid(f"{what} is nested more than {max_depth} levels deep.") from None
    _check(doc, max_depth, what)
    return doc


def _safe(text: str) -> str:
    """`text` as it can be shown in a message (a lone surrogate escaped)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _field(path: tuple[Any, ...] | None) -> str:
    parts: list[Any] = []
    while path is not None:
        path, key = path
        parts.append(key)
    text = ""
    for key in reversed(parts):
        text += f"[{key}]" if isinstance(key, int) else (f".{_safe(key)}" if text else _safe(key))
    return text


def _check(doc: Any, max_depth: int, what: str) -> None:
    """Iterative, so that the check itself cannot overflow the stack. A path is kept as a
    linked (parent, key) pair and spelled out only for the message."""
    stack: list[tuple[Any, int, tuple[Any, ...] | None]] = [(doc, 1, None)]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict):
            if depth > max_depth:
                raise Invalid(f"{what} is nested more than {max_depth} levels deep.")
            for key, value in node.items():
                here = (path, key)
                if not key.isascii() and _SURROGATE.search(key):
                    raise Invalid(f"Invalid input for field '{_field(here)}': the name "
                                  "contains a lone surrogate (not valid Unicode text).")
                stack.append((value, depth + 1, here))
        elif isinstance(node, list):
            if depth > max_depth:
                raise Invalid(f"{what} is nested more than {max_depth} levels deep.")
            stack.extend((value, depth + 1, (path, index)) for index, value in enumerate(node))
        elif isinstance(node, str):
            if not node.isascii() and _SURROGATE.search(node):
                raise Invalid(f"Invalid input for field '{_field(path) or 'body'}': it contains "
                              "a lone surrogate (not valid Unicode text).")
        elif isinstance(node, _OutOfRange):
            raise Invalid(f"Invalid input for field '{_field(path) or 'body'}': "
                          f"{node.describe()}.")


async def read_json(request: Request, max_size: int, max_depth: int,
                    what: str = "Request body") -> Any:
    return parse_json(await read_body(request, max_size, what), max_depth, what)
