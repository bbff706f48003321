"""`pci-devices`: capabilities counting the PCI devices of configured aliases."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins.capabilities import parse
from ironsight.discoverd.plugins.pci_devices import PciDevices, PciDevicesInspector

from ..helpers import agent_report, context, unvalidated

ALIASES = "10de:1eb8:gpu_t4,8086:1572:nic_x710"
T4 = {"vendor_id": "10de", "product_id": "1eb8", "class": "030200", "bus": "0000:3b:00.0"}
X710 = {"vendor_id": "8086", "product_id": "1572", "class": "020000", "bus": "0000:5e:00.0"}
OTHER = {"vendor_id": "1af4", "product_id": "1000", "class": "020000", "bus": "0000:00:03.0"}


def caps(devices: Any, existing: str | None = None, aliases: str = ALIASES,
         hook: type[PciDevices] = PciDevices) -> dict[str, str] | None:
    report = agent_report() if devices is None else agent_report(pci_devices=devices)
    node = {"properties": {"capabilities": existing} if existing is not None else {}}
    ctx = context(report, node=node, processing={"pci_device_alias": aliases})
    hook(ctx.conf).before_update(ctx)
    written = ctx.changes.properties.get("capabilities")
    return parse(written) if written is not None else None


def test_each_alias_found_is_a_capability_counting_its_devices() -> None:
    assert caps([T4, X710, T4, OTHER]) == {"gpu_t4": "2", "nic_x710": "1"}


def test_ids_compare_whatever_their_case_or_prefix() -> None:
    assert caps([{"vendor_id": "0x10DE", "product_id": "0x1EB8"}]) == {"gpu_t4": "1"}


def test_devices_of_no_alias_add_nothing() -> None:
    assert caps([OTHER]) is None


def test_a_report_without_pci_devices_changes_nothing() -> None:
    assert caps(None) is None


def test_ids_that_are_not_hexadecimal_match_no_alias() -> None:
    assert caps([{"vendor_id": "10dg", "product_id": "1eb8"}, T4]) == {"gpu_t4": "1"}


def test_unvalidated_entries_that_are_not_devices_are_ignored() -> None:
    ctx = unvalidated(agent_report(pci_devices=["junk", {"vendor_id": None}, T4]),
                      pci_device_alias=ALIASES)
    PciDevices(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {"capabilities": "gpu_t4:1"}


def test_unvalidated_pci_devices_that_are_not_a_list_are_a_warning() -> None:
    ctx = unvalidated(agent_report(pci_devices={"a": 1}), pci_device_alias=ALIASES)
    PciDevices(ctx.conf).before_update(ctx)
    assert ctx.changes.properties == {}
    assert ctx.changes.warnings == ["pci_devices is not a list (dict); ignored"]


def test_other_capabilities_of_the_node_are_kept() -> None:
    assert caps([T4], "x:y") == {"x": "y", "gpu_t4": "1"}


def test_a_count_the_node_has_is_kept() -> None:
    assert caps([T4], "gpu_t4:0,x:y") is None


@pytest.mark.parametrize("bad", ["10de:1eb8", "10de:zzzz:gpu", "10de:1eb8:", "a:b:c:d"])
def test_a_bad_alias_stops_the_service_naming_the_option(bad: str) -> None:
    ctx = context(agent_report(), processing={"pci_device_alias": bad})
    with pytest.raises(ConfigError, match=r"\[processing\] pci_device_alias"):
        PciDevices(ctx.conf)


def test_inspector_era_name_does_the_same() -> None:
    assert PciDevicesInspector.name == "pci_devices"
    assert caps([T4], hook=PciDevicesInspector) == {"gpu_t4": "1"}
