"""The creation-time warning for inventory paths no stored inventory has."""

from __future__ import annotations

from ironsight.discoverd.rules.model import Action, Condition, Rule
from ironsight.discoverd.rules.references import inventory_paths, missing_paths

RULE = Rule(uuid="u", conditions=(
    Condition("gt", args={"values": ["{inventory[memory][physical_mb]}", 16000]}),
    Condition("eq", args={"values": ["{inventory[memory][physical_gb]}", 1]})),
    actions=(Action("set-attribute", {"path": "/extra/x",
                                      "value": "{inventory[interfaces][0][mac_address]} "
                                               "{plugin_data[foo]}"}),))


def test_the_paths_a_rule_interpolates_are_found_in_order() -> None:
    assert inventory_paths(RULE) == [("memory", "physical_mb"), ("memory", "physical_gb"),
                                     ("interfaces", "0", "mac_address")]


def test_a_path_no_inventory_has_is_a_warning() -> None:
    inventories = [{"memory": {"physical_mb": 1}, "interfaces": []},
                   {"memory": {}, "interfaces": [{"mac_address": "m"}]}]
    warnings = missing_paths(RULE, inventories)
    assert len(warnings) == 1 and "memory.physical_gb" in warnings[0]
    assert "2 checked" in warnings[0]


def test_without_stored_inventories_there_is_nothing_to_warn_about() -> None:
    assert missing_paths(RULE, []) == []
    assert missing_paths(RULE, [None]) == []
