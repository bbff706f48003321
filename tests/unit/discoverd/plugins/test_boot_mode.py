"""`boot-mode`: the boot_mode and secure_boot capabilities, merged into the node's
capabilities."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.discoverd.plugins.boot_mode import BootMode
from ironsight.discoverd.plugins.capabilities import Capabilities, parse

from ..helpers import agent_report, context


def caps(report: dict[str, Any], existing: str | None = None,
         **processing: str) -> dict[str, str] | None:
    node = {"properties": {"capabilities": existing} if existing is not None else {}}
    ctx = context(report, node=node, processing=processing)
    BootMode(ctx.conf).before_update(ctx)
    written = ctx.changes.properties.get("capabilities")
    return parse(written) if written is not None else None


def test_boot_mode_becomes_a_capability() -> None:
    assert caps(agent_report(boot_mode="uefi")) == {"boot_mode": "uefi"}


def test_other_capabilities_of_the_node_are_kept() -> None:
    assert caps(agent_report(boot_mode="bios"), "node:gpu") == {"node": "gpu",
                                                                 "boot_mode": "bios"}


def test_a_boot_mode_the_node_has_is_kept() -> None:
    assert caps(agent_report(boot_mode="uefi"), "boot_mode:bios") is None


def test_overwrite_existing_replaces_the_boot_mode() -> None:
    assert caps(agent_report(boot_mode="uefi"), "boot_mode:bios",
                overwrite_existing="true") == {"boot_mode": "uefi"}


def test_no_boot_mode_in_the_report_changes_nothing() -> None:
    assert caps(agent_report(boot_mode=None)) is None


def secure(value: Any, boot_mode: str | None = "uefi") -> dict[str, Any]:
    report = agent_report(boot_mode=boot_mode)
    report["inventory"]["boot"]["secure_boot"] = value
    return report


@pytest.mark.parametrize(("value", "capability"), [(True, "true"), (False, "false")])
def test_secure_boot_becomes_ironics_capability(value: bool, capability: str) -> None:
    assert caps(secure(value)) == {"boot_mode": "uefi", "secure_boot": capability}


@pytest.mark.parametrize("value", [None, "true", 1])
def test_an_unknown_secure_boot_state_sets_nothing(value: Any) -> None:
    assert caps(secure(value), "secure_boot:true") == {"boot_mode": "uefi",
                                                        "secure_boot": "true"}
    assert caps(secure(value)) == {"boot_mode": "uefi"}


def test_a_secure_boot_state_the_node_has_is_kept_unless_overwrite_existing() -> None:
    assert caps(secure(False), "secure_boot:true,boot_mode:uefi") is None
    assert caps(secure(False), "secure_boot:true,boot_mode:uefi",
                overwrite_existing="true") == {"secure_boot": "false", "boot_mode": "uefi"}


def test_secure_boot_is_set_even_without_a_boot_mode() -> None:
    assert caps(secure(True, boot_mode=None)) == {"secure_boot": "true"}


def test_it_merges_with_the_capabilities_hook_of_the_same_chain() -> None:
    ctx = context(secure(True), node={"properties": {"capabilities": "node:gpu"}})
    Capabilities(ctx.conf).before_update(ctx)
    BootMode(ctx.conf).before_update(ctx)
    assert parse(ctx.changes.properties["capabilities"]) == {
        "node": "gpu", "boot_mode": "uefi", "secure_boot": "true"}
