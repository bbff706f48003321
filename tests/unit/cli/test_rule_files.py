"""Reading rules as the upstream clients take them, and telling their dialect."""

from __future__ import annotations

from pathlib import Path

import pytest

from ironsight.cli.rule_files import RuleFileError, dialect_of, json_arg, load_rules


def test_a_single_rule_is_a_list_of_one(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"actions": []}')
    assert load_rules(str(path)) == [{"actions": []}]


def test_yaml_is_read_too(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("- actions: []\n- actions: []\n")
    assert load_rules(str(path)) == [{"actions": []}, {"actions": []}]


def test_an_empty_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("[]")
    with pytest.raises(RuleFileError, match="empty"):
        load_rules(str(path))


def test_a_missing_file_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match=r"nope\.json: cannot be read"):
        load_rules(str(tmp_path / "nope.json"))


def test_text_that_is_neither_json_nor_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("actions: [unclosed\n")
    with pytest.raises(RuleFileError, match="neither JSON nor YAML"):
        load_rules(str(path))


def test_a_json_argument_is_text_or_a_file(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[{"op": "log"}]')
    assert json_arg('[{"op": "log"}]', "--actions") == json_arg(str(path), "--actions")


@pytest.mark.parametrize("rule", [
    {"actions": [{"action": "fail", "message": "x"}]},
    {"conditions": [{"op": "eq", "field": "memory_mb", "value": 1}], "actions": []},
    {"scope": "rack1", "actions": []}])
def test_inspector_rules_are_told_by_field_action_or_scope(rule: dict[str, object]) -> None:
    assert dialect_of(rule) == "inspector"


def test_other_rules_are_ironics() -> None:
    assert dialect_of({"conditions": [{"op": "eq", "args": [1, 1]}],
                       "actions": [{"op": "fail", "args": {"msg": "x"}}]}) == "ironic"


def test_malformed_lists_do_not_break_the_guess() -> None:
    assert dialect_of({"conditions": 5, "actions": "x"}) == "ironic"
