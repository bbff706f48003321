"""The values of literal tokens: numbers, and strings and bytes with CEL's escapes (which are
not Python's: `\\?` and `` \\` `` exist, `\\N{...}` does not, octal takes exactly three
digits, and `\\x`/octal mean code points in strings but octets in bytes)."""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import Final

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
UINT_MAX = 2**64 - 1

_ESCAPE = re.compile(
    r"""\\(?:(?P<simple>[abfnrtv\\?"'`])|[xX](?P<hex>[0-9a-fA-F]{2})|u(?P<u4>[0-9a-fA-F]{4})"""
    r"""|U(?P<u8>[0-9a-fA-F]{8})|(?P<octal>[0-3][0-7]{2})|(?P<bad>[\s\S]?))"""
)
_SIMPLE: Final = MappingProxyType({
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "?": "?", '"': '"', "'": "'", "`": "`",
})


class LiteralError(ValueError):
    """A literal that lexes but has no value; `offset` is within the token's text."""

    def __init__(self, reason: str, offset: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


def int_value(text: str) -> int:
    """An INT token's value, range unchecked: `-9223372036854775808` is `-` applied to a
    literal one past INT_MAX, so the caller checks the range once the sign is known."""
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16)
    return int(text, 10)


def uint_value(text: str) -> int:
    value = int_value(text[:-1])
    if value > UINT_MAX:
        raise LiteralError("unsigned integer literal out of range")
    return value


def double_value(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise LiteralError("double literal out of range")
    return value


def string_value(text: str) -> str:
    """A STRING token's text (quotes and r prefix included) as a str."""
    raw, start, body = _body(text)
    if raw:
        return body
    parts: list[str] = []
    surrogates = False
    last = 0
    for match in _ESCAPE.finditer(body):
        parts.append(body[last:match.start()])
        last = match.end()
        code = _code_point(match, start)
        if code is None:
            parts.append(_SIMPLE[match["simple"]])
            continue
        surrogates = surrogates or 0xD800 <= code <= 0xDFFF
        parts.append(chr(code))
    parts.append(body[last:])
    value = "".join(parts)
    if surrogates:  # \uD83D\uDE00 is one code point, written as its UTF-16 pair
        try:
            value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            raise LiteralError("unpaired surrogate in string literal", start) from None
    return value


def bytes_value(text: str) -> bytes:
    """A BYTES token's text (b prefix included) as bytes: UTF-8 of the characters, octets for
    the \\x and octal escapes."""
    raw, start, body = _body(text[1:])
    start += 1
    if raw:
        return body.encode("utf-8")
    parts: list[bytes] = []
    last = 0
    for match in _ESCAPE.finditer(body):
        parts.append(body[last:match.start()].encode("utf-8"))
        last = match.end()
        if match["u4"] or match["u8"]:
            raise LiteralError("\\u and \\U escapes are not allowed in bytes literals",
                               start + match.start())
        code = _code_point(match, start)
        parts.append(bytes([code]) if code is not None else _SIMPLE[match["simple"]].encode())
    parts.append(body[last:].encode("utf-8"))
    return b"".join(parts)


def _body(text: str) -> tuple[bool, int, str]:
    """(raw?, offset of the body in `text`, the body between the quotes)."""
    raw = text[0] in "rR"
    start = 1 if raw else 0
    quote = 3 if text[start:start + 3] in ('"""', "'''") else 1
    return raw, start + quote, text[start + quote:len(text) - quote]


def _code_point(match: re.Match[str], start: int) -> int | None:
    """The code point or octet an escape names; None for the one-character escapes."""
    if match["simple"] is not None:
        return None
    digits = match["hex"] or match["u4"] or match["u8"]
    if digits is not None:
        code = int(digits, 16)
        if code > 0x10FFFF:
            raise LiteralError("escape names no Unicode code point", start + match.start())
        return code
    if match["octal"] is not None:
        return int(match["octal"], 8)
    raise LiteralError(f"invalid escape sequence {match.group()!r}", start + match.start())
