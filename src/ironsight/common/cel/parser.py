"""CEL text to a lark parse tree (grammar.lark), with syntax errors located in the text."""

from __future__ import annotations

import functools
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .errors import CelSyntaxError, locate

_QUOTES = "\"'"


@functools.cache
def _lark() -> Lark:
    """The one LALR parser, built on first use: building it takes tens of milliseconds, and a
    built parser keeps no state between parses."""
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text("utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def parse(source: str) -> Tree[Token]:
    """The parse tree of `source`; CelSyntaxError names the first token that does not fit."""
    try:
        return _lark().parse(source)
    except UnexpectedInput as exc:
        position, reason = _describe(source, exc)
        raise CelSyntaxError(reason, *locate(source, position)) from None


def _describe(source: str, exc: UnexpectedInput) -> tuple[int, str]:
    if isinstance(exc, UnexpectedCharacters):
        position = exc.pos_in_stream or 0
        char = source[position]
        if char in _QUOTES:
            return position, "unterminated string literal"
        return position, f"unexpected character {char!r}"
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        return exc.token.start_pos or 0, f"unexpected {exc.token.value!r}"
    if isinstance(exc, UnexpectedToken | UnexpectedEOF):
        return len(source), "unexpected end of input"
    return exc.pos_in_stream or 0, "unexpected input"  # pragma: no cover - lark's other kinds
