"""Request bodies: refused past their size as soon as that is known, parsed within a depth
limit, with messages that say what is wrong."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from starlette.requests import Request

from ironsight.common.api.body import PayloadTooLarge, parse_json, read_body, read_json
from ironsight.common.exceptions import Invalid


def request(body: bytes, *, declared: bool = True, chunk: int = 1024) -> Request:
    headers = [(b"content-length", str(len(body)).encode())] if declared else []
    chunks = [body[i:i + chunk] for i in range(0, len(body), chunk)] or [b""]

    async def receive() -> dict[str, object]:
        part = chunks.pop(0)
        return {"type": "http.request", "body": part, "more_body": bool(chunks)}

    return Request({"type": "http", "method": "POST", "headers": headers}, receive)


async def test_a_body_within_the_limit_is_read_whole() -> None:
    assert await read_body(request(b"x" * 3000), 4096) == b"x" * 3000


async def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    async def never() -> AsyncIterator[bytes]:
        raise AssertionError("read")
        yield b""

    req = request(b"x" * 5000)
    req.stream = never  # type: ignore[method-assign]
    with pytest.raises(PayloadTooLarge, match="is 5000 bytes; the limit is 4096"):
        await read_body(req, 4096)


async def test_a_streamed_body_is_refused_once_it_passes_the_limit() -> None:
    with pytest.raises(PayloadTooLarge, match="larger than the limit of 4096 bytes") as raised:
        await read_body(request(b"x" * 5000, declared=False), 4096, "Ramdisk data")
    assert raised.value.code == 413
    assert str(raised.value).startswith("Ramdisk data")


def test_an_empty_body_is_not_json() -> None:
    with pytest.raises(Invalid, match="not valid JSON: it is empty"):
        parse_json(b"  ", 32)


def test_malformed_json_names_the_problem() -> None:
    with pytest.raises(Invalid, match="not valid JSON: Expecting"):
        parse_json(b'{"a": ', 32)


def depth(doc: object) -> int:
    return 1 + max(map(depth, doc), default=0) if isinstance(doc, list) else 0


def test_nesting_at_the_limit_is_accepted() -> None:
    assert depth(parse_json(b"[" * 32 + b"]" * 32, 32)) == 32


def test_nesting_past_the_limit_is_refused() -> None:
    with pytest.raises(Invalid, match="nested more than 32 levels deep") as raised:
        parse_json(b'{"a": ' * 33 + b"1" + b"}" * 33, 32)
    assert raised.value.code == 400


def test_nesting_too_deep_for_the_parser_is_a_clear_error_not_a_crash() -> None:
    deep = b"[" * 200_000 + b"]" * 200_000  # deeper than Python's recursion limit
    with pytest.raises(Invalid, match="nested more than 32 levels deep"):
        parse_json(deep, 32)


async def test_read_json_reads_then_parses() -> None:
    assert await read_json(request(b'{"a": [1, {"b": 2}]}'), 4096, 3) == {"a": [1, {"b": 2}]}


def test_integer_past_64_bits_is_refused_naming_the_field() -> None:
    with pytest.raises(Invalid, match=r"field 'properties\.cpus': 9{12}\.\.\. \(5000 "):
        parse_json(b'{"properties": {"cpus": ' + b"9" * 5000 + b"}}", 32)


def test_integer_at_the_64_bit_bounds_is_accepted() -> None:
    assert parse_json(b"[-9223372036854775808, 9223372036854775807]", 32) == [
        -(2**63), 2**63 - 1]


def test_integer_just_past_the_bound_is_refused() -> None:
    with pytest.raises(Invalid, match=r"field 'a\[1\]'"):
        parse_json(b'{"a": [0, 9223372036854775808]}', 32)


@pytest.mark.parametrize("literal", [b"1e999", b"-1e999", b"NaN", b"Infinity", b"-Infinity"])
def test_non_finite_number_is_refused(literal: bytes) -> None:
    with pytest.raises(Invalid, match="field 'x'"):
        parse_json(b'{"x": ' + literal + b"}", 32)


def test_lone_surrogate_in_a_value_is_refused_naming_the_field() -> None:
    with pytest.raises(Invalid, match="field 'name': it contains a lone surrogate"):
        parse_json(b'{"name": "a\\ud800"}', 32)


def test_lone_surrogate_in_a_key_is_refused_and_shown_escaped() -> None:
    with pytest.raises(Invalid, match=r"field 'extra\.k\\ud800'") as raised:
        parse_json(b'{"extra": {"k\\ud800": 1}}', 32)
    raised.value.message.encode()  # printable: no surrogate left in the message


def test_surrogate_pair_is_ordinary_text() -> None:
    assert parse_json(b'{"name": "\\ud83d\\ude00"}', 32) == {"name": "\U0001f600"}
