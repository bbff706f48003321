"""The inspector dialect (POST /v1/rules): conversion into the model, every 400, display."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.discoverd.rules import engine
from ironsight.discoverd.rules.model import Action, Condition, MaskPolicy
from ironsight.discoverd.rules.validate import InvalidRule, parse_inspector, to_inspector

from .builders import facts

UUID = "9a1d7d45-3b4c-4a56-8a7a-6c3b2f1e0d9c"
SET = {"action": "set-attribute", "path": "/extra/rule_success", "value": "yes"}


def body(*conditions: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"conditions": list(conditions), "actions": [SET], **fields}


def refused(the_body: Any, field: str) -> None:
    with pytest.raises(InvalidRule) as info:
        parse_inspector(the_body)
    assert info.value.field == field, info.value.message
    assert field in info.value.message


def test_a_rule_has_priority_0_and_the_inspector_dialect() -> None:
    rule = parse_inspector(body(description="tempest", scope="gpu"))
    assert (rule.priority, rule.dialect, rule.scope, rule.description) == (
        0, "inspector", "gpu", "tempest")


def test_data_fields_become_plugin_data_references() -> None:
    rule = parse_inspector(body({"op": "ge", "field": "memory_mb", "value": 4096}))
    assert rule.conditions == (Condition("ge", False, {"values": ["{plugin_data[memory_mb]}",
                                                                  4096]}),)


def test_inventory_fields_become_inventory_references() -> None:
    rule = parse_inspector(body({"op": "eq", "field": "data://inventory.interfaces[0].name",
                                 "value": "eth0"}))
    assert rule.conditions[0].args["values"][0] == "{inventory[interfaces][0][name]}"


def test_node_fields_become_node_references() -> None:
    rule = parse_inspector(body({"op": "eq", "field": "node://properties.cpu_arch",
                                 "value": "x86_64", "invert": True, "multiple": "all"}))
    assert rule.conditions[0] == Condition(
        "eq", True, {"values": ["{node.properties[cpu_arch]}", "x86_64"]}, None, "all")


@pytest.mark.parametrize(("op", "args"), [
    ("in-net", {"address": "{inventory[bmc_address]}", "subnet": "192.0.2.0/24"}),
    ("matches", {"value": "{inventory[bmc_address]}", "regex": "192.0.2.0/24"}),
    ("contains", {"value": "{inventory[bmc_address]}", "regex": "192.0.2.0/24"}),
])
def test_value_becomes_the_ops_second_argument(op: str, args: dict[str, Any]) -> None:
    rule = parse_inspector(body({"op": op, "field": "inventory.bmc_address",
                                 "value": "192.0.2.0/24"}))
    assert rule.conditions[0].args == args


def test_wildcards_are_kept_in_the_reference() -> None:
    rule = parse_inspector(body({"op": "in-net", "field": "inventory.interfaces[*].ipv4_address",
                                 "value": "10.0.0.0/8"}))
    assert rule.conditions[0].args["address"] == "{inventory[interfaces][*][ipv4_address]}"


async def wildcard_holds(multiple: str, subnet: str = "10.0.0.0/8") -> bool:
    rule = parse_inspector(body({"op": "in-net", "field": "inventory.interfaces[*].ipv4_address",
                                 "value": subnet, "multiple": multiple}))
    outcome = await engine.apply_rules([rule], facts(), mask=MaskPolicy.ALWAYS)
    return outcome.traces[0].matched


async def test_a_wildcard_field_with_multiple_any() -> None:
    # eth0 has 10.0.0.10, eth1 no address.
    assert await wildcard_holds("any")


async def test_a_wildcard_field_with_multiple_all() -> None:
    assert not await wildcard_holds("all")


async def test_a_wildcard_field_with_multiple_first() -> None:
    assert await wildcard_holds("first")


async def test_a_wildcard_field_matching_nothing_does_not_hold() -> None:
    rule = parse_inspector(body({"op": "eq", "field": "inventory.absent[*].x", "value": 1}))
    outcome = await engine.apply_rules([rule], facts(), mask=MaskPolicy.ALWAYS)
    assert outcome.traces[0].matched is False


def test_is_empty_takes_no_value() -> None:
    rule = parse_inspector(body({"op": "is-empty", "field": "data://extra"}))
    assert rule.conditions[0].args == {"value": "{plugin_data[extra]}"}


def test_actions_convert_to_the_same_ops() -> None:
    rule = parse_inspector({"actions": [
        {"action": "fail", "message": "bad"},
        {"action": "set-capability", "name": "x", "value": "1"},
        {"action": "extend-attribute", "path": "/extra/l", "value": 1, "unique": True},
        {"action": "add-trait", "name": "CUSTOM_A"},
        {"action": "remove-trait", "name": "CUSTOM_B"}]})
    assert rule.actions == (
        Action("fail", {"msg": "bad"}), Action("set-capability", {"name": "x", "value": "1"}),
        Action("extend-attribute", {"path": "/extra/l", "value": 1, "unique": True}),
        Action("add-trait", {"name": "CUSTOM_A"}), Action("remove-trait", {"name": "CUSTOM_B"}))


def test_to_inspector_shows_the_rule_with_defaults() -> None:
    posted = body({"op": "eq", "field": "memory_mb", "value": 1}, uuid=UUID)
    assert to_inspector(parse_inspector(posted)) == {
        "uuid": UUID, "description": None, "scope": None,
        "conditions": [{"op": "eq", "field": "memory_mb", "multiple": "any", "invert": False,
                        "value": 1}],
        "actions": [SET]}


def test_to_inspector_round_trips() -> None:
    rule = parse_inspector(body({"op": "lt", "field": "node://properties.memory_mb",
                                 "value": 1, "invert": True}, description="d", scope="s"))
    assert parse_inspector({**to_inspector(rule), "links": []}) == rule


async def test_a_rule_as_tempest_imports_it_applies() -> None:
    # ironic-tempest-plugin's rule: on any node, set extra.rule_success.
    rule = parse_inspector({"description": "Successful Rule", "conditions": [
        {"op": "ge", "field": "inventory.memory.physical_mb", "value": 1}],
        "actions": [SET, {"action": "set-attribute", "path": "/extra/cpus",
                          "value": "{data[inventory][cpu][count]}"}]})
    outcome = await engine.apply_rules([rule], facts(), mask=MaskPolicy.ALWAYS)
    assert outcome.node_patch == [{"op": "add", "path": "/extra/rule_success", "value": "yes"},
                                  {"op": "add", "path": "/extra/cpus", "value": 4}]


async def test_a_condition_on_a_missing_field_does_not_hold() -> None:
    rule = parse_inspector(body({"op": "ne", "field": "absent", "value": 1}))
    outcome = await engine.apply_rules([rule], facts(), mask=MaskPolicy.ALWAYS)
    assert outcome.traces[0].matched is False and outcome.warnings == []


def test_the_body_must_be_an_object() -> None:
    refused([], "body")


def test_unknown_fields_are_refused() -> None:
    refused(body(priority=5), "priority")


def test_actions_are_required() -> None:
    refused({"conditions": []}, "actions")


def test_at_least_one_action() -> None:
    refused({"actions": []}, "actions")


def test_a_long_scope_is_refused() -> None:
    refused(body(scope="s" * 256), "scope")


def test_a_long_description_is_refused() -> None:
    refused(body(description="d" * 256), "description")


def test_a_bad_uuid_is_refused() -> None:
    refused(body(uuid="x"), "uuid")


def test_an_unknown_condition_is_refused() -> None:
    refused(body({"op": "one-of", "field": "x", "value": []}), "conditions[0].op")


def test_a_condition_must_be_an_object() -> None:
    refused(body("eq"), "conditions[0]")


def test_a_condition_needs_a_field() -> None:
    refused(body({"op": "eq", "value": 1}), "conditions[0].field")


def test_a_condition_needs_its_value() -> None:
    refused(body({"op": "eq", "field": "x"}), "conditions[0].value")


def test_is_empty_takes_no_value_and_refuses_one() -> None:
    refused(body({"op": "is-empty", "field": "x", "value": 1}), "conditions[0].value")


def test_last_is_not_an_inspector_multiple() -> None:
    refused(body({"op": "eq", "field": "x", "value": 1, "multiple": "last"}),
            "conditions[0].multiple")


def test_invert_must_be_a_boolean() -> None:
    refused(body({"op": "eq", "field": "x", "value": 1, "invert": "yes"}),
            "conditions[0].invert")


@pytest.mark.parametrize("field", ["inventory.interfaces[1:2].mac_address", "a..b", "",
                                   "data://a[?(@.x)]", "*"])
def test_only_plain_paths_are_supported(field: str) -> None:
    refused(body({"op": "eq", "field": field, "value": 1}), "conditions[0].field")


def test_an_invalid_subnet_is_refused() -> None:
    refused(body({"op": "in-net", "field": "x", "value": "nonsense"}), "conditions[0].value")


def test_an_invalid_regex_is_refused() -> None:
    refused(body({"op": "matches", "field": "x", "value": "("}), "conditions[0].value")


def test_an_unknown_action_is_refused() -> None:
    refused({"actions": [{"action": "example"}]}, "actions[0].action")


def test_an_action_must_be_an_object() -> None:
    refused({"actions": ["fail"]}, "actions[0]")


def test_an_action_missing_a_parameter_is_refused() -> None:
    refused({"actions": [{"action": "fail"}]}, "actions[0].message")


def test_an_action_with_an_unknown_parameter_is_refused() -> None:
    refused({"actions": [{**SET, "unique": True}]}, "actions[0].unique")


def test_an_action_path_the_api_refuses_is_refused() -> None:
    refused({"actions": [{**SET, "path": "/provision_state"}]}, "actions[0].path")
