"""The functions: size, the string tests and matches, the strings extension's lowerAscii,
upperAscii, trim, split and join, and the type conversions; unknown names and wrong argument
counts fail at compile time."""

from __future__ import annotations

from ironsight.common.cel import compile

from .helpers import compile_error, failure, value

# --- size ------------------------------------------------------------------------------------

def test_size_counts_code_points_bytes_elements_and_entries() -> None:
    assert value('size("héllo😀")') == 6
    assert value('size(b"h\\xc3\\xa9")') == 3
    assert value("[1, 2, 3].size()") == 3
    assert value('{"a": 1}.size()') == 1


def test_size_of_a_number_is_no_matching_overload() -> None:
    assert failure("size(1)").reason == "no matching overload for 'size' applied to (int)"


# --- string tests ------------------------------------------------------------------------

def test_contains_starts_with_and_ends_with() -> None:
    assert value('"foobar".contains("oba")') is True
    assert value('"foobar".startsWith("foo")') is True
    assert value('"foobar".endsWith("bar")') is True
    assert value('"foobar".endsWith("foo")') is False


def test_string_tests_need_strings() -> None:
    assert "'contains'" in failure('x.contains("a")', x=["a"]).reason
    assert "'startsWith'" in failure('"a".startsWith(1)').reason


def test_matches_finds_the_pattern_anywhere_in_the_string() -> None:
    assert value('"ab12cd".matches("[0-9]+")') is True
    assert value('"abcd".matches("[0-9]+")') is False
    assert value('matches("ab12", "^ab[0-9]{2}$")') is True


def test_matches_takes_a_raw_string_pattern() -> None:
    assert value(r'x.matches(r"^sd[a-z]\d?$")', x="sdb1") is True


def test_matches_on_a_non_string_is_no_matching_overload() -> None:
    assert "'matches'" in failure('x.matches("a")', x=1).reason


def test_the_pattern_of_matches_must_be_a_literal() -> None:
    error = compile_error("s.matches(p)")
    assert error.reason == "the pattern of matches() must be a string literal"
    assert error.position == 10


def test_a_pattern_that_does_not_compile_is_a_compile_error() -> None:
    assert compile_error('s.matches("(")').reason.startswith("invalid regular expression")


def test_a_pattern_longer_than_256_characters_is_a_compile_error() -> None:
    compile(f's.matches("{"a" * 256}")')
    assert "longer than 256" in compile_error(f's.matches("{"a" * 257}")').reason


# --- strings extension ------------------------------------------------------------------

def test_lower_and_upper_ascii_change_only_ascii_letters() -> None:
    assert value('"HeLLo Ä".lowerAscii()') == "hello Ä"
    assert value('"hello ä".upperAscii()') == "HELLO ä"


def test_trim_removes_unicode_white_space_at_both_ends() -> None:
    assert value('"\\t  a b \\u00a0\\n".trim()') == "a b"


def test_split_cuts_at_each_separator() -> None:
    assert value('"a,b,,c".split(",")') == ["a", "b", "", "c"]
    assert value('"abc".split("")') == ["a", "b", "c"]


def test_split_with_a_limit_keeps_the_rest_in_the_last_part() -> None:
    assert value('"a,b,c".split(",", 2)') == ["a", "b,c"]
    assert value('"a,b,c".split(",", 0)') == []
    assert value('"a,b,c".split(",", -1)') == ["a", "b", "c"]
    assert value('"abc".split("", 2)') == ["a", "bc"]


def test_join_concatenates_strings_with_an_optional_separator() -> None:
    assert value('["a", "b"].join()') == "ab"
    assert value('["a", "b"].join(", ")') == "a, b"
    assert failure('["a", 1].join()').reason == "join: every element must be a string"


# --- conversions ---------------------------------------------------------------------------

def test_int_converts_doubles_toward_zero_and_decimal_strings() -> None:
    assert value("int(2.9)") == 2
    assert value("int(-2.9)") == -2
    assert value('int("-42")') == -42
    assert value("int(7u)") == 7


def test_int_fails_out_of_range_and_on_bad_text() -> None:
    assert "out of the int range" in failure("int(1e19)").reason
    assert "out of the int range" in failure('int(double("nan"))').reason
    assert "invalid integer" in failure('int("1.5")').reason
    assert "invalid integer" in failure('int(" 1")').reason


def test_uint_refuses_negative_values() -> None:
    assert value("uint(3.7)") == 3
    assert value('uint("18446744073709551615")') == 2**64 - 1
    assert "uint range" in failure("uint(-1)").reason
    assert "uint range" in failure("uint(-1.0)").reason


def test_double_converts_numbers_and_text() -> None:
    assert value("double(2)") == 2.0
    assert value('double("1.5e3")') == 1500.0
    assert value('double("-inf")') == float("-inf")
    assert "invalid number" in failure('double("1_0")').reason


def test_string_converts_scalars() -> None:
    assert value("string(42)") == "42"
    assert value("string(true)") == "true"
    assert value('string(b"caf\\xc3\\xa9")') == "café"
    assert value('string("s")') == "s"


def test_string_of_a_double_reads_as_go_prints_it() -> None:
    assert value("string(1.5)") == "1.5"
    assert value("string(100.0)") == "100"
    assert value("string(1e6)") == "1e+06"
    assert value("string(0.0001)") == "0.0001"
    assert value("string(0.00001)") == "1e-05"
    assert value("string(-2.5e-10)") == "-2.5e-10"


def test_string_of_invalid_utf8_is_an_error() -> None:
    assert "not valid UTF-8" in failure('string(b"\\xff")').reason


def test_bool_reads_the_usual_spellings() -> None:
    assert value('bool("true")') is True
    assert value('bool("F")') is False
    assert value('bool("0")') is False
    assert "invalid bool" in failure('bool("yes")').reason


def test_bytes_encodes_strings_as_utf8() -> None:
    assert value('bytes("é")') == b"\xc3\xa9"


def test_dyn_is_the_identity() -> None:
    assert value("dyn([1, 'a'])") == [1, "a"]


def test_a_conversion_without_an_overload_fails() -> None:
    assert failure("int([1])").reason == "no matching overload for 'int' applied to (list)"
    assert "'string'" in failure("string(null)").reason


# --- compile-time checks -------------------------------------------------------------------

def test_an_unknown_function_is_a_compile_error_at_its_name() -> None:
    error = compile_error("1 + frobnicate(2)")
    assert (error.reason, error.position) == ("unknown function 'frobnicate'", 4)


def test_list_aggregates_that_cel_lacks_are_unknown() -> None:
    for name in ("min", "max", "sum"):
        assert compile_error(f"[1, 2].{name}()").reason == f"unknown function '{name}'"


def test_a_wrong_argument_count_is_a_compile_error() -> None:
    assert compile_error("size(1, 2)").reason == "'size' takes 1 argument(s), not 2"
    assert compile_error('"a".split()').reason == "'split' takes 1 or 2 argument(s), not 0"


def test_a_function_called_in_the_wrong_style_is_a_compile_error() -> None:
    assert "must be called as a method" in compile_error('contains("a", "b")').reason
    assert "must be called as a function" in compile_error("x.int()").reason
