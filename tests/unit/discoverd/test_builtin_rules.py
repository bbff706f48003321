"""Built-in rules: a YAML file of Ironic-dialect rules, read again when it changes; a bad
file keeps the previous rules at run time and stops the service at start."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest

from ironsight.common.exceptions import ConfigError, Invalid
from ironsight.discoverd.builtin_rules import BuiltInRules, default_uuid, parse_file

TWO_RULES = """
- description: big memory
  priority: -5
  conditions:
    - op: gt
      args: {values: ["{inventory[memory][physical_mb]}", 16000]}
  actions:
    - op: add-trait
      args: {name: CUSTOM_BIG}
- uuid: 5b2c1c43-0d0c-4b8a-9d0a-3f3f3e3e3e3e
  priority: 10000
  actions:
    - op: set-attribute
      args: {path: /resource_class, value: large}
"""


def write(path: Path, text: str) -> None:
    path.write_text(text)
    # a later write within the file system's time resolution must still look new
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9 * len(text)))


def test_rules_without_uuid_get_ironics_index_uuid() -> None:
    rules = parse_file(TWO_RULES)
    assert [r.uuid for r in rules] == [default_uuid(0), "5b2c1c43-0d0c-4b8a-9d0a-3f3f3e3e3e3e"]
    assert default_uuid(0) == "00000000-0000-0000-0000-000000000000"
    assert default_uuid(26) == "00000000-0000-0000-0000-00000000001a"


def test_built_in_rules_may_have_any_priority_and_are_marked_built_in() -> None:
    rules = parse_file(TWO_RULES)
    assert [r.priority for r in rules] == [-5, 10000]
    assert all(r.built_in for r in rules)


def test_an_empty_file_has_no_rules() -> None:
    assert parse_file("") == []


@pytest.mark.parametrize(("text", "why"), [
    ("- op: [", "not valid YAML"),
    ("op: add-trait", "a list of rules"),
    ("- just a string", "rule 0: expected a mapping"),
    ("- actions: [{op: no-such-op, args: {}}]", "rule 0"),
    ("- {uuid: 5b2c1c43-0d0c-4b8a-9d0a-3f3f3e3e3e3e, actions: [{op: add-trait, args: "
     "{name: A}}]}\n- {uuid: 5b2c1c43-0d0c-4b8a-9d0a-3f3f3e3e3e3e, actions: [{op: add-trait,"
     " args: {name: A}}]}", "rule 1: UUID"),
])
def test_a_bad_file_names_the_rule_at_fault(text: str, why: str) -> None:
    with pytest.raises(Invalid, match=why):
        parse_file(text)


def test_no_file_configured_means_no_rules() -> None:
    rules = BuiltInRules("")
    rules.load_at_start()
    assert rules() == []


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    write(path, TWO_RULES)
    rules = BuiltInRules(str(path))
    rules.load_at_start()
    assert len(rules()) == 2
    write(path, "- actions: [{op: add-trait, args: {name: CUSTOM_ONE}}]\n")
    assert [r.actions[0].args["name"] for r in rules()] == ["CUSTOM_ONE"]


def test_a_file_broken_at_run_time_keeps_the_previous_rules_and_says_why(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "rules.yaml"
    write(path, TWO_RULES)
    rules = BuiltInRules(str(path))
    rules.load_at_start()
    write(path, "- actions: [{op: no-such-op}]\n")
    with caplog.at_level(logging.ERROR):
        assert len(rules()) == 2
        assert len(rules()) == 2
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1  # once per change, not once per report
    assert "[inspection_rules] built_in_rules" in errors[0].getMessage()
    assert "previous 2 built-in rule(s) stay in use" in errors[0].getMessage()


def test_a_file_removed_at_run_time_keeps_the_previous_rules(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    write(path, TWO_RULES)
    rules = BuiltInRules(str(path))
    rules.load_at_start()
    path.unlink()
    assert len(rules()) == 2


@pytest.mark.parametrize("text", [None, "- {actions: []}\n"])
def test_a_missing_or_bad_file_at_start_is_a_config_error(tmp_path: Path,
                                                          text: str | None) -> None:
    path = tmp_path / "rules.yaml"
    if text is not None:
        write(path, text)
    with pytest.raises(ConfigError, match=r"\[inspection_rules\] built_in_rules: .*rules.yaml"):
        BuiltInRules(str(path)).load_at_start()


def test_the_example_file_of_docs_rules_md_is_valid() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "rules.md").read_text()
    [example] = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    [rule] = parse_file(example)
    assert rule.uuid == default_uuid(0) and rule.priority == -10
