"""Drift within a model (fleet/drift.py): nodes whose hardware or firmware differ from what
most nodes of the same (vendor, product) have."""

from __future__ import annotations

import copy
from typing import Any

from ironsight.discoverd.fleet import document, drift


def machine(i: int, *, vendor: str = "Dell Inc.", product: str = "R750") -> dict[str, Any]:
    data = {
        "inventory": {
            "memory": {"physical_mb": 524288},
            "cpu": {"count": 64, "model_name": "Xeon Gold"},
            "interfaces": [{"name": "eth0", "mac_address": f"52:54:00:00:00:{i:02x}",
                            "vendor": "0x8086", "product": "0x1593"}],
            "disks": [{"name": "/dev/sda", "size": 480 * 10**9, "model": "SSD",
                       "serial": f"D{i}"},
                      {"name": "/dev/sdb", "size": 480 * 10**9, "model": "SSD",
                       "serial": f"E{i}"}],
            "system_vendor": {"manufacturer": vendor, "product_name": product,
                              "serial_number": f"SN{i}", "firmware": {"version": "1.2.3"}}},
        "pci_devices": [{"vendor_id": "10de", "product_id": "2330", "bus": "0000:17:00.0"}],
        "dmi": {"memory": {"devices": [{"Size": "32 GB", "Part Number": "P1",
                                        "Serial Number": f"M{i}-{n}"} for n in range(16)]}},
    }
    return data


def doc(i: int, data: dict[str, Any]) -> dict[str, Any]:
    return document.build({"uuid": f"u{i:02d}", "name": f"n{i}"}, data, None)


def test_one_altered_node_of_twenty_is_exactly_the_one_flagged() -> None:
    fleet = [machine(i) for i in range(20)]
    del fleet[7]["dmi"]["memory"]["devices"][3]
    (group,) = drift.drift([doc(i, d) for i, d in enumerate(fleet)])
    assert (group.vendor, group.product, group.nodes) == ("Dell Inc.", "R750", 20)
    (flagged,) = group.drifted
    assert flagged["uuid"] == "u07"
    (difference,) = flagged["differences"]
    assert difference["field"] == "dimms"
    assert difference["missing"] == ["32 GB P1"] and difference["extra"] == []


def test_serials_and_macs_never_count_as_drift() -> None:
    (group,) = drift.drift([doc(i, machine(i)) for i in range(5)])
    assert group.drifted == [] and group.no_majority == []


def test_a_firmware_version_and_a_disk_model_are_named_with_the_majoritys() -> None:
    fleet = [machine(i) for i in range(5)]
    fleet[2]["inventory"]["system_vendor"]["firmware"]["version"] = "1.0.0"
    fleet[2]["inventory"]["disks"][1]["model"] = "HDD"
    (group,) = drift.drift([doc(i, d) for i, d in enumerate(fleet)])
    (flagged,) = group.drifted
    by_field = {d["field"]: d for d in flagged["differences"]}
    assert by_field["bios_version"]["value"] == "1.0.0"
    assert by_field["bios_version"]["majority"] == "1.2.3"
    assert by_field["disks"]["extra"] == ["HDD 480 GB"]
    assert by_field["disks"]["missing"] == ["SSD 480 GB"]


def test_without_a_majority_a_field_flags_nobody() -> None:
    fleet = [machine(i) for i in range(4)]
    for data in fleet[:2]:
        data["inventory"]["system_vendor"]["firmware"]["version"] = "2.0"
    (group,) = drift.drift([doc(i, d) for i, d in enumerate(fleet)])
    assert group.drifted == [] and group.no_majority == ["bios_version"]


def test_models_are_compared_apart_and_small_groups_are_left_out() -> None:
    fleet = [doc(i, machine(i)) for i in range(3)]
    other = machine(9, product="R650")
    other["inventory"]["memory"]["physical_mb"] = 1
    fleet += [doc(9, other), doc(10, copy.deepcopy(other))]
    groups = drift.drift(fleet)
    assert [(g.product, g.nodes) for g in groups] == [("R750", 3)]


def test_nodes_never_inspected_are_in_no_group() -> None:
    fleet = [doc(i, machine(i)) for i in range(3)]
    fleet.append(document.build({"uuid": "u99"}, None, None))
    (group,) = drift.drift(fleet)
    assert group.nodes == 3


def test_one_model_can_be_asked_for() -> None:
    fleet = [doc(i, machine(i)) for i in range(3)]
    fleet += [doc(10 + i, machine(10 + i, product="R650")) for i in range(3)]
    assert [g.product for g in drift.drift(fleet, product="R650")] == ["R650"]
