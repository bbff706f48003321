"""`boot-mode`: the boot_mode capability, merged into the node's capabilities."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.boot_mode import BootMode
from ironsight.discoverd.plugins.capabilities import parse

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
