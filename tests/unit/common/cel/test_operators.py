"""The operators' meaning: logic with CEL's commutative error absorption, heterogeneous
equality, ordering, 64-bit integer arithmetic, membership, indexing and field selection."""

from __future__ import annotations

import pytest

from ironsight.common.cel import compile

from .helpers import failure, value

INT_MAX = 2**63 - 1
INT_MIN = -(2**63)




# --- && and || ---------------------------------------------------------------------------

def test_a_long_run_of_one_logical_operator_is_not_nesting() -> None:
    run = " || ".join(f'name == "n{i}"' for i in range(200))
    assert value(run, name="n199") is True
    assert value(" && ".join(["true"] * 500)) is True


def test_a_run_of_logical_operators_absorbs_errors_in_any_position() -> None:
    assert value("x.a || 1 || y", x={}, y=True) is True
    assert value("x.a && true && false", x={}) is False
    assert "no such key" in str(failure("x.a || false || false", x={}))
    assert "no matching overload" in str(failure("false || 1 || false"))



@pytest.mark.parametrize(("source", "expected"), [
    ("true && true", True), ("true && false", False),
    ("false && true", False), ("false && false", False),
    ("true || false", True), ("false || true", True),
    ("false || false", False), ("true || true", True),
])
def test_and_and_or_on_bools_are_boolean_logic(source: str, expected: bool) -> None:
    assert value(source) is expected


@pytest.mark.parametrize("source", ["false && 1 / 0 == 1", "1 / 0 == 1 && false",
                                    "false && missing", "missing && false"])
def test_false_absorbs_an_error_on_either_side_of_and(source: str) -> None:
    assert value(source) is False


@pytest.mark.parametrize("source", ["true || 1 / 0 == 1", "1 / 0 == 1 || true",
                                    "true || missing", "missing || true"])
def test_true_absorbs_an_error_on_either_side_of_or(source: str) -> None:
    assert value(source) is True


@pytest.mark.parametrize("source", ["true && 1 / 0 == 1", "1 / 0 == 1 && true",
                                    "false || 1 / 0 == 1", "1 / 0 == 1 || false"])
def test_an_error_the_other_side_does_not_decide_propagates(source: str) -> None:
    assert failure(source).reason == "division by zero"


def test_when_both_sides_fail_the_left_error_propagates() -> None:
    assert failure("a && b").reason == "undeclared reference to 'a'"


def test_a_non_bool_operand_of_and_is_absorbed_by_false() -> None:
    assert value("1 && false") is False
    assert value("false || 'x' || true") is True


def test_a_non_bool_operand_of_and_is_an_error_otherwise() -> None:
    assert "no matching overload for '_&&_'" in failure("1 && true").reason
    assert "no matching overload for '_||_'" in failure("false || 1").reason


# --- ! and unary - -------------------------------------------------------------------------

def test_not_negates_a_bool_and_rejects_anything_else() -> None:
    assert value("!true") is False
    assert value("!!true") is True
    assert "'!_'" in failure("!1").reason
    assert "'!_'" in failure("!!1").reason


def test_minus_negates_ints_and_doubles() -> None:
    assert value("-x", x=5) == -5
    assert value("--x", x=5) == 5
    assert value("-x", x=1.5) == -1.5
    assert "'-_'" in failure("-x", x="a").reason


def test_negating_the_smallest_int_overflows() -> None:
    assert failure("-x", x=INT_MIN).reason == "integer overflow"


# --- ?: ------------------------------------------------------------------------------------

def test_the_conditional_evaluates_only_the_branch_it_takes() -> None:
    assert value("true ? 1 : 1 / 0") == 1
    assert value("false ? 1 / 0 : 2") == 2


def test_the_conditional_is_right_associative() -> None:
    assert value("false ? 1 : true ? 2 : 3") == 2


def test_the_condition_must_be_a_bool() -> None:
    assert "'_?_:_'" in failure("1 ? 2 : 3").reason


# --- equality ------------------------------------------------------------------------------

def test_ints_and_doubles_compare_equal_by_value() -> None:
    assert value("1 == 1.0") is True
    assert value("1u == 1") is True
    assert value("x == 2", x=2.0) is True
    assert value("2 == x", x=2.5) is False


def test_bool_is_not_a_number() -> None:
    assert value("true == 1") is False
    assert value("x == 1", x=True) is False
    assert value("x != 0", x=False) is True


def test_values_of_different_kinds_are_unequal_not_an_error() -> None:
    assert value('1 == "1"') is False
    assert value("null == 0") is False
    assert value("[] == {}") is False
    assert value('"a" != b"a"') is True


def test_null_equals_only_null() -> None:
    assert value("null == null") is True
    assert value("x == null", x=None) is True


def test_lists_compare_element_by_element_under_the_same_rules() -> None:
    assert value("[1, 2.0, 'a'] == [1.0, 2, 'a']") is True
    assert value("[1, 2] == [1, 2, 3]") is False
    assert value("[true] == [1]") is False
    assert value("[[1], {'a': [2]}] == [[1.0], {'a': [2.0]}]") is True


def test_maps_compare_by_keys_and_values_under_the_same_rules() -> None:
    assert value("{'a': 1, 'b': 2} == {'b': 2.0, 'a': 1}") is True
    assert value("{'a': 1} == {'a': 1, 'b': 2}") is False
    assert value("{'a': 1} == {'b': 1}") is False
    assert value("{1: 'x'} == {true: 'x'}") is False


def test_nan_equals_nothing_not_even_itself() -> None:
    nan = float("nan")
    assert value("x == x", x=nan) is False
    assert value("[x] == [x]", x=nan) is False
    assert value("x != x", x=nan) is True


# --- ordering ------------------------------------------------------------------------------

def test_numbers_order_across_int_and_double() -> None:
    assert value("1 < 1.5") is True
    assert value("2.0 <= 2") is True
    assert value("x > 3", x=3.5) is True
    assert value("3 >= x", x=4) is False


def test_a_literal_on_the_left_orders_the_same_as_on_the_right() -> None:
    assert value("524288 <= x", x=524288) is True
    assert value("10 < x", x=3) is False


def test_strings_order_by_code_point() -> None:
    assert value('"a" < "b"') is True
    assert value('"Z" < "a"') is True
    assert value('"abc" >= "abd"') is False


def test_bytes_and_bools_order() -> None:
    assert value('b"a" < b"b"') is True
    assert value("false < true") is True


def test_ordering_mixed_kinds_is_no_matching_overload() -> None:
    error = failure('x < "b"', x=1)
    assert error.reason == "no matching overload for '_<_' applied to (int, string)"
    assert "'_>=_'" in failure("true >= 1").reason
    assert "'_<_'" in failure("null < null").reason
    assert "'_<_'" in failure("[1] < [2]").reason


def test_an_ordering_error_points_at_the_operator() -> None:
    error = failure('x < "b"', x=1)
    assert (error.position, error.line, error.column) == (2, 1, 3)


# --- arithmetic ----------------------------------------------------------------------------

def test_addition_of_numbers_strings_bytes_and_lists() -> None:
    assert value("1 + 2") == 3
    assert value("1.5 + 2.0") == 3.5
    assert value('"ab" + "c"') == "abc"
    assert value('b"a" + b"b"') == b"ab"
    assert value("[1] + [2, 3]") == [1, 2, 3]


def test_arithmetic_does_not_mix_int_and_double() -> None:
    assert failure("1 + 1.0").reason == (
        "no matching overload for '_+_' applied to (int, double)")
    assert "'_*_'" in failure("2 * 1.5").reason


def test_arithmetic_rejects_bools() -> None:
    assert "'_+_'" in failure("true + 1").reason


def test_int_addition_overflow_is_an_error() -> None:
    assert failure("x + 1", x=INT_MAX).reason == "integer overflow"
    assert failure("x - 1", x=INT_MIN).reason == "integer overflow"
    assert failure("x * 2", x=2**62).reason == "integer overflow"


def test_int_arithmetic_reaches_the_ends_of_the_range() -> None:
    assert value("x + 1", x=INT_MAX - 1) == INT_MAX
    assert value("x - 1", x=INT_MIN + 1) == INT_MIN


def test_int_division_truncates_toward_zero() -> None:
    assert value("7 / 2") == 3
    assert value("-7 / 2") == -3
    assert value("7 / -2") == -3
    assert value("-7 / -2") == 3


def test_int_division_by_zero_is_an_error() -> None:
    assert failure("1 / 0").reason == "division by zero"


def test_dividing_the_smallest_int_by_minus_one_overflows() -> None:
    assert failure("x / -1", x=INT_MIN).reason == "integer overflow"


def test_the_remainder_takes_the_sign_of_the_dividend() -> None:
    assert value("7 % 3") == 1
    assert value("-7 % 3") == -1
    assert value("7 % -3") == 1
    assert value("-7 % -3") == -1


def test_the_remainder_by_zero_is_an_error() -> None:
    assert failure("1 % 0").reason == "modulus by zero"


def test_the_remainder_is_for_ints_only() -> None:
    assert "'_%_'" in failure("5.5 % 2.0").reason


def test_double_division_follows_ieee() -> None:
    assert value("7.0 / 2.0") == 3.5
    assert value("1.0 / 0.0") == float("inf")
    assert value("-1.0 / 0.0") == float("-inf")
    result = value("0.0 / 0.0")
    assert result != result


def test_an_arithmetic_error_points_at_the_operator() -> None:
    error = failure("a +\n b / 0", a=1, b=2)
    assert (error.position, error.line, error.column) == (7, 2, 4)
    assert str(error) == "Evaluation error at line 2, column 4 (position 7): division by zero"


# --- in -------------------------------------------------------------------------------------

def test_in_tests_list_membership_by_cel_equality() -> None:
    assert value("2 in [1, 2, 3]") is True
    assert value("2.0 in [1, 2]") is True
    assert value("true in [1]") is False
    assert value("1 in [true]") is False
    assert value("x in ['a', 'b']", x="b") is True
    assert value("x in ['a', 'b']", x=1) is False


def test_in_tests_a_maps_keys() -> None:
    assert value('"a" in {"a": 1}') is True
    assert value('"b" in {"a": 1}') is False
    assert value("1.0 in {1: 'x'}") is True
    assert value("true in {1: 'x'}") is False


def test_in_against_a_variable_list() -> None:
    assert value("x in ys", x=3, ys=[1, 2, 3]) is True
    assert value("x in ys", x=[1], ys=[[1], [2]]) is True


def test_in_needs_a_list_or_a_map() -> None:
    assert "'@in'" in failure('"a" in "abc"').reason


# --- indexing and selection ----------------------------------------------------------------

def test_lists_index_from_zero() -> None:
    assert value("[10, 20, 30][1]") == 20
    assert value("xs[0]", xs=["a"]) == "a"


def test_an_index_out_of_range_is_an_error_negative_included() -> None:
    assert failure("[1, 2][2]").reason == "index out of range: 2 (size 2)"
    assert failure("[1, 2][-1]").reason == "index out of range: -1 (size 2)"


def test_an_integral_double_indexes_a_list() -> None:
    assert value("[1, 2][1.0]") == 2
    assert "'_[_]'" in failure("[1, 2][0.5]").reason


def test_maps_index_by_key() -> None:
    assert value('{"a": 1}["a"]') == 1
    assert value("{1: 'x'}[1.0]") == "x"
    assert failure('{"a": 1}["b"]').reason == "no such key: b"


def test_indexing_a_scalar_is_no_matching_overload() -> None:
    assert "'_[_]'" in failure('"abc"[0]').reason


def test_selection_reads_a_maps_key() -> None:
    assert value("a.b.c", a={"b": {"c": 7}}) == 7


def test_selecting_a_missing_key_is_an_error_at_that_field() -> None:
    error = failure("a.b.c", a={"b": {}})
    assert error.reason == "no such key: c"
    assert error.position == 4


def test_selecting_from_a_non_map_is_an_error() -> None:
    assert failure("a.b", a=[1]).reason == "cannot select field 'b' from list"
    assert failure("a.b.c", a={"b": 3}).reason == "cannot select field 'c' from int"
    assert failure("a.b", a=None).reason == "cannot select field 'b' from null"


def test_selecting_from_a_computed_value() -> None:
    assert value("[{'a': {'b': 1}}][0].a.b") == 1
    assert failure("[{'a': {}}][0].a.b").reason == "no such key: b"


def test_selection_does_not_run_a_defaultdicts_factory() -> None:
    from collections import defaultdict

    data: defaultdict[str, int] = defaultdict(int)
    assert failure("a.b", a=data).reason == "no such key: b"
    assert dict(data) == {}


def test_has_tests_a_maps_key_without_reading_it() -> None:
    assert value("has(a.b)", a={"b": None}) is True
    assert value("has(a.c)", a={"b": None}) is False
    assert value("has(a.b.c)", a={"b": {"c": 1}}) is True


def test_has_on_a_non_map_is_an_error() -> None:
    assert failure("has(a.b)", a=1).reason == "cannot test field 'b' of int"


def test_has_still_requires_the_path_before_the_last_field() -> None:
    assert failure("has(a.b.c)", a={}).reason == "no such key: b"


# --- names and literals of aggregates ------------------------------------------------------

def test_an_unbound_name_is_an_undeclared_reference() -> None:
    error = failure("1 + x")
    assert error.reason == "undeclared reference to 'x'"
    assert error.position == 4


def test_a_leading_dot_names_the_root_scope() -> None:
    assert value(".x + 1", x=1) == 2


def test_map_literal_keys_must_be_of_a_key_type_and_distinct() -> None:
    assert failure("{1.5: 'x'}").reason == "unsupported map key type: double"
    assert failure("{'a': 1, 'a': 2}").reason == "duplicate map key: a"


def test_aggregate_literals_are_new_values_each_evaluation() -> None:
    program = compile("[1, 2]")
    first = program.evaluate({})
    first.append(3)
    assert program.evaluate({}) == [1, 2]


def test_an_ordering_error_with_the_literal_first_names_the_operator_as_written() -> None:
    error = failure('1 < x', x="b")
    assert error.reason == "no matching overload for '_<_' applied to (int, string)"
