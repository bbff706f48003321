"""The extra-hardware section: python-hardware's 4-tuples from what the agent collected."""

from __future__ import annotations

from ironsight.agent import extra

INVENTORY = {
    "system_vendor": {"product_name": "R640", "manufacturer": "Dell Inc.",
                      "serial_number": "SN1", "uuid": None,
                      "firmware": {"vendor": "Dell Inc.", "version": "2.10.2",
                                   "build_date": "02/24/2021"}},
    "cpu": {"count": 40, "socket_count": 2, "model_name": "Xeon", "frequency": "3900"},
    "memory": {"total": 1, "physical_mb": 32768},
    "disks": [{"name": "/dev/sda", "size": 480 * 1000**3, "model": "PERC", "rotational": False}],
    "interfaces": [{"name": "eno1", "mac_address": "3c:fd:fe:aa:bb:01", "has_carrier": True,
                    "ipv4_address": None, "driver": "i40e", "speed_mbps": 10000}],
}
DMI = {"memory": {"devices": [{"size_mb": 16384, "Locator": "A1", "Type": "DDR4"},
                              {"size_mb": 0, "Locator": "A2"}]}}


def test_it_is_wanted_only_when_the_collectors_list_names_it():
    assert extra.wanted({"ipa-inspection-collectors": "default, extra-hardware"})
    assert not extra.wanted({"ipa-inspection-collectors": "default,logs"})
    assert not extra.wanted({})


def test_rows_are_class_object_key_value_strings():
    rows = extra.collect(INVENTORY, DMI)
    assert all(len(row) == 4 and all(isinstance(v, str) for v in row) for row in rows)


def test_system_firmware_and_cpus():
    rows = extra.collect(INVENTORY, DMI)
    for row in (["system", "product", "name", "R640"], ["firmware", "bios", "version", "2.10.2"],
                ["cpu", "physical", "number", "2"], ["cpu", "logical", "number", "40"],
                ["cpu", "physical_1", "product", "Xeon"]):
        assert row in rows


def test_memory_total_and_each_bank_with_its_slot():
    rows = extra.collect(INVENTORY, DMI)
    for row in (["memory", "total", "size", str(32768 * 2**20)], ["memory", "banks", "count", "2"],
                ["memory", "bank:0", "size", str(16384 * 2**20)],
                ["memory", "bank:0", "slot", "A1"], ["memory", "bank:0", "type", "DDR4"],
                ["memory", "bank:1", "size", "0"]):
        assert row in rows


def test_disks_in_gb_and_nics():
    rows = extra.collect(INVENTORY, DMI)
    for row in (["disk", "logical", "count", "1"], ["disk", "sda", "size", "480"],
                ["disk", "sda", "rotational", "False"],
                ["network", "eno1", "serial", "3c:fd:fe:aa:bb:01"],
                ["network", "eno1", "link", "yes"], ["network", "eno1", "speed", "10000"]):
        assert row in rows


def test_unknown_values_give_no_row():
    rows = extra.collect(INVENTORY, DMI)
    assert not any(row[:3] == ["system", "product", "uuid"] for row in rows)
    assert not any(row[:3] == ["network", "eno1", "ipv4"] for row in rows)


def test_a_missing_section_gives_no_rows():
    assert extra.collect({}, None) == [["disk", "logical", "count", "0"]]
