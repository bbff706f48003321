"""Hardware components and their changes on real-looking agent reports: each part keyed by
what identifies it physically, nothing that changes from one boot to the next compared, and
each change an operator looks for named with its severity."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from ironsight.discoverd.components import (
    ComponentEvent,
    components,
    events,
    summary,
    version_order,
)

GIB = 1024 ** 3
MINUS = "\u2212"
# Fields that change between two boots of unchanged hardware (what the agent reports).
VOLATILE = {"ipv4_address", "ipv6_address", "has_carrier", "lldp", "speed_mbps", "client_id",
            "hctl", "by_path", "uuid", "partuuid", "numa_node", "numa_node_id", "frequency",
            "flags", "total", "pci_address", "bmc_address", "hostname"}


def dimm(socket: int, channel: int, serial: str | None) -> dict[str, Any]:
    """dmidecode's memory device, as IPA's `dmi` collector and our agent (size_mb) give it."""
    slot = {"Locator": f"{'AB'[socket]}{channel + 1}",
            "Bank Locator": f"P{socket}_Node{socket}_Channel{channel}_Dimm0"}
    if serial is None:
        return {"Size": "No Module Installed", "size_mb": 0, **slot}
    return {"Size": "32 GB", "size_mb": 32768, **slot, "Type": "DDR4", "Speed": "3200 MT/s",
            "Manufacturer": "Samsung", "Serial Number": serial,
            "Part Number": "M393A4K40DB3-CWE"}


def pci(address: str, vendor: str, product: str, kind: str, revision: str = "00",
        driver: str | None = None, numa: int = 0) -> dict[str, Any]:
    return {"vendor_id": vendor, "product_id": product, "class": kind, "revision": revision,
            "bus": address, "numa_node_id": str(numa), "address": address, "numa_node": numa,
            "driver": driver}


def report() -> dict[str, Any]:
    """What our agent posts for a two-socket server with 16 x 32 GiB DIMMs (16 slots empty),
    a RAID volume and two NVMe drives, four NICs and an H100."""
    return {
        "inventory": {
            "interfaces": [
                {"name": "eno1", "mac_address": "3c:fd:fe:aa:bb:01", "ipv4_address": "10.0.0.5",
                 "ipv6_address": "fe80::3efd:feff:feaa:bb01", "has_carrier": True, "lldp": [],
                 "vendor": "0x8086", "product": "0x1572", "client_id": None,
                 "biosdevname": None, "speed_mbps": 10000, "driver": "i40e",
                 "pci_address": "0000:3b:00.0"},
                {"name": "eno2", "mac_address": "3c:fd:fe:aa:bb:02", "ipv4_address": None,
                 "ipv6_address": None, "has_carrier": False, "lldp": [], "vendor": "0x8086",
                 "product": "0x1572", "client_id": None, "biosdevname": None,
                 "speed_mbps": None, "driver": "i40e", "pci_address": "0000:3b:00.1"},
                {"name": "ens2f0np0", "mac_address": "B8:CE:F6:10:20:30",
                 "ipv4_address": None, "ipv6_address": None, "has_carrier": True, "lldp": [],
                 "vendor": "0x15b3", "product": "0x101d", "client_id": None,
                 "biosdevname": None, "speed_mbps": 100000, "driver": "mlx5_core",
                 "pci_address": "0000:5e:00.0"}],
            "cpu": {"model_name": "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
                    "frequency": "3200.0000", "count": 128, "architecture": "x86_64",
                    "flags": ["fpu", "vmx", "aes", "avx512f"], "socket_count": 2},
            "memory": {"total": 540700946432, "physical_mb": 524288},
            "disks": [
                {"name": "/dev/sda", "model": "PERC H755", "size": 479559942144,
                 "rotational": False, "wwn": "0x6f4ee0806d4a6e00", "serial": None,
                 "vendor": "DELL", "wwn_with_extension": None, "wwn_vendor_extension": None,
                 "hctl": "0:3:111:0", "by_path": "/dev/disk/by-path/pci-0000:65:00.0-scsi-0",
                 "uuid": None, "partuuid": None, "logical_sectors": 512,
                 "physical_sectors": 512, "tran": None},
                {"name": "/dev/nvme0n1", "model": "Dell Ent NVMe P5600 MU U.2 1.6TB",
                 "size": 1600321314816, "rotational": False, "wwn": "eui.01000000000000005cd2e4",
                 "serial": "PHAB1234001N1P6DGN", "vendor": None, "hctl": None,
                 "by_path": "/dev/disk/by-path/pci-0000:c1:00.0-nvme-1", "uuid": None,
                 "partuuid": None, "logical_sectors": 512, "physical_sectors": 512},
                {"name": "/dev/nvme1n1", "model": "Dell Ent NVMe P5600 MU U.2 1.6TB",
                 "size": 1600321314816, "rotational": False, "wwn": "eui.01000000000000005cd2e5",
                 "serial": "PHAB1234002N1P6DGN", "vendor": None, "hctl": None,
                 "by_path": "/dev/disk/by-path/pci-0000:c2:00.0-nvme-1", "uuid": None,
                 "partuuid": None, "logical_sectors": 512, "physical_sectors": 512}],
            "bmc_address": "192.0.2.15", "bmc_v6address": None, "bmc_mac": "d0:94:66:00:00:01",
            "system_vendor": {"product_name": "PowerEdge R750", "serial_number": "7XJ2K13",
                              "manufacturer": "Dell Inc.",
                              "uuid": "4c4c4544-0058-4a10-8032-b7c04f4b3133",
                              "firmware": {"vendor": "Dell Inc.", "version": "1.2.3",
                                           "build_date": "06/05/2023"}},
            "boot": {"current_boot_mode": "uefi", "pxe_interface": "3c:fd:fe:aa:bb:01",
                     "secure_boot": False},
            "hostname": "node-7"},
        "dmi": {"bios": {"Vendor": "Dell Inc.", "Version": "1.2.3"},
                "system": {"Manufacturer": "Dell Inc.", "Product Name": "PowerEdge R750"},
                "memory": {"Maximum Capacity": "6 TB", "Number Of Devices": 32, "devices": [
                    dimm(socket, channel, f"{socket}{channel:02d}A1B2C3" if filled else None)
                    for socket in (0, 1) for channel in range(16)
                    for filled in [channel % 2 == 0]]}},
        "pci_devices": [
            pci("0000:00:00.0", "8086", "09a2", "060000", "04"),
            pci("0000:3b:00.0", "8086", "1572", "020000", "02", "i40e"),
            pci("0000:3b:00.1", "8086", "1572", "020000", "02", "i40e"),
            pci("0000:5e:00.0", "15b3", "101d", "020000", "00", "mlx5_core"),
            pci("0000:65:00.0", "1000", "10e2", "010400", "00", "megaraid_sas"),
            pci("0000:ca:00.0", "10de", "2330", "030200", "a1", None, 1)],
        "root_disk": {"name": "/dev/sda"},
        "boot_interface": "01-3c-fd-fe-aa-bb-01",
        "configuration": {"collectors": ["default", "dmi-decode", "pci-devices"]},
        "error": None, "warnings": [],
    }


def inv(data: dict[str, Any]) -> dict[str, Any]:
    return data["inventory"]


def after(mutate: Callable[[dict[str, Any]], None]) -> list[ComponentEvent]:
    """The events from `report()` to it changed by `mutate`."""
    changed = report()
    mutate(changed)
    return events(report(), changed)


def rereport(boot: int) -> dict[str, Any]:
    """The same machine inspected again: other addresses, link states, LLDP neighbours,
    link speeds, clocks, probe order and NUMA placement; nothing of the hardware."""
    data = report()
    inventory = inv(data)
    for index, nic in enumerate(inventory["interfaces"]):
        up = (boot + index) % 3 != 0
        nic.update(ipv4_address=f"10.0.{boot}.{index + 5}" if up else None,
                   ipv6_address=f"2001:db8:{boot}::{index}" if up else None,
                   has_carrier=up, speed_mbps=[1000, 10000, 25000][boot % 3] if up else None,
                   lldp=[[1, f"04{boot:02x}"], [2, f"05eth{boot}"]] if up else [],
                   mac_address=nic["mac_address"].upper() if boot % 2 else nic["mac_address"])
    inventory["interfaces"].reverse()
    inventory["cpu"].update(frequency=f"{1200 + boot * 97}.1230",
                            flags=inventory["cpu"]["flags"] + (["md_clear"] if boot % 2 else []))
    inventory["memory"]["total"] -= boot * 4096
    for disk in inventory["disks"]:
        disk.update(hctl=f"{boot}:3:111:0" if disk["hctl"] else None,
                    by_path=None if boot % 4 == 0 else disk["by_path"],
                    uuid=f"fs-{boot}", partuuid=f"part-{boot}")
    inventory["disks"].append(inventory["disks"].pop(0))
    inventory.update(bmc_address=f"192.0.2.{100 + boot}", hostname=f"host-{boot}")
    inventory["boot"]["pxe_interface"] = "3c:fd:fe:aa:bb:02" if boot % 2 else None
    for device in data["pci_devices"]:
        device.update(numa_node=boot % 2, numa_node_id=str(boot % 2),
                      driver=None if boot % 5 == 0 else device["driver"])
    data.update(boot_interface=None, root_disk=None, warnings=[f"lldp: timeout {boot}"])
    return data


# --- identity of each type --------------------------------------------------------------------


def test_a_dimm_is_keyed_by_slot_and_serial_with_its_size_in_mib() -> None:
    dimms = components(report())["dimm"]
    assert dimms["P0_Node0_Channel0_Dimm0 A1 serial:000A1B2C3"] == {
        "size_mb": 32768, "part_number": "M393A4K40DB3-CWE", "manufacturer": "Samsung",
        "speed": "3200 MT/s"}


def test_an_empty_dimm_slot_is_no_component() -> None:
    dimms = components(report())["dimm"]
    assert len(dimms) == 16
    assert not any(key.startswith("P0_Node0_Channel1_Dimm0") for key in dimms)


@pytest.mark.parametrize("size", ["32 GB", "32768 MB", "32 GiB"])
def test_a_dimm_size_reads_the_same_from_dmidecode_text(size: str) -> None:
    data = report()
    device = data["dmi"]["memory"]["devices"][0]
    del device["size_mb"]  # IPA's collector: dmidecode's text only
    device["Size"] = size
    assert components(data)["dimm"]["P0_Node0_Channel0_Dimm0 A1 serial:000A1B2C3"][
        "size_mb"] == 32768


def test_a_disk_is_keyed_by_serial_else_wwn_else_name() -> None:
    data = report()
    inv(data)["disks"].append({"name": "/dev/vda", "size": 100 * GIB, "model": "QEMU"})
    disks = components(data)["disk"]
    assert list(disks) == ["wwn:0x6f4ee0806d4a6e00", "serial:PHAB1234001N1P6DGN",
                           "serial:PHAB1234002N1P6DGN", "name:/dev/vda"]
    assert disks["wwn:0x6f4ee0806d4a6e00"] == {
        "name": "/dev/sda", "size": 479559942144, "model": "PERC H755", "vendor": "DELL",
        "rotational": False, "wwn": "0x6f4ee0806d4a6e00"}


def test_a_nic_is_keyed_by_its_mac_in_lower_case() -> None:
    nics = components(report())["nic"]
    assert nics["b8:ce:f6:10:20:30"] == {"name": "ens2f0np0", "vendor": "0x15b3",
                                         "product": "0x101d", "driver": "mlx5_core"}


def test_a_pci_device_is_keyed_by_address_and_ids() -> None:
    devices = components(report())["pci"]
    assert devices["0000:ca:00.0 10de:2330"] == {"class": "030200", "revision": "a1"}


def test_pci_subsystem_ids_are_kept_when_reported() -> None:
    data = report()
    data["pci_devices"][-1].update(subsystem_vendor_id="0x10DE", subsystem_device_id="16c1")
    assert components(data)["pci"]["0000:ca:00.0 10de:2330"] == {
        "class": "030200", "revision": "a1", "subsystem_vendor_id": "10de",
        "subsystem_product_id": "16c1"}


def test_the_cpus_are_one_component_keyed_by_model_and_count() -> None:
    assert components(report())["cpu"] == {
        "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz x128": {
            "model": "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "count": 128,
            "architecture": "x86_64", "socket_count": 2}}


def test_memory_is_one_component_of_the_installed_size() -> None:
    assert components(report())["memory"] == {"total": {"physical_mb": 524288}}


def test_firmware_is_the_bios_and_the_bmc_when_reported() -> None:
    data = report()
    inv(data)["bmc_firmware_version"] = "6.10.30.00"
    assert components(data)["firmware"] == {
        "bios": {"version": "1.2.3", "vendor": "Dell Inc.", "date": "06/05/2023"},
        "bmc": {"version": "6.10.30.00"}}


def test_the_system_is_its_maker_product_serial_and_sku() -> None:
    data = report()
    data["dmi"]["system"]["SKU Number"] = "SKU=0A6E;ModelName=PowerEdge R750"
    assert components(data)["system"] == {"system": {
        "manufacturer": "Dell Inc.", "product_name": "PowerEdge R750",
        "serial_number": "7XJ2K13", "sku": "SKU=0A6E;ModelName=PowerEdge R750"}}


def test_placeholder_strings_are_no_value() -> None:
    data = report()
    inv(data)["system_vendor"]["serial_number"] = "To Be Filled By O.E.M."
    assert "serial_number" not in components(data)["system"]["system"]


# --- what is not hardware ---------------------------------------------------------------------


def test_volatile_fields_are_no_attributes() -> None:
    found = components(rereport(1))
    names = {name for by_key in found.values() for attrs in by_key.values() for name in attrs}
    assert names.isdisjoint(VOLATILE)


def test_twenty_rereports_of_the_same_machine_give_no_events() -> None:
    first = report()
    for boot in range(1, 21):
        assert components(rereport(boot)) == components(first)
        assert events(first, rereport(boot)) == []
        assert events(rereport(boot), rereport(boot + 1)) == []


# --- changes and their severity ---------------------------------------------------------------


def test_a_dimm_removed_is_critical_and_summarised_with_the_memory_lost() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["dmi"]["memory"]["devices"][4] = dimm(0, 4, None)

    [event] = after(mutate)
    assert (event.component, event.key, event.change, event.severity) == (
        "dimm", "P0_Node0_Channel4_Dimm0 A5 serial:004A1B2C3", "removed", "critical")
    assert event.message == ("dimm P0_Node0_Channel4_Dimm0 A5 serial:004A1B2C3 "
                             "(32 GiB, M393A4K40DB3-CWE) removed")
    assert summary([event]) == [f"16 → 15 DIMMs, {MINUS}32 GiB"]


def test_a_dimm_swapped_in_its_slot_is_removed_and_added() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["dmi"]["memory"]["devices"][0]["Serial Number"] = "99FFFF01"

    found = after(mutate)
    assert [(e.key, e.change) for e in found] == [
        ("P0_Node0_Channel0_Dimm0 A1 serial:000A1B2C3", "removed"),
        ("P0_Node0_Channel0_Dimm0 A1 serial:99FFFF01", "added")]
    assert summary(found) == ["16 DIMMs, 1 removed, 1 added"]


def test_less_memory_is_critical() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["memory"]["physical_mb"] = 491520

    [event] = after(mutate)
    assert (event.component, event.key, event.severity, event.fields) == (
        "memory", "total", "critical", ("physical_mb",))
    assert event.message == f"memory 524288 MiB -> 491520 MiB ({MINUS}32 GiB)"
    assert summary([event]) == [f"memory 524288 → 491520 MiB, {MINUS}32 GiB"]


def test_more_memory_is_info() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["memory"]["physical_mb"] = 1048576

    assert [e.severity for e in after(mutate)] == ["info"]


def test_a_disk_replaced_is_one_removed_and_one_added() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][2].update(serial="S6EVNE0T600123", wwn="eui.002538b611a02c11",
                                  model="SAMSUNG MZQL21T9HCJR", size=1920383410176)

    found = after(mutate)
    assert [(e.key, e.change, e.severity) for e in found] == [
        ("serial:PHAB1234002N1P6DGN", "removed", "critical"),
        ("serial:S6EVNE0T600123", "added", "info")]
    assert found[0].message == "disk serial:PHAB1234002N1P6DGN (nvme1n1, 1.6 TB) removed"
    assert summary(found) == ["3 disks, 1 removed, 1 added, +320 GB"]


def test_a_disk_removed_is_critical_and_summarised() -> None:
    def mutate(d: dict[str, Any]) -> None:
        del inv(d)["disks"][0]

    [event] = after(mutate)
    assert (event.severity, event.message) == (
        "critical", "disk wwn:0x6f4ee0806d4a6e00 (sda, 480 GB) removed")
    assert summary([event]) == [f"3 → 2 disks, {MINUS}480 GB"]


def test_a_disk_shrunk_is_a_critical_change() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][0]["size"] = 239511535616  # the RAID volume rebuilt smaller

    [event] = after(mutate)
    assert (event.key, event.change, event.severity, event.fields) == (
        "wwn:0x6f4ee0806d4a6e00", "changed", "critical", ("size",))
    assert event.message == "disk wwn:0x6f4ee0806d4a6e00: size 480 GB -> 240 GB"


def test_sizes_under_a_gigabyte_read_in_megabytes() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][0]["size"] = 64 * 1024 ** 2

    [event] = after(mutate)
    assert event.message.endswith("size 480 GB -> 67 MB")


def test_a_disk_grown_is_an_info_change() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][0]["size"] = 959119884288

    assert [(e.change, e.severity) for e in after(mutate)] == [("changed", "info")]


def test_a_disk_that_only_moved_to_another_name_is_an_info_change() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["disks"][1]["name"], inv(d)["disks"][2]["name"] = "/dev/nvme1n1", "/dev/nvme0n1"

    found = after(mutate)
    assert [(e.key, e.fields, e.severity) for e in found] == [
        ("serial:PHAB1234001N1P6DGN", ("name",), "info"),
        ("serial:PHAB1234002N1P6DGN", ("name",), "info")]


def test_a_nic_renamed_keeps_its_mac_and_is_an_info_change() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["interfaces"][0]["name"] = "enp59s0f0"

    [event] = after(mutate)
    assert (event.key, event.change, event.severity, event.message) == (
        "3c:fd:fe:aa:bb:01", "changed", "info", "nic 3c:fd:fe:aa:bb:01: name eno1 -> enp59s0f0")


def test_a_nic_with_another_mac_is_another_nic() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["interfaces"][1]["mac_address"] = "3c:fd:fe:aa:bb:99"

    assert [(e.key, e.change, e.severity) for e in after(mutate)] == [
        ("3c:fd:fe:aa:bb:02", "removed", "warning"), ("3c:fd:fe:aa:bb:99", "added", "info")]


def test_a_nic_removed_is_a_warning() -> None:
    def mutate(d: dict[str, Any]) -> None:
        del inv(d)["interfaces"][2]

    [event] = after(mutate)
    assert (event.severity, event.message) == (
        "warning", "nic b8:ce:f6:10:20:30 (ens2f0np0) removed")
    assert summary([event]) == ["3 → 2 NICs"]


def test_a_pci_device_added_is_info() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["pci_devices"].append(pci("0000:e3:00.0", "10de", "2330", "030200", "a1"))

    [event] = after(mutate)
    assert (event.component, event.key, event.change, event.severity, event.message) == (
        "pci", "0000:e3:00.0 10de:2330", "added", "info",
        "pci 0000:e3:00.0 10de:2330 (class 030200) added")
    assert summary([event]) == ["6 → 7 PCI devices"]


def test_a_pci_device_removed_is_critical() -> None:
    def mutate(d: dict[str, Any]) -> None:
        del d["pci_devices"][-1]

    assert [(e.key, e.severity) for e in after(mutate)] == [
        ("0000:ca:00.0 10de:2330", "critical")]


def test_fewer_cpus_is_one_critical_change_of_the_cpus() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["cpu"].update(count=64, socket_count=1)

    [event] = after(mutate)
    assert (event.component, event.key, event.change, event.severity, event.fields) == (
        "cpu", "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz x128", "changed", "critical",
        ("count", "socket_count"))
    assert summary([event]) == ["128 → 64 CPUs, socket_count 2 → 1"]


def test_another_cpu_model_is_a_warning() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["cpu"]["model_name"] = "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz"

    assert [(e.fields, e.severity) for e in after(mutate)] == [(("model",), "warning")]


def test_a_bios_upgrade_is_info_and_summarised() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"]["firmware"].update(version="1.3.0", build_date="01/09/2024")

    [event] = after(mutate)
    assert (event.component, event.key, event.severity, event.fields) == (
        "firmware", "bios", "info", ("version", "date"))
    assert event.message == "BIOS: version 1.2.3 -> 1.3.0, date 06/05/2023 -> 01/09/2024"
    assert summary([event]) == ["BIOS 1.2.3 → 1.3.0, date 06/05/2023 → 01/09/2024"]


def test_a_bios_downgrade_is_a_warning() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"]["firmware"]["version"] = "1.1.9"

    assert [e.severity for e in after(mutate)] == ["warning"]


def test_a_bmc_firmware_upgrade_is_info() -> None:
    before, later = report(), report()
    inv(before)["bmc_firmware_version"] = "6.10.30.00"
    inv(later)["bmc_firmware_version"] = "7.00.00.171"
    [event] = events(before, later)
    assert (event.key, event.severity) == ("bmc", "info")
    assert summary([event]) == ["BMC 6.10.30.00 → 7.00.00.171"]


@pytest.mark.parametrize(("old", "new", "order"), [
    ("1.2.3", "1.3.0", 1), ("2.11.2", "2.9.0", -1), ("2.9", "2.10", 1), ("1.2", "1.2.0", 0),
    ("U30 v2.54 (12/03/2021)", "U30 v2.62 (01/10/2022)", 1), ("1.0a3", "1.0a12", 1),
    ("1.0a", "1.0b", None), ("A12", "2.1", None), (None, "1.0", None)])
def test_versions_are_ordered_only_when_comparable(old: str | None, new: str,
                                                   order: int | None) -> None:
    assert version_order(old, new) == order


def test_firmware_versions_that_cannot_be_ordered_are_a_warning() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"]["firmware"]["version"] = "A12"

    assert [e.severity for e in after(mutate)] == ["warning"]


def test_another_system_serial_is_a_warning() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"]["serial_number"] = "8ZZ9K99"

    [event] = after(mutate)
    assert (event.component, event.severity, event.message) == (
        "system", "warning", "system: serial_number 7XJ2K13 -> 8ZZ9K99")


# --- sections collected on one side only ------------------------------------------------------


def test_dimms_not_collected_in_one_run_emit_nothing() -> None:
    def mutate(d: dict[str, Any]) -> None:
        del d["dmi"]

    assert after(mutate) == []


def test_no_smbios_memory_devices_at_all_is_dimms_not_collected() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["dmi"]["memory"]["devices"] = []  # our agent where SMBIOS cannot be read

    assert after(mutate) == []


def test_pci_devices_not_collected_in_one_run_emit_nothing() -> None:
    def mutate(d: dict[str, Any]) -> None:
        del d["pci_devices"]

    assert after(mutate) == []


def test_no_pci_devices_collected_is_not_none_found() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["pci_devices"] = []

    assert summary(after(mutate)) == ["6 → 0 PCI devices"]


def test_a_failed_system_vendor_collector_emits_nothing_for_firmware_and_system() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"] = None

    assert after(mutate) == []


def test_documents_without_an_inventory_compare_as_nothing() -> None:
    assert events({}, {"error": "boom"}) == []
    assert events({}, report()) == []


# --- order and shape --------------------------------------------------------------------------


def test_events_come_by_type_then_key() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["system_vendor"]["firmware"]["version"] = "1.3.0"
        del inv(d)["interfaces"][0]
        d["dmi"]["memory"]["devices"][10] = dimm(0, 10, None)
        d["dmi"]["memory"]["devices"][2] = dimm(0, 2, None)
        inv(d)["memory"]["physical_mb"] = 458752

    assert [(e.component, e.key) for e in after(mutate)] == [
        ("memory", "total"),
        ("dimm", "P0_Node0_Channel2_Dimm0 A3 serial:002A1B2C3"),
        ("dimm", "P0_Node0_Channel10_Dimm0 A11 serial:010A1B2C3"),
        ("nic", "3c:fd:fe:aa:bb:01"), ("firmware", "bios")]


def test_an_event_is_plain_json() -> None:
    def mutate(d: dict[str, Any]) -> None:
        inv(d)["memory"]["physical_mb"] = 491520

    [event] = after(mutate)
    assert json.loads(json.dumps(event.as_dict())) == {
        "component": "memory", "key": "total", "change": "changed", "severity": "critical",
        "before": {"physical_mb": 524288}, "after": {"physical_mb": 491520},
        "fields": ["physical_mb"], "message": f"memory 524288 MiB -> 491520 MiB ({MINUS}32 GiB)",
        "counts": None}


def test_components_do_not_share_state_with_the_document() -> None:
    data = report()
    found = components(data)
    found["cpu"].clear()
    assert components(data) == components(copy.deepcopy(report()))
