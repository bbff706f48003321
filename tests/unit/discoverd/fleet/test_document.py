"""The node document fleet queries read (fleet/document.py): the node's API fields, the
latest inventory with the collectors folded in, plugin data and the derived conveniences."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ironsight.discoverd.fleet import document

GIB = 2**30


def _lldp(switch: str, port: str) -> list[list[Any]]:
    return [[1, (b"\x04" + bytes(6)).hex()], [2, (b"\x05" + port.encode()).hex()],
            [3, "0078"], [5, switch.encode().hex()]]


def data(**extra: Any) -> dict[str, Any]:
    return {
        "inventory": {
            "memory": {"physical_mb": 524288},
            "cpu": {"count": 64, "model_name": "Xeon Gold", "architecture": "x86_64"},
            "interfaces": [
                {"name": "eth0", "mac_address": "52:54:00:AA:BB:01", "speed_mbps": 25000,
                 "lldp": _lldp("tor-a", "Ethernet1/1")},
                {"name": "eth1", "mac_address": "52:54:00:aa:bb:02", "speed_mbps": 100000}],
            "disks": [{"name": "/dev/sda", "size": 480 * 10**9, "model": "SSD 480",
                       "serial": "S1"},
                      {"name": "/dev/sdb", "size": 3840 * 10**9, "model": "NVMe 3.8",
                       "rotational": False}],
            "system_vendor": {"manufacturer": "Dell Inc.", "product_name": "R750",
                              "serial_number": "SN1", "firmware": {"version": "1.2.3"}},
            "bmc_address": "10.0.0.5"},
        "pci_devices": [{"vendor_id": "1a03", "product_id": "2000", "class": "030000",
                         "bus": "0000:03:00.0"},
                        {"vendor_id": "10de", "product_id": "2330", "class": "030200",
                         "bus": "0000:17:00.0"},
                        {"vendor_id": "8086", "product_id": "1593", "class": "020000"}],
        "dmi": {"memory": {"devices": [{"Size": "32 GB"}, {"Size": "No Module Installed"},
                                       {"Size": "32 GB"}]}},
        "root_disk": {"name": "/dev/sda"},
        **extra}


NODE = {"uuid": "u1", "name": "n1", "provision_state": "manageable", "traits": ["CUSTOM_A"],
        "properties": {"memory_mb": 524288}, "links": [{"href": "x"}]}


def test_the_nodes_api_fields_keep_their_names_without_links() -> None:
    doc = document.build(NODE, data(), None)
    assert doc["name"] == "n1" and doc["traits"] == ["CUSTOM_A"]
    assert doc["properties"]["memory_mb"] == 524288
    assert "links" not in doc


def test_the_collectors_sections_are_read_under_inventory() -> None:
    doc = document.build(NODE, data(), None)
    assert doc["inventory"]["pci_devices"][1]["vendor_id"] == "10de"
    assert doc["inventory"]["memory"]["physical_mb"] == 524288


def test_plugin_data_is_the_processed_data_but_the_inventory() -> None:
    doc = document.build(NODE, data(), None)
    assert doc["plugin_data"]["root_disk"] == {"name": "/dev/sda"}
    assert "inventory" not in doc["plugin_data"]


def test_memory_is_also_given_in_gib() -> None:
    assert document.build(NODE, data(), None)["hardware"]["memory_gib"] == 512.0


def test_gpus_are_display_devices_but_the_boards_own_vga() -> None:
    hardware = document.build(NODE, data(), None)["hardware"]
    assert hardware["gpu_count"] == 1
    assert hardware["gpus"] == [{"vendor_id": "10de", "product_id": "2330",
                                 "address": "0000:17:00.0"}]


def test_nic_speeds_and_the_switch_decoded_from_the_reported_lldp() -> None:
    hardware = document.build(NODE, data(), None)["hardware"]
    assert hardware["nic_speeds_mbps"] == [25000, 100000]
    assert hardware["max_nic_speed_mbps"] == 100000
    assert hardware["switches"] == ["tor-a"]
    assert hardware["nics"][0]["mac"] == "52:54:00:aa:bb:01"
    assert hardware["nics"][0]["switch_port"] == "Ethernet1/1"


def test_a_hooks_parsed_lldp_is_preferred_to_decoding() -> None:
    parsed = {"eth1": {"switch_system_name": "tor-b", "switch_port_id": "Eth9"}}
    hardware = document.build(NODE, data(parsed_lldp=parsed), None)["hardware"]
    assert hardware["switches"] == ["tor-a", "tor-b"]


def test_disk_sizes_in_gb_and_gib_and_their_total() -> None:
    hardware = document.build(NODE, data(), None)["hardware"]
    assert [d["size_gb"] for d in hardware["disks"]] == [480, 3840]
    assert hardware["disks"][0]["size_gib"] == 480 * 10**9 // GIB
    assert hardware["disk_total_gb"] == 4320 and hardware["disk_count"] == 2


def test_dimms_are_counted_without_the_empty_slots() -> None:
    assert document.build(NODE, data(), None)["hardware"]["dimm_count"] == 2


def test_system_firmware_and_bmc_are_at_hand() -> None:
    hardware = document.build(NODE, data(), None)["hardware"]
    assert (hardware["vendor"], hardware["product"], hardware["serial"]) == (
        "Dell Inc.", "R750", "SN1")
    assert hardware["bios_version"] == "1.2.3" and hardware["bmc_address"] == "10.0.0.5"


def test_when_the_data_was_stored_is_rfc3339_utc() -> None:
    doc = document.build(NODE, data(), dt.datetime(2026, 12, 1, 10, 0))
    assert doc["inspected"] is True
    assert doc["inspected_at"] == "2026-12-01T10:00:00+00:00"


def test_a_node_never_inspected_has_empty_sections() -> None:
    doc = document.build(NODE, None, None)
    assert (doc["inventory"], doc["plugin_data"], doc["hardware"]) == ({}, {}, {})
    assert doc["inspected"] is False and doc["inspected_at"] is None


def test_odd_values_derive_nothing_rather_than_fail() -> None:
    odd = {"inventory": {"memory": {"physical_mb": "lots"}, "interfaces": "x",
                         "disks": [None, {"size": "big"}], "cpu": []}}
    hardware = document.build(NODE, odd, None)["hardware"]
    assert hardware["memory_mb"] is None and hardware["memory_gib"] is None
    assert hardware["nics"] == [] and hardware["disks"][0]["size_gb"] == 0
