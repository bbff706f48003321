"""What python-ironicclient's `baremetal inspection rule` commands send, made to mean what the
user typed (ironic-today.md §1.4 item 4); well-formed requests pass unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.baremetal.api import inspection_rules_compat as compat

ACTIONS = [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}]


def test_a_priority_given_as_digits_is_an_integer() -> None:
    assert compat.create_body({"actions": ACTIONS, "priority": "100"})["priority"] == 100


@pytest.mark.parametrize(("given", "meant"), [("true", True), ("False", False), ("1", True)])
def test_sensitive_given_as_a_string_is_a_boolean(given: str, meant: bool) -> None:
    assert compat.create_body({"actions": ACTIONS, "sensitive": given})["sensitive"] is meant


def test_a_sensitive_string_that_is_no_boolean_is_left_for_validation() -> None:
    assert compat.create_body({"actions": ACTIONS, "sensitive": "maybe"})["sensitive"] == "maybe"


def test_a_priority_that_is_no_number_is_left_for_validation() -> None:
    assert compat.create_body({"actions": ACTIONS, "priority": "high"})["priority"] == "high"


def test_null_conditions_are_no_conditions() -> None:
    assert compat.create_body({"actions": ACTIONS, "conditions": None}) == {"actions": ACTIONS}


def test_a_well_formed_body_is_unchanged() -> None:
    body: dict[str, Any] = {"actions": ACTIONS, "conditions": [], "priority": 5,
                            "sensitive": False}
    assert compat.create_body(body) == body


def test_the_clients_unset_paths_name_the_lists_highest_index_first() -> None:
    patch = [{"op": "remove", "path": "/action/0"}, {"op": "remove", "path": "/action/2"},
             {"op": "remove", "path": "/condition/1"}]
    assert compat.patch_body(patch) == [
        {"op": "remove", "path": "/actions/2"}, {"op": "remove", "path": "/actions/0"},
        {"op": "remove", "path": "/conditions/1"}]


def test_an_unset_path_that_is_no_index_is_left_for_validation() -> None:
    patch = [{"op": "remove", "path": "/action/op"}]
    assert compat.patch_body(patch) == patch


def test_a_well_formed_patch_keeps_json_patch_order() -> None:
    patch = [{"op": "remove", "path": "/actions/0"}, {"op": "remove", "path": "/actions/1"},
             {"op": "add", "path": "/priority", "value": 3}]
    assert compat.patch_body(patch) == patch


def test_delete_all_is_the_collections_delete() -> None:
    assert compat.sub_path("DELETE", "all") == ""
    assert compat.sub_path("GET", "all") == "all"
