"""`capabilities`: boot mode and CPU features, merged into the node's `capabilities`."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import ProcessingContext
from ironsight.discoverd.plugins.capabilities import Capabilities, merge, parse, render
from ironsight.discoverd.plugins.facts import CAPABILITIES, CapabilitySet

from ..helpers import agent_report, context


def run(report: dict[str, Any], existing: Any = None, **processing: str) -> ProcessingContext:
    node = {"properties": {"capabilities": existing} if existing is not None else {}}
    ctx = context(report, node=node, processing=processing)
    Capabilities(ctx.conf).before_update(ctx)
    return ctx


def caps(report: dict[str, Any], existing: Any = None, **processing: str) -> dict[str, str]:
    """The capabilities the hook writes, as a mapping ({} when it writes none)."""
    written = run(report, existing, **processing).changes.properties.get("capabilities")
    return parse(written) if written is not None else {}


def test_boot_mode_is_a_capability() -> None:
    assert caps(agent_report(boot_mode="uefi")) == {"boot_mode": "uefi"}


def with_secure_boot(value: object) -> dict[str, Any]:
    report = agent_report(boot_mode="uefi")
    report["inventory"]["boot"]["secure_boot"] = value
    return report


def test_secure_boot_is_a_capability_when_the_ramdisk_knows_it() -> None:
    assert caps(with_secure_boot(True)) == {"boot_mode": "uefi", "secure_boot": "true"}
    assert caps(with_secure_boot(False)) == {"boot_mode": "uefi", "secure_boot": "false"}


def test_an_unknown_secure_boot_state_is_no_capability() -> None:
    for value in (None, "true", 1):
        assert caps(with_secure_boot(value)) == {"boot_mode": "uefi"}


def test_boot_mode_capability_can_be_turned_off() -> None:
    assert caps(agent_report(boot_mode="uefi"), boot_mode_capability="false") == {}


def test_cpu_flags_become_capabilities_by_the_default_map() -> None:
    report = agent_report(boot_mode=None, flags=("fpu", "vmx", "aes", "pdpe1gb"))
    assert caps(report) == {"cpu_vt": "true", "cpu_aes": "true", "cpu_hugepages_1g": "true"}


def test_cpu_flag_map_is_configurable() -> None:
    report = agent_report(boot_mode=None, flags=("avx2", "vmx"))
    assert caps(report, cpu_flags="avx2:cpu_avx2") == {"cpu_avx2": "true"}


def test_existing_capabilities_are_kept_and_new_ones_appended() -> None:
    ctx = run(agent_report(boot_mode="uefi", flags=("vmx",)), "profile:compute,boot_mode:bios")
    assert ctx.changes.properties["capabilities"] == "profile:compute,boot_mode:bios,cpu_vt:true"


def test_overwrite_existing_replaces_discovered_keys_only() -> None:
    found = caps(agent_report(boot_mode="uefi"), "profile:compute,boot_mode:bios",
                 overwrite_existing="true")
    assert found == {"profile": "compute", "boot_mode": "uefi"}


def test_existing_capabilities_given_as_an_object_are_merged_too() -> None:
    found = caps(agent_report(boot_mode="uefi"), {"profile": "compute"})
    assert found == {"profile": "compute", "boot_mode": "uefi"}


def test_nothing_changes_when_the_node_has_them_already() -> None:
    ctx = run(agent_report(boot_mode="uefi"), "boot_mode:uefi")
    assert ctx.changes.properties == {}


def test_nothing_found_changes_nothing_and_stores_nothing() -> None:
    ctx = run(agent_report(boot_mode=None), "profile:compute")
    assert ctx.changes.properties == {}
    assert ctx.get(CAPABILITIES) == CapabilitySet({})
    assert "capabilities" not in ctx.processed_data()


def test_processed_data_shows_what_was_found_before_merging() -> None:
    ctx = run(agent_report(boot_mode="uefi", flags=("aes",)), "boot_mode:bios")
    assert ctx.processed_data()["capabilities"] == {"boot_mode": "uefi", "cpu_aes": "true"}


def test_a_capability_string_is_read_skipping_items_without_a_key_or_value() -> None:
    assert parse(" a:1, b : 2 ,junk,:x") == {"a": "1", "b": "2"}


def test_capabilities_are_written_as_a_comma_separated_string() -> None:
    assert render({"a": "1", "b": "2"}) == "a:1,b:2"


def test_capability_hooks_of_one_chain_merge_into_one_value() -> None:
    ctx = context(agent_report(boot_mode="uefi"), node={"properties": {"capabilities": "a:b"}})
    merge(ctx, {"boot_mode": "uefi"})
    merge(ctx, {"cpu_vt": "true"})
    merge(ctx, {"gpu_t4": "2"})
    assert parse(ctx.changes.properties["capabilities"]) == {
        "a": "b", "boot_mode": "uefi", "cpu_vt": "true", "gpu_t4": "2"}


def test_a_later_capability_hook_keeps_the_nodes_own_keys() -> None:
    ctx = context(agent_report(), node={"properties": {"capabilities": "cpu_vt:false"}})
    merge(ctx, {"boot_mode": "bios"})
    merge(ctx, {"cpu_vt": "true"})
    assert parse(ctx.changes.properties["capabilities"]) == {"cpu_vt": "false",
                                                             "boot_mode": "bios"}
