"""What text is CEL: literals, comments, reserved words, and syntax errors located exactly
(0-based position, 1-based line and column)."""

from __future__ import annotations

import pytest

from ironsight.common.cel import CelCompileError, CelError, CelSyntaxError, compile

from .helpers import syntax_error, value

# --- located syntax errors -------------------------------------------------------------------

def test_a_misplaced_operator_is_named_with_its_line_column_and_position() -> None:
    error = syntax_error("a.b == 1 || && c")
    assert (error.position, error.line, error.column) == (12, 1, 13)
    assert str(error) == "Syntax error at line 1, column 13 (position 12): unexpected '&&'"


def test_an_error_on_a_later_line_counts_columns_from_that_line() -> None:
    error = syntax_error("x == 1 &&\n  && y")
    assert (error.position, error.line, error.column) == (12, 2, 3)


def test_input_that_ends_too_soon_is_an_error_at_its_end() -> None:
    error = syntax_error("a\n  .b\n  .c[")
    assert (error.position, error.line, error.column) == (12, 3, 6)
    assert error.reason == "unexpected end of input"


def test_an_empty_expression_is_a_syntax_error() -> None:
    assert syntax_error("").reason == "unexpected end of input"


def test_an_unknown_character_is_named() -> None:
    error = syntax_error("a # b")
    assert (error.position, error.reason) == (2, "unexpected character '#'")


def test_an_unterminated_string_is_reported_where_it_starts() -> None:
    error = syntax_error('x == "abc')
    assert (error.position, error.reason) == (5, "unterminated string literal")


def test_a_single_quoted_string_cannot_span_lines() -> None:
    assert syntax_error('"a\nb"').reason == "unterminated string literal"


def test_unary_operators_do_not_mix() -> None:
    assert syntax_error("!-a").position == 1


def test_a_call_takes_no_trailing_comma() -> None:
    assert syntax_error("f(a,)").position == 4


def test_a_list_needs_an_element_before_a_comma() -> None:
    assert syntax_error("[,]").position == 1


def test_syntax_errors_are_value_errors_and_cel_errors() -> None:
    error = syntax_error("(")
    assert isinstance(error, CelError)
    assert isinstance(error, ValueError)


# --- reserved words ---------------------------------------------------------------------------

@pytest.mark.parametrize("word", ["if", "in", "let", "package", "while"])
def test_reserved_words_are_no_names(word: str) -> None:
    with pytest.raises(CelSyntaxError, match="reserved word"):
        compile(word + " == 1")


def test_reserved_words_cannot_be_selected_as_fields() -> None:
    error = syntax_error("a.in")
    assert (error.position, error.reason) == (2, "reserved word 'in' cannot be used as a name")
    assert syntax_error("a.null").position == 2


def test_a_name_that_starts_like_a_keyword_is_a_name() -> None:
    program = compile("trueish || index in inner")
    assert program.roots == {"trueish", "index", "inner"}


# --- numbers ----------------------------------------------------------------------------------

def test_integers_are_decimal_or_hexadecimal() -> None:
    assert value("42") == 42
    assert value("0x2A") == 42
    assert value("0X2a") == 42


def test_unsigned_integers_are_plain_ints() -> None:
    assert value("42u") == 42
    assert value("0xFFu") == 255
    assert value("18446744073709551615u") == 2**64 - 1


def test_doubles_take_a_fraction_or_an_exponent() -> None:
    assert value("1.5") == 1.5
    assert value(".5") == 0.5
    assert value("1e3") == 1000.0
    assert value("2.5E-1") == 0.25
    assert isinstance(value("1e3"), float)


def test_the_smallest_int_is_a_negated_literal() -> None:
    assert value("-9223372036854775808") == -(2**63)


def test_an_int_literal_past_the_int_range_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="integer literal out of range"):
        compile("9223372036854775808")


def test_an_unsigned_literal_past_the_uint_range_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="out of range"):
        compile("18446744073709551616u")


def test_a_double_literal_that_overflows_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="double literal out of range"):
        compile("1e999")


def test_negating_an_unsigned_literal_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="uint"):
        compile("-1u")


# --- strings and bytes ------------------------------------------------------------------------

def test_strings_take_either_quote() -> None:
    assert value("'a\"b'") == 'a"b'
    assert value('"a\'b"') == "a'b"


def test_triple_quoted_strings_span_lines_and_hold_single_quotes() -> None:
    assert value('"""a\n"b"\n"""') == 'a\n"b"\n'
    assert value("'''x''x'''") == "x''x"


def test_raw_strings_keep_backslashes() -> None:
    assert value(r'r"\d+\n"') == r"\d+\n"
    assert value(r"R'''\'''") == "\\"


def test_escapes_name_characters() -> None:
    assert value(r'"\a\b\f\n\r\t\v\\\?\"\'\`"') == "\a\b\f\n\r\t\v\\?\"'`"


def test_hex_octal_and_unicode_escapes_name_code_points_in_strings() -> None:
    assert value(r'"\x41\101\u00e9\U0001F600"') == "AAé😀"
    assert value(r'"\377"') == "ÿ"


def test_a_surrogate_pair_of_escapes_is_one_code_point() -> None:
    assert value(r'"\uD83D\uDE00"') == "😀"


def test_an_unpaired_surrogate_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="surrogate"):
        compile(r'"\uD800"')


def test_an_unknown_escape_is_a_compile_error_at_the_backslash() -> None:
    with pytest.raises(CelCompileError) as caught:
        compile(r'x + "ab\qc"')
    assert caught.value.position == 7
    assert caught.value.reason == r"invalid escape sequence '\\q'"


def test_bytes_are_the_utf8_of_their_text_with_octet_escapes() -> None:
    assert value('b"abc"') == b"abc"
    assert value('b"ÿ"') == b"\xc3\xbf"
    assert value(r'b"\303\277"') == b"\xc3\xbf"
    assert value(r'b"\xFF"') == b"\xff"
    assert value(r'br"\x"') == b"\\x"


def test_unicode_escapes_are_not_allowed_in_bytes() -> None:
    with pytest.raises(CelCompileError, match="not allowed in bytes"):
        compile(r'b"\u0041"')


# --- other literals, comments ----------------------------------------------------------------

def test_bool_and_null_literals() -> None:
    assert value("true") is True
    assert value("false") is False
    assert value("null") is None


def test_lists_and_maps_accept_a_trailing_comma() -> None:
    assert value("[1, 2,]") == [1, 2]
    assert value('{"a": 1, "b": 2,}') == {"a": 1, "b": 2}
    assert value("[]") == []
    assert value("{}") == {}


def test_comments_run_to_the_end_of_the_line() -> None:
    assert value("1 + // one\n 2 // two") == 3


def test_a_conditional_may_be_a_map_key() -> None:
    assert value('{true ? "a" : "b": 1}') == {"a": 1}
