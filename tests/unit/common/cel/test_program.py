"""The public face: compile() and its limits, a Program's roots, evaluate() and matches()."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common import cel
from ironsight.common.cel import (
    CelCompileError,
    CelError,
    CelEvalError,
    CelSyntaxError,
    Program,
    compile,
)


def test_compile_expression_is_compile() -> None:
    assert cel.compile_expression is cel.compile


def test_a_program_keeps_its_source() -> None:
    program = compile("a + 1")
    assert isinstance(program, Program)
    assert program.source == "a + 1"
    assert repr(program) == "Program('a + 1')"


def test_roots_are_the_top_level_names_read() -> None:
    program = compile('inventory.memory.physical_mb > 1 && "GPU" in traits')
    assert program.roots == frozenset({"inventory", "traits"})


def test_roots_leave_out_comprehension_variables_and_functions() -> None:
    program = compile("xs.exists(x, x.size() > limit) && size(ys) > 0")
    assert program.roots == {"xs", "limit", "ys"}


def test_a_root_used_as_a_comprehension_target_stays_a_root() -> None:
    assert compile("x.all(x, x > 0)").roots == {"x"}


def test_a_literal_expression_reads_no_roots() -> None:
    assert compile("[1, 2].map(x, x * 2)").roots == frozenset()


def test_matches_is_true_or_false_for_a_bool_result() -> None:
    program = compile("inventory.memory.physical_mb >= 524288")
    assert program.matches({"inventory": {"memory": {"physical_mb": 524288}}}) is True
    assert program.matches({"inventory": {"memory": {"physical_mb": 1024}}}) is False


def test_matches_raises_for_a_result_that_is_not_a_bool() -> None:
    with pytest.raises(CelEvalError, match="expected a bool result, got int"):
        compile("1 + 1").matches({})
    with pytest.raises(CelEvalError, match="got null"):
        compile("x").matches({"x": None})


def test_matches_raises_when_evaluation_fails() -> None:
    with pytest.raises(CelEvalError, match="no such key: memory"):
        compile("inventory.memory.physical_mb > 0").matches({"inventory": {}})


def test_evaluate_accepts_any_mapping_as_the_activation() -> None:
    from types import MappingProxyType

    assert compile("a.b").evaluate(MappingProxyType({"a": {"b": 2}})) == 2


def test_tuples_read_as_lists_and_mappings_as_maps() -> None:
    from types import MappingProxyType

    activation: dict[str, Any] = {"t": (1, 2), "m": MappingProxyType({"k": 1})}
    assert compile("t == [1, 2] && t.size() == 2 && 2 in t").evaluate(activation) is True
    assert compile('m.k == 1 && "k" in m && has(m.k)').evaluate(activation) is True


def test_a_value_cel_does_not_know_is_no_matching_overload() -> None:
    with pytest.raises(CelEvalError, match=r"applied to \(set, int\)"):
        compile("x + 1").evaluate({"x": {1}})


def test_a_self_containing_value_fails_as_an_evaluation_error() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(CelEvalError, match="nested too deeply"):
        compile("x == y").evaluate({"x": looped, "y": [looped]})


def test_one_program_serves_many_activations() -> None:
    program = compile("x * 2")
    assert [program.evaluate({"x": n}) for n in range(3)] == [0, 2, 4]


# --- limits --------------------------------------------------------------------------------

def test_an_expression_longer_than_4096_characters_is_refused() -> None:
    compile("1" + " " * 4095)
    with pytest.raises(CelCompileError, match="longer than 4096 characters"):
        compile("1" + " " * 4096)


def test_nesting_deeper_than_64_levels_is_refused() -> None:
    compile("[" * 64 + "]" * 64)
    with pytest.raises(CelCompileError, match="nested more than 64 levels") as caught:
        compile("[" * 65 + "]" * 65)
    assert caught.value.position == 64


def test_a_long_chain_of_selections_counts_toward_the_depth() -> None:
    compile("a" + ".b" * 63)
    with pytest.raises(CelCompileError, match="nested more than 64 levels"):
        compile("a" + ".b" * 64)


def test_parentheses_alone_do_not_nest() -> None:
    assert compile("(" * 200 + "1" + ")" * 200).evaluate({}) == 1


def test_every_error_is_a_cel_error_and_a_value_error() -> None:
    for kind in (CelSyntaxError, CelCompileError, CelEvalError):
        assert issubclass(kind, CelError)
        assert issubclass(kind, ValueError)


def test_an_error_without_a_place_says_so_plainly() -> None:
    error = CelEvalError("boom")
    assert (error.position, error.line, error.column) == (None, None, None)
    assert str(error) == "Evaluation error: boom"


def test_an_error_survives_pickling_with_its_place() -> None:
    import pickle

    with pytest.raises(CelEvalError) as caught:
        compile("1 / 0").evaluate({})
    copy = pickle.loads(pickle.dumps(caught.value))
    assert (type(copy), copy.reason, copy.position, str(copy)) == (
        CelEvalError, "division by zero", 2, str(caught.value))
