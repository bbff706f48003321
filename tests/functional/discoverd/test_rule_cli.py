"""`ironsight rule ...` against a real `ironsight serve`'s discoverd: rules of both dialects
from the files the upstream clients take, and the dry run (`rule test`) on a fake-hardware node
whose introspection data is stored (its ramdisk report is posted by the test)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from ironsight.cli.main import _register, cli

from ..conftest import ServiceProcess
from .test_inspector_client import Machine

_register()

RULES_YAML = """\
- description: GPU-class memory
  priority: 60
  conditions:
    - op: gt
      args: {values: ["{inventory[memory][physical_mb]}", 16000]}
  actions:
    - op: set-attribute
      args: {path: /resource_class, value: large}
- description: big memory (inspector dialect)
  conditions:
    - {op: ge, field: memory_mb, value: 16000}
  actions:
    - {action: add-trait, name: CUSTOM_BIG}
"""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("rule-cli"),
                         extra_conf="[introspection]\nironic_retry_interval = 0.05\n"
                                    "allow_tokenless_reports = true\n")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def run(service: ServiceProcess) -> Iterator[Any]:
    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, ["rule", "--url", service.di_url, *args])

    yield invoke
    invoke("delete", "--all")


@pytest.fixture(scope="module")
def inspected(service: ServiceProcess) -> str:
    """A node with stored introspection data (65536 MiB of memory)."""
    with httpx.Client(base_url=service.url, timeout=30,
                      headers={"X-OpenStack-Ironic-API-Version": "latest"}) as bm, \
            httpx.Client(base_url=service.di_url, timeout=30) as di:
        machine = Machine(bm)
        assert di.post(f"/v1/introspection/{machine.uuid}").status_code == 202
        assert di.post("/v1/continue", json=machine.report()).status_code == 200
        deadline = time.monotonic() + 30
        while not di.get(f"/v1/introspection/{machine.uuid}").json()["finished"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        return machine.uuid


def created(run: Any, tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES_YAML)
    result = run("create", str(path), "-f", "json")
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout))


def test_create_sends_each_rule_of_a_file_to_its_dialect(run: Any, tmp_path: Path) -> None:
    rules = created(run, tmp_path)
    assert [(r["dialect"], r["description"]) for r in rules] == [
        ("ironic", "GPU-class memory"), ("inspector", "big memory (inspector dialect)")]


def test_list_shows_both_dialects(run: Any, tmp_path: Path) -> None:
    rules = created(run, tmp_path)
    listed = json.loads(run("list", "-f", "json").stdout)
    assert {(r["uuid"], r["dialect"]) for r in listed} == {
        (r["uuid"], r["dialect"]) for r in rules}


def test_show_finds_a_rule_in_either_dialect(run: Any, tmp_path: Path) -> None:
    inspector_rule = created(run, tmp_path)[1]
    shown = json.loads(run("show", inspector_rule["uuid"], "-f", "json").stdout)
    assert shown["dialect"] == "inspector"
    assert shown["actions"] == [{"action": "add-trait", "name": "CUSTOM_BIG"}]


def test_delete_deletes_a_rule_in_either_dialect(run: Any, tmp_path: Path) -> None:
    rules = created(run, tmp_path)
    result = run("delete", *(r["uuid"] for r in rules))
    assert result.exit_code == 0, result.output
    assert json.loads(run("list", "-f", "json").stdout) == []


def test_test_shows_what_a_stored_rule_would_change(run: Any, tmp_path: Path,
                                                    inspected: str) -> None:
    ironic_rule = created(run, tmp_path)[0]
    result = run("test", ironic_rule["uuid"], inspected)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"Rule {ironic_rule['uuid']} matches node {inspected}."
    assert lines[2].startswith("  [yes] gt ") and "values=[65536, 16000]" in lines[2]
    assert any("/resource_class" in line and '"large"' in line for line in lines[4:]), \
        result.stdout


def test_test_of_a_rule_in_a_file_changes_nothing(run: Any, tmp_path: Path,
                                                  inspected: str,
                                                  service: ServiceProcess) -> None:
    path = tmp_path / "rule.json"
    path.write_text(json.dumps({"conditions": [{"op": "lt", "args": {"values": [
        "{inventory[memory][physical_mb]}", 16000]}}],
        "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_SMALL"}}]}))
    result = run("test", str(path), inspected)
    assert result.exit_code == 0, result.output
    assert "does not match" in result.stdout and "[ NO] lt" in result.stdout
    node = httpx.get(f"{service.url}/v1/nodes/{inspected}",
                     headers={"X-OpenStack-Ironic-API-Version": "latest"}).json()
    assert "CUSTOM_SMALL" not in node["traits"]
