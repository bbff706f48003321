"""The comprehension macros over lists and maps' keys; all and exists absorb errors as && and
|| do, the others let any error through."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common.cel import CelCompileError, compile

from .helpers import failure, value


def test_all_is_true_when_every_predicate_is_true() -> None:
    assert value("[1, 2, 3].all(x, x > 0)") is True
    assert value("[1, 2, 3].all(x, x > 1)") is False
    assert value("[].all(x, x > 1)") is True


def test_exists_is_true_when_some_predicate_is_true() -> None:
    assert value("[1, 2, 3].exists(x, x == 2)") is True
    assert value("[1, 2, 3].exists(x, x == 4)") is False
    assert value("[].exists(x, true)") is False


def test_all_ignores_errors_when_some_predicate_is_false() -> None:
    assert value("[0, 1].all(x, 1 / x > 5)") is False
    assert value("[1, 0].all(x, 1 / x > 5)") is False


def test_exists_ignores_errors_when_some_predicate_is_true() -> None:
    assert value("[0, 1].exists(x, 1 / x == 1)") is True


def test_all_and_exists_report_an_error_that_nothing_absorbs() -> None:
    assert failure("[0, 1].all(x, 1 / x == 1)").reason == "division by zero"
    assert failure("[0, 2].exists(x, 1 / x == 1)").reason == "division by zero"


def test_a_non_bool_predicate_is_an_error() -> None:
    assert "not bool" in failure("[1].all(x, x)").reason
    assert "not bool" in failure("[1].exists(x, x)").reason
    assert value("[1, 2].all(x, x == 2 ? false : x)") is False


def test_exists_one_is_true_for_exactly_one_true_predicate() -> None:
    assert value("[1, 2, 3].exists_one(x, x > 2)") is True
    assert value("[1, 2, 3].exists_one(x, x > 1)") is False
    assert value("[1, 2, 3].exists_one(x, x > 3)") is False


def test_exists_one_lets_any_error_through() -> None:
    assert failure("[0, 1].exists_one(x, 1 / x == 1)").reason == "division by zero"


def test_map_transforms_each_element() -> None:
    assert value("[1, 2, 3].map(n, n * n)") == [1, 4, 9]


def test_map_with_a_predicate_transforms_the_elements_it_keeps() -> None:
    assert value("[1, 2, 3, 4].map(n, n % 2 == 0, n * 10)") == [20, 40]


def test_filter_keeps_the_elements_whose_predicate_is_true() -> None:
    assert value("[1, 2, 3].filter(i, i % 2 > 0)") == [1, 3]
    assert value("[1, 2, 3].filter(i, i > 5)") == []


def test_map_and_filter_let_any_error_through() -> None:
    assert failure("[1, 0].map(x, 1 / x)").reason == "division by zero"
    assert failure("[1, 0].filter(x, 1 / x == 1)").reason == "division by zero"


def test_comprehensions_range_over_a_maps_keys() -> None:
    assert value('{"a": 1, "b": 2}.all(k, k in ["a", "b"])') is True
    assert value('{"a": 1, "b": 2}.exists(k, k == "b")') is True
    assert sorted(value('{"a": 1, "b": 2}.map(k, k + k)')) == ["aa", "bb"]
    assert value('m.filter(k, m[k] > 1)', m={"a": 1, "b": 2}) == ["b"]


def test_ranging_over_a_scalar_is_an_error() -> None:
    assert failure("x.all(y, true)", x=3).reason == "cannot range over int"


def test_the_loop_variable_shadows_an_outer_name_only_inside() -> None:
    assert value("[1, 2].map(x, x + 10) + [x]", x=0) == [11, 12, 0]


def test_comprehensions_nest() -> None:
    assert value("[[1, 2], [3]].map(xs, xs.map(x, x * 2))") == [[2, 4], [6]]
    assert value("[1, 2].exists(x, [2, 3].exists(y, x == y))") is True


def test_the_inner_body_reads_outer_loop_variables_and_roots() -> None:
    assert value("[1, 2].map(x, [10].map(y, x + y + z))", z=100) == [[111], [112]]


def test_the_activation_is_left_as_it_was() -> None:
    activation = {"xs": [1, 2]}
    compile("xs.all(x, x > 0)").evaluate(activation)
    assert activation == {"xs": [1, 2]}


def test_the_loop_variable_must_be_a_simple_name() -> None:
    with pytest.raises(CelCompileError, match="must be a simple name") as caught:
        compile("xs.all(a.b, true)")
    assert caught.value.position == 7


def test_a_macro_with_the_wrong_argument_count_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match=r"all\(\) takes 2 arguments, not 1"):
        compile("xs.all(x)")
    with pytest.raises(CelCompileError, match=r"map\(\) takes 2 or 3 arguments, not 4"):
        compile("xs.map(x, a, b, c)")


def test_has_takes_exactly_one_field_selection() -> None:
    with pytest.raises(CelCompileError, match=r"has\(\) takes one field selection"):
        compile("has(a)")
    with pytest.raises(CelCompileError, match=r"has\(\) takes one field selection"):
        compile("has(a.b, a.c)")


def test_the_issues_example_finds_a_gpu_among_pci_devices() -> None:
    document: dict[str, Any] = {
        "pci_devices": [{"vendor_id": "8086", "product_id": "1533"},
                        {"vendor_id": "10de", "product_id": "2204"}],
        "memory": {"physical_mb": 524288},
    }
    program = compile('inventory.pci_devices.exists(d, d.vendor_id == "10de")')
    assert program.matches({"inventory": document}) is True
    document["pci_devices"].pop()
    assert program.matches({"inventory": document}) is False
    assert program.roots == {"inventory"}
