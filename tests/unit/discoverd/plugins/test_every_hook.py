"""Every processing hook ironsight registers is documented in docs/hooks.md and has unit
tests of its own (tests/unit/<its module's path>, as the test tree mirrors src/)."""

from __future__ import annotations

import ast
import re
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from ironsight.common import plugins

ROOT = Path(__file__).resolve().parents[4]
OURS = [ep for ep in entry_points(group=plugins.PROCESSING_HOOKS)
        if ep.dist is not None and ep.dist.name == "ironsight"]


def unit_tests_of(module: str) -> Path:
    """ironsight.discoverd.plugins.root_disk -> tests/unit/discoverd/plugins/test_root_disk.py"""
    *package, name = module.split(".")[1:]
    return ROOT.joinpath("tests", "unit", *package, f"test_{name}.py")


def test_ironsight_registers_its_hooks() -> None:
    assert {ep.name for ep in OURS} >= {"ramdisk_error", "validate_interfaces",
                                        "root_disk_selection", "scheduler", "capabilities",
                                        "ports"}


@pytest.mark.parametrize("hook", OURS, ids=lambda ep: ep.name)
def test_hook_is_documented(hook: EntryPoint) -> None:
    doc = (ROOT / "docs" / "hooks.md").read_text()
    section = re.search(rf"^### `{re.escape(hook.name)}`\n\n(.+?)(?=^#)", doc, re.M | re.S)
    assert section, f"docs/hooks.md has no section '### `{hook.name}`'"
    assert len(section.group(1).split()) >= 10, f"the section on {hook.name} says too little"


@pytest.mark.parametrize("hook", OURS, ids=lambda ep: ep.name)
def test_hook_has_unit_tests(hook: EntryPoint) -> None:
    path = unit_tests_of(hook.module)
    assert path.is_file(), f"{hook.name}: no unit tests in {path.relative_to(ROOT)}"
    tests = [node.name for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
             and node.name.startswith("test_")]
    assert len(tests) >= 2, f"{hook.name}: {path.relative_to(ROOT)} has {len(tests)} test(s)"
