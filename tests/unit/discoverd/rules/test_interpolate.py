"""Interpolation of `{node.x}`, `{inventory[...]}`, `{plugin_data[...]}`, `{item}`."""

from __future__ import annotations

from ironsight.discoverd.rules.interpolate import Scope, interpolate, references

from .builders import inventory, node


def scope(**plugin_data: object) -> Scope:
    return Scope(node(), inventory(), plugin_data)


def test_node_fields_read_as_attributes() -> None:
    assert interpolate("{node.driver_info[ipmi_address]}", scope(), []) == "192.0.2.1"


def test_a_single_reference_keeps_the_value_type() -> None:
    assert interpolate("{inventory[memory][physical_mb]}", scope(), []) == 8192


def test_references_within_text_give_text() -> None:
    assert interpolate("{inventory[cpu][count]} x {inventory[cpu][architecture]}",
                       scope(), []) == "4 x x86_64"


def test_list_indexes_in_references() -> None:
    assert interpolate("{inventory[interfaces][1][name]}", scope(), []) == "eth1"


def test_plugin_data_references() -> None:
    assert interpolate("{plugin_data[auto_discovered]}", scope(auto_discovered=True),
                       []) is True


def test_item_is_bound_in_loops() -> None:
    assert interpolate("{item[name]}", scope().with_item({"name": "eth0"}), []) == "eth0"


def test_objects_and_lists_are_interpolated_recursively_keys_too() -> None:
    value = {"{inventory[cpu][architecture]}": ["{node.name}", 1, {"x": "{node.driver}"}]}
    assert interpolate(value, scope(), []) == {"x86_64": ["compute-0", 1, {"x": "ipmi"}]}


def test_a_bad_reference_leaves_the_literal_and_a_warning() -> None:
    warnings: list[str] = []
    assert interpolate("{inventory[nothing]}", scope(), warnings) == "{inventory[nothing]}"
    assert len(warnings) == 1
    assert "{inventory[nothing]}" in warnings[0] and "KeyError" in warnings[0]


def test_a_missing_node_attribute_is_a_warning_too() -> None:
    # Upstream's api-ref sample: auto_discovered is plugin data, not a node field.
    warnings: list[str] = []
    assert interpolate("{node.auto_discovered}", scope(), warnings) == "{node.auto_discovered}"
    assert "auto_discovered" in warnings[0]


def test_missing_as_none_gives_none_without_warning() -> None:
    warnings: list[str] = []
    assert interpolate("{plugin_data[nothing]}", scope(), warnings,
                       missing_as_none=True) is None
    assert warnings == []


def test_strings_without_braces_are_unchanged() -> None:
    assert interpolate("plain", scope(), []) == "plain"


def test_inspector_rules_read_data_with_the_inventory_inside() -> None:
    inspector = Scope(node(), inventory(), {"memory_mb": 8192}, inspector=True)
    assert interpolate("{data[inventory][cpu][count]}/{data[memory_mb]}", inspector,
                       []) == "4/8192"


def test_references_lists_each_path() -> None:
    assert references({"a": ["{inventory[memory][physical_mb]}", "{node.properties[x]}"],
                       "b": "no reference"}) == [("inventory", "memory", "physical_mb"),
                                                 ("node", "properties", "x")]


def test_loops_format_references_an_item_carries() -> None:
    looping = scope().with_item({"value": "{inventory[bmc_address]}"})
    assert interpolate("{item[value]}", looping, []) == "192.0.2.1"


def test_loops_format_references_built_from_the_item() -> None:
    looping = Scope(node(), inventory(), {"parsed_lldp": {"eth0": {"switch_port_id": "Te1/1"}}},
                    item="eth0")
    assert interpolate("{{plugin_data[parsed_lldp][{item}][switch_port_id]}}", looping,
                       []) == "Te1/1"


def test_outside_loops_strings_are_formatted_once() -> None:
    assert interpolate("{{inventory[bmc_address]}}", scope(), []) == "{inventory[bmc_address]}"


def test_the_same_string_reads_each_scopes_own_values() -> None:
    small, large = inventory(), inventory()
    large["memory"]["physical_mb"] = 65536
    text = "{inventory[memory][physical_mb]}"
    assert [interpolate(text, Scope(node(), inv, {}), []) for inv in (small, large)] == [
        8192, 65536]


def test_a_malformed_reference_to_something_absent_reads_as_absent() -> None:
    assert interpolate("{nothing[a]b}", scope(), [], missing_as_none=True) is None


def test_a_malformed_reference_is_a_warning() -> None:
    warnings: list[str] = []
    assert interpolate("{inventory[cpu]b}", scope(), warnings) == "{inventory[cpu]b}"
    assert "ValueError" in warnings[0]


def test_a_malformed_reference_reads_what_it_can_before_its_error() -> None:
    # As str.format: the key that is absent is the first thing found wrong.
    warnings: list[str] = []
    assert interpolate("{inventory[nothing]b}", scope(), warnings) == "{inventory[nothing]b}"
    assert "KeyError: 'nothing'" in warnings[0]


def test_a_positional_reference_is_a_warning() -> None:
    warnings: list[str] = []
    assert interpolate("{0}", scope(), warnings) == "{0}"
    assert "IndexError" in warnings[0]
