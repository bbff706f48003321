"""The hardware differ on real-looking agent reports: each change an operator looks for is
named (a DIMM gone, a disk replaced, a NIC's MAC changed...), and nothing else is."""

from __future__ import annotations

import copy
from typing import Any

from ironsight.discoverd.inventory_diff import Change, diff

GIB = 1024 ** 3


def dimm(bank: str, slot: str, serial: str | None, size: str = "16 GB") -> dict[str, Any]:
    if serial is None:
        return {"Size": "No Module Installed", "Locator": slot, "Bank Locator": bank}
    return {"Size": size, "Locator": slot, "Bank Locator": bank, "Serial Number": serial,
            "Manufacturer": "Samsung", "Part Number": "M393A2K43CB2-CTD", "Type": "DDR4"}


def report() -> dict[str, Any]:
    """What ironic-python-agent posts for a two-socket server (with the dmi collector)."""
    return {
        "inventory": {
            "interfaces": [
                {"name": "eno1", "mac_address": "3c:fd:fe:aa:bb:01", "ipv4_address": "10.0.0.5",
                 "has_carrier": True, "vendor": "0x8086", "product": "0x1572"},
                {"name": "eno2", "mac_address": "3c:fd:fe:aa:bb:02", "ipv4_address": None,
                 "has_carrier": False, "vendor": "0x8086", "product": "0x1572"}],
            "cpu": {"model_name": "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
                    "frequency": "2100.0000", "count": 80, "architecture": "x86_64",
                    "flags": ["fpu", "vmx", "aes"], "socket_count": 2},
            "memory": {"total": 134638583808, "physical_mb": 131072},
            "disks": [
                {"name": "/dev/sda", "model": "PERC H740P", "size": 479559942144,
                 "rotational": False, "wwn": "0x6d0946606d4a6e00", "serial": "6d0946606d4a6e00",
                 "vendor": "DELL", "hctl": "0:2:0:0", "by_path": "/dev/disk/by-path/pci-0"},
                {"name": "/dev/nvme0n1", "model": "Dell Express Flash", "size": 1600321314816,
                 "rotational": False, "wwn": "eui.01000000000000005cd2e4", "serial": "PHLN0131",
                 "vendor": None, "hctl": None, "by_path": "/dev/disk/by-path/pci-1"}],
            "bmc_address": "192.0.2.15", "bmc_v6address": "::/0", "bmc_mac": "d0:94:66:00:00:01",
            "system_vendor": {"product_name": "PowerEdge R640", "serial_number": "7XJ2K13",
                              "manufacturer": "Dell Inc.",
                              "firmware": {"vendor": "Dell Inc.", "version": "2.11.2",
                                           "build_date": "2021-05-14"}},
            "boot": {"current_boot_mode": "uefi", "pxe_interface": "3c:fd:fe:aa:bb:01"},
            "hostname": "node-7"},
        "dmi": {"memory": {"Maximum Capacity": "1536 GB", "Number Of Devices": 4, "devices": [
            dimm("P0_Node0_Channel0_Dimm0", "A1", "36A1B2C3"),
            dimm("P0_Node0_Channel1_Dimm0", "A2", "36A1B2C4"),
            dimm("P1_Node1_Channel0_Dimm0", "B1", "36A1B2C5"),
            dimm("P1_Node1_Channel1_Dimm0", "B2", None)]}},
        "root_disk": {"name": "/dev/sda"},
        "boot_interface": "01-3c-fd-fe-aa-bb-01",
    }


def changed(mutate: Any) -> list[Change]:
    after = copy.deepcopy(report())
    mutate(after)
    return diff(report(), after)


def inv(data: dict[str, Any]) -> dict[str, Any]:
    return data["inventory"]


def test_the_same_machine_has_no_changes() -> None:
    assert diff(report(), report()) == []


def test_what_is_not_hardware_is_no_change() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["hostname"] = "other"
        inv(d)["interfaces"][0]["ipv4_address"] = "10.0.0.99"
        d["boot_interface"] = None
    assert changed(mutate) == []


def test_a_dimm_gone_names_its_slot_and_serial() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["dmi"]["memory"]["devices"][1] = dimm("P0_Node0_Channel1_Dimm0", "A2", None)
        inv(d)["memory"]["physical_mb"] = 98304
    changes = changed(mutate)
    assert [(c.part, c.item, c.change) for c in changes] == [
        ("memory", "physical_mb", "changed"), ("dimm", "P0_Node0_Channel1_Dimm0 A2", "removed")]
    assert changes[1].before["serial"] == "36A1B2C4"
    assert str(changes[1]).startswith("dimm P0_Node0_Channel1_Dimm0 A2 gone (was size 16 GB")


def test_a_dimm_swapped_in_its_slot_is_replaced() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["dmi"]["memory"]["devices"][0] = dimm("P0_Node0_Channel0_Dimm0", "A1", "99FFFF01")
    [change] = changed(mutate)
    assert (change.part, change.change, change.before["serial"], change.after["serial"]) == (
        "dimm", "replaced", "36A1B2C3", "99FFFF01")


def test_a_dimm_in_an_empty_slot_is_added() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["dmi"]["memory"]["devices"][3] = dimm("P1_Node1_Channel1_Dimm0", "B2", "36A1B2C6")
    assert [(c.item, c.change) for c in changed(mutate)] == [
        ("P1_Node1_Channel1_Dimm0 B2", "added")]


def test_without_the_dmi_collector_only_the_memory_size_is_compared() -> None:
    def mutate(d: dict[str, Any]) -> None:
        del d["dmi"]
        inv(d)["memory"]["physical_mb"] = 65536
    assert [(c.part, c.before, c.after) for c in changed(mutate)] == [
        ("memory", 131072, 65536)]


def test_a_disk_replaced_under_the_same_name() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][1].update(serial="PHLN0999", wwn="eui.0100000000000000ffff",
                                  size=3200631791616)
    [change] = changed(mutate)
    assert (change.part, change.item, change.change) == ("disk", "/dev/nvme0n1", "replaced")
    assert (change.before["serial"], change.after["serial"]) == ("PHLN0131", "PHLN0999")
    assert (change.before["size"], change.after["size"]) == (1600321314816, 3200631791616)


def test_a_disk_that_only_moved_to_another_name_is_renamed() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][0]["name"] = "/dev/sdb"
    assert [(c.item, c.change, c.before, c.after) for c in changed(mutate)] == [
        ("/dev/sda", "renamed", "/dev/sda", "/dev/sdb")]


def test_a_disk_gone_and_one_added() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][1] = {"name": "/dev/sdb", "size": 4000 * GIB, "serial": "ZL2ABCDE",
                              "model": "ST4000NM", "wwn": None}
    assert [(c.item, c.change) for c in changed(mutate)] == [
        ("/dev/nvme0n1", "removed"), ("/dev/sdb", "added")]


def test_disks_without_serial_or_wwn_are_matched_by_name() -> None:
    before, after = report(), report()
    for data, size in ((before, 100 * GIB), (after, 200 * GIB)):
        inv(data)["disks"] = [{"name": "/dev/vda", "size": size, "model": "QEMU"}]
    [change] = diff(before, after)
    assert (change.item, change.change) == ("/dev/vda", "replaced")
    assert diff(before, before) == []


def test_a_nics_mac_changed_names_the_interface() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["interfaces"][1]["mac_address"] = "B4:96:91:00:00:02"
    [change] = changed(mutate)
    assert (change.part, change.item, change.change, change.before, change.after) == (
        "nic", "eno2", "mac changed", "3c:fd:fe:aa:bb:02", "b4:96:91:00:00:02")
    assert str(change) == "nic eno2 mac changed: 3c:fd:fe:aa:bb:02 -> b4:96:91:00:00:02"


def test_a_mac_compared_case_insensitively_is_no_change() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["interfaces"][0]["mac_address"] = "3C:FD:FE:AA:BB:01"
    assert changed(mutate) == []


def test_a_nic_renamed_keeps_its_mac() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["interfaces"][0]["name"] = "enp59s0f0"
    assert [(c.item, c.change, c.after) for c in changed(mutate)] == [
        ("eno1", "renamed", "enp59s0f0")]


def test_a_nic_gone_and_one_added() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["interfaces"][1] = {"name": "ens1f0", "mac_address": "b4:96:91:00:00:10"}
    assert [(c.item, c.change) for c in changed(mutate)] == [
        ("eno2", "removed"), ("ens1f0", "added")]


def test_cpu_count_and_model_changes() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["cpu"].update(count=40, model_name="Intel(R) Xeon(R) Gold 5218",
                             socket_count=1)
    assert [(c.part, c.item) for c in changed(mutate)] == [
        ("cpu", "count"), ("cpu", "model_name"), ("cpu", "socket_count")]


def test_system_serial_and_vendor_changes() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"].update(serial_number="8ZZ9K99", manufacturer="Lenovo")
    assert [(c.part, c.item, c.before, c.after) for c in changed(mutate)] == [
        ("system", "manufacturer", "Dell Inc.", "Lenovo"),
        ("system", "serial_number", "7XJ2K13", "8ZZ9K99")]


def test_a_firmware_upgrade_and_a_new_bmc_address() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"]["firmware"]["version"] = "2.17.1"
        inv(d)["bmc_address"] = "192.0.2.16"
    assert [(c.part, c.item) for c in changed(mutate)] == [
        ("system", "firmware_version"), ("bmc", "address")]


def test_documents_without_an_inventory_compare_as_empty() -> None:
    assert diff({}, {"error": "boom"}) == []
    assert [c.change for c in diff({}, report()) if c.part == "disk"] == ["added", "added"]


def test_a_change_is_plain_json() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["cpu"]["count"] = 40
    assert changed(mutate)[0].as_dict() == {"part": "cpu", "item": "count",
                                            "change": "changed", "before": 80, "after": 40}
