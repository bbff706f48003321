"""The Ironic dialect's positional (list-form) `args`: mapped onto each op's parameters in
order and checked for their count only, as Ironic's `_normalize_list_args`; and rules shown
back with their conditions and actions as posted, as Ironic stores them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ironsight.discoverd.rules.model import Action, Condition
from ironsight.discoverd.rules.validate import (
    InvalidRule,
    parse_ironic,
    positional_warnings,
    to_inspector,
    to_ironic,
)

from .builders import rule, run

SET_DRIVER = {"op": "set-attribute", "args": ["/driver", "idrac"]}


def refused(the_body: dict[str, Any], field: str) -> InvalidRule:
    with pytest.raises(InvalidRule) as info:
        parse_ironic(the_body)
    assert info.value.field == field, info.value.message
    assert info.value.code == 400
    return info.value


def with_condition(condition: dict[str, Any]) -> dict[str, Any]:
    return {"conditions": [condition], "actions": [SET_DRIVER]}


# --- conditions -----------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "args", "named"), [
    ("eq", [[1, 1]], {"values": [1, 1]}),
    ("eq", [[1, 1], True], {"values": [1, 1], "force_strings": True}),
    ("is-true", ["{plugin_data[auto_discovered]}"],
     {"value": "{plugin_data[auto_discovered]}"}),
    ("in-net", ["{inventory[bmc_address]}", "192.0.2.0/24"],
     {"address": "{inventory[bmc_address]}", "subnet": "192.0.2.0/24"}),
    ("matches", ["{node.name}", "compute-.*"], {"value": "{node.name}", "regex": "compute-.*"}),
    ("one-of", ["{node.driver}", ["ipmi", "redfish"]],
     {"value": "{node.driver}", "values": ["ipmi", "redfish"]}),
])
def test_a_conditions_positional_args_are_named_in_signature_order(
        op: str, args: list[Any], named: dict[str, Any]) -> None:
    parsed = parse_ironic(with_condition({"op": op, "args": args}))
    assert parsed.conditions == (Condition(op, False, named),)


def test_a_comparisons_two_item_list_maps_onto_values_and_force_strings_as_upstream() -> None:
    parsed = parse_ironic(with_condition({"op": "eq", "args": ["node:memory_mb", 4096],
                                          "multiple": "all"}))
    assert parsed.conditions[0].args == {"values": "node:memory_mb", "force_strings": 4096}


def test_a_comparisons_named_values_must_still_be_a_list() -> None:
    refused(with_condition({"op": "eq", "args": {"values": "node:memory_mb"}}),
            "conditions[0].args.values")


def test_too_many_positional_args_of_a_condition_are_400_naming_the_op() -> None:
    err = refused(with_condition({"op": "is-true", "args": ["{node.name}", "extra"]}),
                  "conditions[0].args")
    assert "is-true" in err.message


def test_too_few_positional_args_of_a_condition_are_400_naming_the_op() -> None:
    err = refused(with_condition({"op": "in-net", "args": ["{inventory[bmc_address]}"]}),
                  "conditions[0].args.subnet")
    assert "in-net" in err.message


def test_an_empty_positional_list_misses_the_required_args() -> None:
    err = refused(with_condition({"op": "eq", "args": []}), "conditions[0].args.values")
    assert "eq" in err.message


def test_positional_args_of_other_ops_are_checked_as_named_ones() -> None:
    refused(with_condition({"op": "matches", "args": ["{node.name}", "("]}),
            "conditions[0].args.regex")


# --- actions --------------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "args", "named"), [
    ("set-attribute", ["/driver", "idrac"], {"path": "/driver", "value": "idrac"}),
    ("extend-attribute", ["/extra/tags", "a", True],
     {"path": "/extra/tags", "value": "a", "unique": True}),
    ("add-trait", ["CUSTOM_X"], {"name": "CUSTOM_X"}),
    ("set-port-attribute", ["{item}", "physical_network", "physnet1"],
     {"port_id": "{item}", "path": "physical_network", "value": "physnet1"}),
    ("log", ["hello"], {"msg": "hello"}),
])
def test_an_actions_positional_args_are_named_in_signature_order(
        op: str, args: list[Any], named: dict[str, Any]) -> None:
    parsed = parse_ironic({"actions": [{"op": op, "args": args}]})
    assert parsed.actions == (Action(op, named),)


def test_too_many_positional_args_of_an_action_are_400_naming_the_op() -> None:
    err = refused({"actions": [{"op": "add-trait", "args": ["A", "B"]}]}, "actions[0].args")
    assert "add-trait" in err.message


def test_too_few_positional_args_of_an_action_are_400_naming_the_op() -> None:
    err = refused({"actions": [{"op": "set-attribute", "args": ["/driver"]}]},
                  "actions[0].args.value")
    assert "set-attribute" in err.message


# --- what a comparison mapped from a list does -----------------------------------------------


def test_a_comparison_whose_values_is_not_a_list_is_a_creation_warning() -> None:
    parsed = parse_ironic(with_condition({"op": "gt", "args": ["node:memory_mb", 4096]}))
    [warning] = positional_warnings(parsed)
    assert warning.startswith("conditions[0].args:")
    assert "values='node:memory_mb'" in warning and "force_strings=4096" in warning


@pytest.mark.parametrize("condition", [
    {"op": "eq", "args": [[1, 1]]},
    {"op": "eq", "args": {"values": ["{inventory[cpu][count]}", 4]}},
    {"op": "eq", "args": ["{plugin_data[sizes]}"]},
    {"op": "is-true", "args": ["yes"]},
])
def test_conditions_that_can_hold_have_no_warning(condition: dict[str, Any]) -> None:
    assert positional_warnings(parse_ironic(with_condition(condition))) == []


async def test_a_comparison_whose_values_is_not_a_list_fails_the_run_as_upstream() -> None:
    outcome = await run(rule({"op": "log", "args": {"msg": "x"}}, conditions=[
        {"op": "eq", "args": ["node:memory_mb", 4096]}]))
    assert outcome.failure is not None
    assert "condition 0 (eq) failed" in outcome.failure and "must be a list" in outcome.failure


# --- shown as posted ------------------------------------------------------------------------


def test_positional_args_are_shown_back_as_posted() -> None:
    posted = {"conditions": [{"op": "eq", "args": ["node:memory_mb", 4096]}],
              "actions": [SET_DRIVER]}
    shown = to_ironic(parse_ironic(posted))
    assert shown["conditions"] == posted["conditions"]
    assert shown["actions"] == [SET_DRIVER]


def test_the_op_is_shown_as_posted() -> None:
    shown = to_ironic(parse_ironic(with_condition({"op": "! eq", "args": [[1, 2]]})))
    assert shown["conditions"] == [{"op": "! eq", "args": [[1, 2]]}]


def test_multiple_is_shown_only_with_a_loop_as_upstream() -> None:
    shown = to_ironic(parse_ironic({
        "conditions": [{"op": "eq", "args": [[1, 1]], "multiple": "all"},
                       {"op": "eq", "args": [["{item}", 1]], "loop": [1]}],
        "actions": [{"op": "add-trait", "args": ["CUSTOM_{item}"], "loop": [1, 2]}]}))
    assert shown["conditions"] == [
        {"op": "eq", "args": [[1, 1]]},
        {"op": "eq", "args": [["{item}", 1]], "loop": [1], "multiple": "any"}]
    assert shown["actions"] == [
        {"op": "add-trait", "args": ["CUSTOM_{item}"], "loop": [1, 2]}]


def test_the_shown_form_parses_back_to_the_same_rule() -> None:
    parsed = parse_ironic({"uuid": "9a1d7d45-3b4c-4a56-8a7a-6c3b2f1e0d9c",
                           "conditions": [{"op": "gt", "args": ["node:memory_mb", 4096]}],
                           "actions": [SET_DRIVER]})
    shown = to_ironic(parsed)
    again = {k: v for k, v in shown.items()
             if k not in ("created_at", "updated_at", "built_in")}
    assert parse_ironic(again) == parsed


def test_the_posted_form_is_not_shared_with_the_request_body() -> None:
    posted = {"actions": [{"op": "add-trait", "args": ["CUSTOM_X"]}]}
    parsed = parse_ironic(posted)
    posted["actions"][0]["args"].append("changed")
    assert to_ironic(parsed)["actions"] == [{"op": "add-trait", "args": ["CUSTOM_X"]}]


def test_a_rule_stored_without_its_posted_form_is_shown_named() -> None:
    parsed = replace(parse_ironic({"actions": [SET_DRIVER]}), source=None)
    assert to_ironic(parsed)["actions"] == [
        {"op": "set-attribute", "args": {"path": "/driver", "value": "idrac"}}]


def test_sensitive_rules_still_hide_the_posted_form() -> None:
    shown = to_ironic(parse_ironic({"actions": [SET_DRIVER], "sensitive": True}))
    assert shown["conditions"] is None and shown["actions"] is None


def test_the_inspector_shape_of_an_ironic_rule_uses_the_named_form() -> None:
    shown = to_inspector(parse_ironic({"actions": [SET_DRIVER]}))
    assert shown["actions"] == [
        {"op": "set-attribute", "args": {"path": "/driver", "value": "idrac"}}]
