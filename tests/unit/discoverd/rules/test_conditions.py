"""Condition operators, negation, loops and how values compare."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.discoverd.rules import conditions
from ironsight.discoverd.rules.interpolate import Scope
from ironsight.discoverd.rules.model import Condition

from .builders import inventory, node

MEMORY = "{inventory[memory][physical_mb]}"  # 8192


def holds(op: str, args: dict[str, Any], *, loop: Any = None, multiple: Any = "any",
          plugin_data: dict[str, Any] | None = None, inspector: bool = False) -> bool:
    name, invert = conditions.parse_op(op)
    scope = Scope(node(), inventory(), plugin_data or {}, inspector=inspector)
    result, _args = conditions.evaluate(
        Condition(name, invert, args, loop, multiple), scope, [])
    return result


def test_eq_of_equal_values() -> None:
    assert holds("eq", {"values": ["{inventory[cpu][architecture]}", "x86_64"]})


def test_eq_compares_a_chain_of_values() -> None:
    assert not holds("eq", {"values": ["a", "a", "b"]})


def test_fewer_than_two_values_hold_as_upstream() -> None:
    assert holds("lt", {"values": [1]})


def test_numbers_in_strings_compare_as_numbers() -> None:
    # As strings "8192" > "16000"; as numbers it is less.
    assert holds("lt", {"values": ["8192", "16000"]})


def test_interpolated_memory_compares_as_a_number() -> None:
    assert holds("lt", {"values": [MEMORY, "16000"]})


def test_force_strings_does_not_turn_numbers_into_text() -> None:
    assert holds("lt", {"values": ["8192", "16000"], "force_strings": True})


def test_force_strings_compares_other_values_as_text() -> None:
    assert holds("eq", {"values": [True, "True"], "force_strings": True})


def test_without_force_strings_other_values_compare_as_they_are() -> None:
    assert not holds("eq", {"values": [True, "True"]})


def test_text_compares_as_text() -> None:
    assert holds("gt", {"values": ["b", "a"]})


def test_values_that_cannot_be_ordered_are_an_error() -> None:
    with pytest.raises(conditions.ConditionError, match="cannot compare"):
        holds("lt", {"values": ["a", [1]]})


def test_gt() -> None:
    assert holds("gt", {"values": [MEMORY, 4096]})


@pytest.mark.parametrize(("op", "expected"), [("le", True), ("ge", True), ("ne", False)])
def test_le_ge_ne_are_accepted(op: str, expected: bool) -> None:
    assert holds(op, {"values": [MEMORY, "8192"]}) is expected


def test_ne_of_different_values() -> None:
    assert holds("ne", {"values": ["{inventory[cpu][architecture]}", "aarch64"]})


def test_negation() -> None:
    assert holds("!eq", {"values": ["{inventory[cpu][architecture]}", "aarch64"]})


def test_negation_with_a_space() -> None:
    assert holds("! gt", {"values": [MEMORY, 16000]})


def test_two_exclamation_marks_are_refused() -> None:
    with pytest.raises(ValueError, match="only one"):
        conditions.parse_op("!!eq")


@pytest.mark.parametrize("value", ["", None, [], {}, "{plugin_data[absent]}"])
def test_is_empty(value: Any) -> None:
    assert holds("is-empty", {"value": value})


def test_is_empty_of_a_value() -> None:
    assert not holds("is-empty", {"value": "{inventory[bmc_address]}"})


def test_in_net() -> None:
    assert holds("in-net", {"address": "{inventory[bmc_address]}", "subnet": "192.0.2.0/24"})


def test_in_net_of_an_address_elsewhere() -> None:
    assert not holds("in-net", {"address": "10.0.0.10", "subnet": "192.0.2.0/24"})


def test_in_net_of_no_address_does_not_hold() -> None:
    assert not holds("in-net", {"address": None, "subnet": "10.0.0.0/8"})


def test_in_net_of_an_invalid_subnet_is_an_error() -> None:
    with pytest.raises(conditions.ConditionError, match="invalid subnet"):
        holds("in-net", {"address": "10.0.0.1", "subnet": "nonsense"})


def test_matches_is_a_full_match() -> None:
    assert holds("matches", {"value": "{inventory[system_vendor][product_name]}",
                             "regex": "Rack [0-9]{4}"})
    assert not holds("matches", {"value": "{inventory[system_vendor][product_name]}",
                                 "regex": "Rack"})


def test_contains_searches() -> None:
    assert holds("contains", {"value": "{inventory[system_vendor][product_name]}",
                              "regex": "ack"})


def test_one_of() -> None:
    assert holds("one-of", {"value": "{inventory[cpu][architecture]}",
                            "values": ["aarch64", "x86_64"]})


def test_one_of_compares_numbers_as_numbers() -> None:
    assert holds("one-of", {"value": MEMORY, "values": ["4096", "8192"]})


def test_is_none_of_a_missing_key() -> None:
    assert holds("is-none", {"value": "{plugin_data[absent]}"})


def test_is_none_of_a_value() -> None:
    assert not holds("is-none", {"value": "{inventory[cpu][count]}"})


@pytest.mark.parametrize("value", [True, 1, "yes", "True"])
def test_is_true(value: Any) -> None:
    assert holds("is-true", {"value": value})


@pytest.mark.parametrize("value", [False, 0, "no", "false", None])
def test_is_false(value: Any) -> None:
    assert holds("is-false", {"value": value})


def test_is_true_of_other_text_does_not_hold() -> None:
    assert not holds("is-true", {"value": "maybe"})


NICS = "{item[ipv4_address]}"


def test_loop_any() -> None:
    loop = inventory()["interfaces"]  # eth0 10.0.0.10, eth1 no address
    assert holds("in-net", {"address": NICS, "subnet": "10.0.0.0/8"}, loop=loop)


def test_loop_all() -> None:
    loop = inventory()["interfaces"]
    assert not holds("in-net", {"address": NICS, "subnet": "10.0.0.0/8"}, loop=loop,
                     multiple="all")


def test_loop_first_is_the_first_items_result() -> None:
    loop = list(reversed(inventory()["interfaces"]))
    assert not holds("in-net", {"address": NICS, "subnet": "10.0.0.0/8"}, loop=loop,
                     multiple="first")


def test_loop_last_is_the_last_items_result() -> None:
    loop = inventory()["interfaces"]
    assert not holds("in-net", {"address": NICS, "subnet": "10.0.0.0/8"}, loop=loop,
                     multiple="last")


def test_negation_applies_per_item() -> None:
    loop = inventory()["interfaces"]
    assert holds("!in-net", {"address": NICS, "subnet": "10.0.0.0/8"}, loop=loop,
                 multiple="any")


def test_loops_compare_numbers_as_numbers() -> None:
    # Upstream forces strings in loops, where "8192" > "16000".
    assert holds("lt", {"values": ["{item}", "16000"]}, loop=["8192"])


def test_a_dict_loop_is_one_item() -> None:
    assert holds("eq", {"values": ["{item[a]}", "1"]}, loop={"a": 1})


def test_inspector_conditions_on_missing_fields_do_not_hold() -> None:
    assert not holds("ne", {"values": ["{plugin_data[absent]}", 1]}, inspector=True)


@pytest.mark.parametrize(("text", "number"), [
    ("42", 42), (" 42 ", 42), ("-1.5", -1.5), ("1e3", 1000.0), ("inf", float("inf")),
    ("Infinity", float("inf")), ("٣", 3), ("+7", 7)])
def test_texts_that_parse_as_numbers_are_numbers(text: str, number: float) -> None:
    assert conditions.as_number(text) == number


@pytest.mark.parametrize("text", ["R640", "x86_64", "model-5", "nan", "", "1.2.3", "none"])
def test_texts_that_do_not_parse_as_numbers_are_not(text: str) -> None:
    assert conditions.as_number(text) is None


def test_an_invalid_regex_fails_every_time_it_is_evaluated() -> None:
    for _ in range(2):
        with pytest.raises(conditions.ConditionError, match="invalid regular expression"):
            holds("matches", {"value": "x", "regex": "(unclosed"})
