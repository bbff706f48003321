"""The Ironic dialect: what POST /v1/inspection_rules accepts, every 400, and display."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pytest

from ironsight.common.exceptions import Invalid
from ironsight.discoverd.rules.model import Action, Condition
from ironsight.discoverd.rules.validate import InvalidRule, parse_ironic, to_ironic

UUID = "9a1d7d45-3b4c-4a56-8a7a-6c3b2f1e0d9c"
LOG = {"op": "log", "args": {"msg": "hello"}}


def body(**fields: Any) -> dict[str, Any]:
    return {"actions": [LOG], **fields}


def refused(the_body: Any, field: str, *, built_in: bool = False) -> InvalidRule:
    with pytest.raises(InvalidRule) as info:
        parse_ironic(the_body, built_in=built_in)
    assert info.value.field == field, info.value.message
    assert info.value.code == 400
    assert field in info.value.message
    return info.value


def test_a_minimal_rule_gets_the_defaults() -> None:
    rule = parse_ironic(body())
    assert (rule.priority, rule.phase, rule.sensitive, rule.conditions, rule.dialect,
            rule.built_in) == (0, "main", False, (), "ironic", False)
    assert rule.actions == (Action("log", {"msg": "hello"}),)


def test_a_given_uuid_is_kept() -> None:
    assert parse_ironic(body(uuid=UUID)).uuid == UUID


def test_invalid_rule_is_an_invalid() -> None:
    assert issubclass(InvalidRule, Invalid)


def test_the_body_must_be_an_object() -> None:
    refused([LOG], "body")


def test_unknown_fields_are_refused() -> None:
    refused(body(scope="x"), "scope")


def test_actions_are_required() -> None:
    refused({}, "actions")


def test_at_least_one_action() -> None:
    refused({"actions": []}, "actions")


def test_actions_must_be_a_list() -> None:
    refused({"actions": LOG}, "actions")


def test_conditions_must_be_a_list() -> None:
    refused(body(conditions={"op": "eq"}), "conditions")


def test_a_long_description_is_refused() -> None:
    refused(body(description="x" * 256), "description")


def test_a_description_must_be_text() -> None:
    refused(body(description=5), "description")


def test_only_phase_main() -> None:
    err = refused(body(phase="pre"), "phase")
    assert "valid phases are: main" in err.message


@pytest.mark.parametrize("priority", [-1, 10000])
def test_user_priorities_are_0_to_9999(priority: int) -> None:
    refused(body(priority=priority), "priority")


@pytest.mark.parametrize("priority", [-1, 10000])
def test_built_in_rules_may_use_any_priority(priority: int) -> None:
    assert parse_ironic(body(priority=priority), built_in=True).priority == priority


@pytest.mark.parametrize("priority", ["5", True, 1.5])
def test_priority_must_be_an_integer(priority: Any) -> None:
    refused(body(priority=priority), "priority")


def test_sensitive_must_be_a_boolean() -> None:
    refused(body(sensitive="yes"), "sensitive")


def test_uuid_must_be_a_uuid() -> None:
    refused(body(uuid="not-a-uuid"), "uuid")


def test_an_action_must_be_an_object() -> None:
    refused({"actions": ["log"]}, "actions[0]")


def test_an_unknown_action_is_refused() -> None:
    refused({"actions": [{"op": "reboot", "args": {}}]}, "actions[0].op")


def test_an_action_needs_args() -> None:
    refused({"actions": [{"op": "log"}]}, "actions[0].args")


def test_an_action_with_an_unknown_field_is_refused() -> None:
    refused({"actions": [{**LOG, "when": "now"}]}, "actions[0].when")


def test_a_missing_argument_names_the_op_and_argument() -> None:
    err = refused({"actions": [{"op": "set-attribute", "args": {"path": "extra.x"}}]},
                  "actions[0].args.value")
    assert "set-attribute" in err.message


def test_an_unexpected_argument_names_it() -> None:
    refused({"actions": [{"op": "log", "args": {"msg": "m", "colour": "red"}}]},
            "actions[0].args.colour")


def test_args_must_be_an_object_or_a_list() -> None:
    refused({"actions": [{"op": "log", "args": "hello"}]}, "actions[0].args")


def test_positional_args_are_named() -> None:
    rule = parse_ironic({"actions": [{"op": "log", "args": ["hi", "warning"]}]})
    assert rule.actions[0].args == {"msg": "hi", "level": "warning"}


def test_too_many_positional_args_are_refused() -> None:
    refused({"actions": [{"op": "add-trait", "args": ["A", "B"]}]}, "actions[0].args")


def test_too_few_positional_args_are_refused() -> None:
    refused({"actions": [{"op": "set-attribute", "args": ["extra.x"]}]},
            "actions[0].args.value")


@pytest.mark.parametrize("path", ["uuid", "/provision_state", "driver_internal_info.x",
                                  "traits", "power_state"])
def test_node_paths_the_api_refuses_are_refused(path: str) -> None:
    err = refused({"actions": [{"op": "set-attribute", "args": {"path": path, "value": 1}}]},
                  "actions[0].args.path")
    assert repr(path.strip("/").split(".")[0]) in err.message


def test_port_paths_the_api_refuses_are_refused() -> None:
    refused({"actions": [{"op": "set-port-attribute",
                          "args": {"port_id": "x", "path": "node_uuid", "value": 1}}]},
            "actions[0].args.path")


def test_an_empty_plugin_data_path_part_is_refused() -> None:
    refused({"actions": [{"op": "set-plugin-data", "args": {"path": "a..b", "value": 1}}]},
            "actions[0].args.path")


def test_an_invalid_log_level_is_refused() -> None:
    refused({"actions": [{"op": "log", "args": {"msg": "m", "level": "loud"}}]},
            "actions[0].args.level")


def test_unique_must_be_a_boolean() -> None:
    refused({"actions": [{"op": "extend-attribute",
                          "args": {"path": "extra.x", "value": 1, "unique": "yes"}}]},
            "actions[0].args.unique")


@pytest.mark.parametrize(("args", "field"), [
    ({"url": "ftp://example.com/"}, "url"),
    ({"url": "https://example.com/", "timeout": 0}, "timeout"),
    ({"url": "https://example.com/", "retries": -1}, "retries"),
    ({"url": "https://example.com/", "backoff_factor": -1}, "backoff_factor"),
    ({"url": "https://example.com/", "headers": {"X": 1}}, "headers"),
])
def test_bad_api_call_arguments_are_refused(args: dict[str, Any], field: str) -> None:
    refused({"actions": [{"op": "api-call", "args": args}]}, f"actions[0].args.{field}")


def test_a_loop_must_be_a_list_or_object() -> None:
    refused({"actions": [{**LOG, "loop": "abc"}]}, "actions[0].loop")


def cond(**fields: Any) -> dict[str, Any]:
    return body(conditions=[fields])


def test_a_condition_must_be_an_object() -> None:
    refused(body(conditions=["eq"]), "conditions[0]")


def test_an_unknown_condition_op_is_refused() -> None:
    refused(cond(op="like", args={}), "conditions[0].op")


def test_two_exclamation_marks_are_refused() -> None:
    refused(cond(op="!!eq", args={"values": []}), "conditions[0].op")


def test_a_condition_needs_an_op() -> None:
    refused(cond(args={}), "conditions[0].op")


def test_a_condition_with_an_unknown_field_is_refused() -> None:
    refused(cond(op="is-true", args={"value": 1}, field="x"), "conditions[0].field")


def test_a_bad_multiple_is_refused() -> None:
    refused(cond(op="is-true", args={"value": "{item}"}, loop=[1], multiple="most"),
            "conditions[0].multiple")


def test_a_bad_condition_loop_is_refused() -> None:
    refused(cond(op="is-true", args={"value": "{item}"}, loop=5), "conditions[0].loop")


def test_values_must_be_a_list() -> None:
    refused(cond(op="eq", args={"values": 5}), "conditions[0].args.values")


def test_force_strings_must_be_a_boolean() -> None:
    refused(cond(op="eq", args={"values": [], "force_strings": "yes"}),
            "conditions[0].args.force_strings")


def test_an_invalid_subnet_is_refused() -> None:
    refused(cond(op="in-net", args={"address": "{inventory[bmc_address]}", "subnet": "x"}),
            "conditions[0].args.subnet")


def test_an_invalid_regex_is_refused() -> None:
    refused(cond(op="matches", args={"value": "x", "regex": "("}),
            "conditions[0].args.regex")


@pytest.mark.parametrize("op", ["le", "ge", "ne"])
def test_le_ge_ne_are_accepted(op: str) -> None:
    assert parse_ironic(cond(op=op, args={"values": [1, 2]})).conditions[0].op == op


def test_negation_is_parsed() -> None:
    rule = parse_ironic(cond(op="! eq", args=[[1, 2]]))
    assert rule.conditions[0] == Condition("eq", True, {"values": [1, 2]})


def test_to_ironic_shows_the_rule() -> None:
    created = dt.datetime(2026, 12, 3, 17, 0, tzinfo=dt.UTC)
    rule = parse_ironic(body(uuid=UUID, description="d", priority=5, conditions=[
        {"op": "!eq", "args": {"values": ["{item}", 1]}, "loop": [1, 2], "multiple": "all"},
        {"op": "is-true", "args": {"value": True}}]))
    shown = to_ironic(replace(rule, created_at=created))
    assert shown == {
        "uuid": UUID, "description": "d", "priority": 5, "sensitive": False, "phase": "main",
        "conditions": [{"op": "!eq", "args": {"values": ["{item}", 1]}, "loop": [1, 2],
                        "multiple": "all"},
                       {"op": "is-true", "args": {"value": True}}],
        "actions": [LOG], "created_at": "2026-12-03T17:00:00+00:00", "updated_at": None,
        "built_in": False}


def test_to_ironic_round_trips() -> None:
    original = body(uuid=UUID, description="d", priority=3, sensitive=False, phase="main",
                    conditions=[{"op": "gt", "args": {"values": ["{inventory[cpu][count]}",
                                                                 2]}}],
                    actions=[{"op": "add-trait", "args": {"name": "CUSTOM_X"},
                              "loop": [1]}])
    rule = parse_ironic(original)
    shown = to_ironic(rule)
    again = {k: v for k, v in shown.items()
             if k not in ("created_at", "updated_at", "built_in")}
    assert parse_ironic(again) == rule


def test_sensitive_rules_hide_conditions_and_actions() -> None:
    shown = to_ironic(parse_ironic(body(sensitive=True)))
    assert shown["conditions"] is None and shown["actions"] is None


def test_sensitive_rules_show_everything_for_patching() -> None:
    shown = to_ironic(parse_ironic(body(sensitive=True)), hide_sensitive=False)
    assert shown["actions"] == [LOG]
