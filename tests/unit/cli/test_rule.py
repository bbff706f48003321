"""Unit tests of `ironsight rule ...`: files and options -> requests to each dialect's API,
answers -> output. discoverd is an `httpx.MockTransport` backed by a `FakeService` (tests/unit/
fakes.py) that records requests; tests/functional/compat/test_rule_cli.py runs the real one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import httpx
import pytest
from click.testing import CliRunner, Result

from ironsight.cli import rule
from ironsight.cli.options import Runtime

from ..fakes import FakeService, fake_discoverd, inspector_error

UUID1 = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
UUID2 = "5f8d1c2e-8a1b-4b34-9a1d-2f3c4d5e6f70"
NODE = "9e3c1f0a-7b6d-4c5e-8f9a-0b1c2d3e4f50"
IRONIC_RULE = {"description": "GPU nodes", "priority": 50,
               "conditions": [{"op": "gt", "args": {"values": [
                   "{inventory[memory][physical_mb]}", 16000]}}],
               "actions": [{"op": "set-attribute",
                            "args": {"path": "/resource_class", "value": "gpu"}}]}
INSPECTOR_RULE = {"description": "big memory",
                  "conditions": [{"op": "ge", "field": "memory_mb", "value": 16000}],
                  "actions": [{"action": "add-trait", "name": "CUSTOM_BIG"}]}
YAML_RULES = """\
- description: GPU nodes
  priority: 50
  actions:
    - op: add-trait
      args: {name: CUSTOM_GPU}
- description: big memory
  conditions:
    - {op: ge, field: memory_mb, value: 16000}
  actions:
    - {action: add-trait, name: CUSTOM_BIG}
"""


@pytest.fixture
def api() -> FakeService:
    return fake_discoverd()


@pytest.fixture
def run(api: FakeService, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.delenv("IRONSIGHT_DISCOVERD_URL", raising=False)
    group = click.Group("ironsight")
    rule.register(group)

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(group, ["rule", *args], obj=Runtime(transport=api.transport),
                                  input=input)

    return invoke


def created(body: dict[str, Any], uuid: str = UUID1) -> httpx.Response:
    return httpx.Response(201, json={**body, "uuid": uuid, "links": []})


# --- create --------------------------------------------------------------------------------------


def test_create_from_a_json_file_posts_an_ironic_rule(run, api, tmp_path: Path) -> None:
    path = tmp_path / "rule.json"
    path.write_text(json.dumps(IRONIC_RULE))
    api.add("POST", "/v1/inspection_rules", created(IRONIC_RULE))
    result = run("create", str(path), "-f", "json")
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/inspection_rules") == IRONIC_RULE
    assert json.loads(result.stdout)[0]["dialect"] == "ironic"


def test_create_from_a_yaml_list_sends_each_rule_to_its_dialects_api(run, api,
                                                                    tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(YAML_RULES)
    api.add("POST", "/v1/inspection_rules", created({}, UUID1))
    api.add("POST", "/v1/rules", created({}, UUID2))
    result = run("create", str(path))
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/inspection_rules")["description"] == "GPU nodes"
    assert api.body("POST", "/v1/rules")["actions"] == [
        {"action": "add-trait", "name": "CUSTOM_BIG"}]


def test_create_reads_stdin(run, api) -> None:
    api.add("POST", "/v1/rules", created(INSPECTOR_RULE))
    result = run("create", "-", input=json.dumps(INSPECTOR_RULE))
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/rules") == INSPECTOR_RULE


def test_create_from_options_as_the_baremetal_cli_takes_them(run, api) -> None:
    api.add("POST", "/v1/inspection_rules", created({}))
    result = run("create", "--actions", json.dumps(IRONIC_RULE["actions"]),
                 "--priority", "7", "--sensitive", "--description", "d")
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/inspection_rules") == {
        "actions": IRONIC_RULE["actions"], "priority": 7, "sensitive": True,
        "description": "d"}


def test_create_takes_actions_from_a_file(run, api, tmp_path: Path) -> None:
    path = tmp_path / "actions.yaml"
    path.write_text("- op: add-trait\n  args: {name: CUSTOM_X}\n")
    api.add("POST", "/v1/inspection_rules", created({}))
    assert run("create", "--actions", str(path)).exit_code == 0
    assert api.body("POST", "/v1/inspection_rules")["actions"] == [
        {"op": "add-trait", "args": {"name": "CUSTOM_X"}}]


def test_create_shows_the_warnings_discoverd_gives(run, api) -> None:
    api.add("POST", "/v1/inspection_rules",
            created({"warnings": ["inventory[gpu] is in no stored inventory"]}))
    result = run("create", "--actions", "[]")
    assert "Warning: rule " + UUID1 + ": inventory[gpu] is in no stored inventory" in \
        result.stderr


def test_a_file_with_options_is_a_usage_error(run, tmp_path: Path) -> None:
    path = tmp_path / "rule.json"
    path.write_text(json.dumps(IRONIC_RULE))
    result = run("create", str(path), "--priority", "3")
    assert result.exit_code == 2
    assert "cannot be combined" in result.stderr


def test_a_file_that_is_not_rules_is_refused_naming_it(run, tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("- just a string\n")
    result = run("create", str(path))
    assert result.exit_code == 2
    assert f"{path}: rule 0: a rule is a mapping" in result.stderr


def test_a_refused_rule_does_not_stop_the_others(run, api, tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(YAML_RULES)
    api.add("POST", "/v1/inspection_rules",
            inspector_error(400, "Invalid input for field 'actions.0.op'"))
    api.add("POST", "/v1/rules", created({}, UUID2))
    result = run("create", str(path))
    assert result.exit_code == 1
    assert "rule 0 ('GPU nodes'): Invalid input for field 'actions.0.op'" in result.stderr
    assert UUID2 in result.stdout


# --- list, show, delete --------------------------------------------------------------------------


def test_list_shows_both_dialects(run, api) -> None:
    api.json("GET", "/v1/inspection_rules", {"inspection_rules": [
        {"uuid": UUID1, "priority": 50, "phase": "main", "description": "a"}]})
    api.json("GET", "/v1/rules", {"rules": [{"uuid": UUID2, "description": "b",
                                             "scope": None}]})
    result = run("list", "-f", "json")
    assert result.exit_code == 0, result.output
    assert [(r["uuid"], r["dialect"]) for r in json.loads(result.stdout)] == [
        (UUID1, "ironic"), (UUID2, "inspector")]


def test_list_follows_ironic_pages(run, api) -> None:
    api.json("GET", "/v1/inspection_rules",
             {"inspection_rules": [{"uuid": UUID1}],
              "next": f"http://x/v1/inspection_rules?limit=1&marker={UUID1}"},
             {"inspection_rules": [{"uuid": UUID2}]})
    result = run("list", "--dialect", "ironic", "-f", "json")
    assert [r["uuid"] for r in json.loads(result.stdout)] == [UUID1, UUID2]
    assert api.sent("GET")[1].url.params["marker"] == UUID1


def test_list_long_asks_for_details(run, api) -> None:
    api.json("GET", "/v1/inspection_rules", {"inspection_rules": []})
    assert run("list", "--dialect", "ironic", "--long").exit_code == 0
    assert api.sent("GET")[0].url.params["detail"] == "true"


def test_show_finds_an_inspector_rule(run, api) -> None:
    api.add("GET", f"/v1/inspection_rules/{UUID2}", inspector_error(404, "not found"))
    api.json("GET", f"/v1/rules/{UUID2}", {**INSPECTOR_RULE, "uuid": UUID2})
    result = run("show", UUID2, "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dialect"] == "inspector"


def test_show_of_an_unknown_rule_fails(run) -> None:
    result = run("show", UUID1)
    assert result.exit_code == 1
    assert "No route GET /v1/rules/" in result.stderr


def test_delete_deletes_in_the_rules_own_dialect(run, api) -> None:
    api.add("GET", f"/v1/inspection_rules/{UUID2}", inspector_error(404, "not found"))
    api.json("GET", f"/v1/rules/{UUID2}", {"uuid": UUID2})
    api.add("DELETE", f"/v1/rules/{UUID2}", httpx.Response(204))
    result = run("delete", UUID2)
    assert result.exit_code == 0, result.output
    assert f"Deleted rule {UUID2}" in result.stderr


def test_delete_all_empties_both_dialects(run, api) -> None:
    api.add("DELETE", "/v1/inspection_rules", httpx.Response(204))
    api.add("DELETE", "/v1/rules", httpx.Response(204))
    assert run("delete", "--all").exit_code == 0
    assert [r.url.path for r in api.sent("DELETE")] == ["/v1/inspection_rules", "/v1/rules"]


def test_delete_wants_uuids_or_all(run) -> None:
    assert run("delete").exit_code == 2
    assert run("delete", UUID1, "--all").exit_code == 2


# --- test (the dry run) --------------------------------------------------------------------------

DRY_RUN = {"node": NODE, "rule": UUID1, "matched": True,
           "conditions": [{"op": "gt", "args": {"values": [32768, 16000]}, "result": True}],
           "actions": [{"op": "set-attribute",
                        "args": {"path": "/resource_class", "value": "gpu"},
                        "changes": [{"op": "replace", "path": "/node/resource_class",
                                     "value": "gpu"}]}],
           "failure": None, "warnings": []}


def test_test_asks_for_a_dry_run_of_a_stored_rule(run, api) -> None:
    api.json("POST", "/v1/inspection_rules/dry_run", DRY_RUN)
    result = run("test", UUID1, "node-1")
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/inspection_rules/dry_run") == {"node": "node-1",
                                                                "rule": UUID1}


def test_test_prints_which_conditions_held_and_what_would_change(run, api) -> None:
    api.json("POST", "/v1/inspection_rules/dry_run", DRY_RUN)
    lines = run("test", UUID1, NODE).stdout.splitlines()
    assert lines == [
        f"Rule {UUID1} matches node {NODE}.",
        "Conditions:",
        "  [yes] gt values=[32768, 16000]",
        "Actions (what each would change):",
        '  set-attribute path="/resource_class" value="gpu"',
        '      replace /node/resource_class = "gpu"']


def test_test_says_when_no_action_would_run(run, api) -> None:
    api.json("POST", "/v1/inspection_rules/dry_run", {
        **DRY_RUN, "matched": False,
        "conditions": [{"op": "gt", "args": {"values": [8192, 16000]}, "result": False}]})
    out = run("test", UUID1, NODE).stdout
    assert "does not match" in out and "[ NO] gt" in out and "none would run" in out


def test_test_sends_a_rule_from_a_file(run, api, tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text("actions:\n  - {op: add-trait, args: {name: CUSTOM_X}}\n")
    api.json("POST", "/v1/inspection_rules/dry_run", {**DRY_RUN, "rule": None})
    assert run("test", str(path), NODE).exit_code == 0
    assert api.body("POST", "/v1/inspection_rules/dry_run")["rule"] == {
        "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}]}


def test_test_with_json_output_prints_the_api_answer(run, api) -> None:
    api.json("POST", "/v1/inspection_rules/dry_run", DRY_RUN)
    assert json.loads(run("test", UUID1, NODE, "-f", "json").stdout) == DRY_RUN


def test_test_of_a_node_without_data_fails_with_discoverds_message(run, api) -> None:
    api.add("POST", "/v1/inspection_rules/dry_run",
            inspector_error(404, f"No stored introspection data for node {NODE}"))
    result = run("test", UUID1, NODE)
    assert result.exit_code == 1
    assert "No stored introspection data" in result.stderr


def test_test_shows_a_fail_actions_message_and_the_warnings(run, api) -> None:
    api.json("POST", "/v1/inspection_rules/dry_run", {
        **DRY_RUN, "actions": [{"op": "fail", "args": {"msg": "no GPU"}, "changes": []}],
        "failure": "Rule 'GPU nodes' failed: no GPU",
        "warnings": ["{inventory[gpu]} could not be resolved"]})
    out = run("test", UUID1, NODE).stdout.splitlines()
    assert out[-4:] == ['  fail msg="no GPU"', "      (no change)",
                        "Failure: Rule 'GPU nodes' failed: no GPU",
                        "Warning: {inventory[gpu]} could not be resolved"]
