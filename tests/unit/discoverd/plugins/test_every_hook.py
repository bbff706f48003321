"""Every processing hook ironsight registers is documented in docs/hooks.md and has unit
tests of its own (tests/unit/<its module's path>, as the test tree mirrors src/). The hooks
are those pyproject.toml declares (see declared_hooks.py for why not the installed ones)."""

from __future__ import annotations

import ast
import re
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from ironsight.common import plugins

from ..declared_hooks import declared

ROOT = Path(__file__).resolve().parents[4]
OURS = declared()


def unit_tests_of(module: str) -> Path:
    """ironsight.discoverd.plugins.root_disk -> tests/unit/discoverd/plugins/test_root_disk.py"""
    *package, name = module.split(".")[1:]
    return ROOT.joinpath("tests", "unit", *package, f"test_{name}.py")


def test_ironsight_registers_its_hooks() -> None:
    assert {ep.name for ep in OURS} >= {"ramdisk_error", "validate_interfaces",
                                        "root_disk_selection", "scheduler", "capabilities",
                                        "ports"}


def test_ironsight_registers_ironics_hooks_by_ironics_names() -> None:
    assert {ep.name for ep in OURS} >= {
        "parse-lldp", "local-link-connection", "physical-network", "pci-devices",
        "accelerators", "cpu-capabilities", "boot-mode", "memory", "cpus", "architecture",
        "raid-device", "extra-hardware"}


def test_ironsight_registers_the_inspector_era_names_of_ironics_hooks() -> None:
    assert {ep.name for ep in OURS} >= {
        "lldp_basic", "local_link_connection", "physnet_cidr_map", "pci_devices",
        "accelerators", "extra_hardware", "raid_device"}


def test_installed_hooks_are_the_declared_ones_once_installed() -> None:
    """Each declared hook that the installed copy knows points at the same class (a stale
    install lacks new ones; it must not disagree on the others)."""
    installed = {ep.name: ep.value for ep in entry_points(group=plugins.PROCESSING_HOOKS)
                 if ep.dist is not None and ep.dist.name == "ironsight"}
    assert {ep.name: ep.value for ep in OURS if ep.name in installed} == installed


@pytest.mark.parametrize("hook", OURS, ids=lambda ep: ep.name)
def test_hook_loads_as_its_own_name(hook: EntryPoint) -> None:
    """The name a hook reports errors under is the name it is configured by."""
    assert hook.load().name == hook.name


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
