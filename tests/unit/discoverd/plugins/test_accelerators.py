"""`accelerators`: the accelerators property, from known devices among the PCI devices."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins.accelerators import SHIPPED, Accelerators, load_known
from ironsight.discoverd.plugins.base import ProcessingContext

from ..helpers import agent_report, context

T4 = {"vendor_id": "10de", "product_id": "1eb8", "class": "030200", "bus": "0000:3b:00.0"}
NIC = {"vendor_id": "8086", "product_id": "1572", "class": "020000", "bus": "0000:5e:00.0"}


def run(report: dict[str, Any], **processing: str) -> ProcessingContext:
    ctx = context(report, node={"properties": {}}, processing=processing)
    Accelerators(ctx.conf).before_update(ctx)
    return ctx


def test_a_known_device_is_listed_with_its_pci_address() -> None:
    ctx = run(agent_report(pci_devices=[NIC, T4]))
    assert ctx.changes.properties == {"accelerators": [{
        "vendor_id": "10de", "device_id": "1eb8", "type": "GPU",
        "device_info": "NVIDIA Corporation Tesla T4", "pci_address": "0000:3b:00.0"}]}


def test_pci_devices_without_a_known_one_give_an_empty_list() -> None:
    assert run(agent_report(pci_devices=[NIC])).changes.properties == {"accelerators": []}


def test_no_pci_devices_change_nothing() -> None:
    assert run(agent_report()).changes.properties == {}


def test_a_file_of_ones_own_replaces_the_shipped_list(tmp_path: Path) -> None:
    known = tmp_path / "known.yaml"
    known.write_text('pci_devices:\n  - {vendor_id: "8086", device_id: "1572", type: NIC}\n')
    ctx = run(agent_report(pci_devices=[NIC, T4]), known_accelerators=str(known))
    assert ctx.changes.properties == {"accelerators": [{
        "vendor_id": "8086", "device_id": "1572", "type": "NIC",
        "pci_address": "0000:5e:00.0"}]}


def test_the_shipped_list_loads() -> None:
    assert ("10de", "1eb8") in load_known(SHIPPED)


@pytest.mark.parametrize("content", ["pci_devices: {}\n", "[1, 2]\n", "{{{\n",
                                     'pci_devices:\n  - {vendor_id: "10de"}\n'])
def test_a_bad_file_stops_the_service_naming_the_option(tmp_path: Path, content: str) -> None:
    known = tmp_path / "known.yaml"
    known.write_text(content)
    ctx = context(agent_report(), processing={"known_accelerators": str(known)})
    with pytest.raises(ConfigError, match=r"\[processing\] known_accelerators"):
        Accelerators(ctx.conf)


def test_a_missing_file_stops_the_service(tmp_path: Path) -> None:
    ctx = context(agent_report(), processing={"known_accelerators": str(tmp_path / "no")})
    with pytest.raises(ConfigError, match="cannot read"):
        Accelerators(ctx.conf)
