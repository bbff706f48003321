"""SMBIOS decoding from sysfs: the whole table or the per-structure entries, in IPA's `dmi`
shape (dmidecode's field names)."""

from __future__ import annotations

from ironsight.agent import smbios

from .conftest import smbios_memory_device, smbios_structure


def _bios(vendor: str, version: str, date: str) -> bytes:
    fields = bytearray(0x12 - 4)
    fields[0], fields[1], fields[4] = 1, 2, 3  # vendor @4, version @5, release date @8
    return smbios_structure(0, bytes(fields), [vendor, version, date])


def _system(maker: str, product: str, version: str) -> bytes:
    fields = bytearray(0x1B - 4)
    fields[0], fields[1], fields[2] = 1, 2, 3
    return smbios_structure(1, bytes(fields), [maker, product, version])


def _memory_array(devices: int, max_kib: int, extended: int = 0) -> bytes:
    fields = bytearray(0x17 - 4)
    fields[0x07 - 4:0x0B - 4] = max_kib.to_bytes(4, "little")
    fields[0x0D - 4:0x0F - 4] = devices.to_bytes(2, "little")
    fields[0x0F - 4:0x17 - 4] = extended.to_bytes(8, "little")
    return smbios_structure(16, bytes(fields), [])


def test_firmware_and_system_come_from_types_0_and_1(tree):
    tree.smbios_table(_bios("Dell Inc.", "2.10.2", "02/24/2021"),
                      _system("Dell Inc.", "PowerEdge R640", "1.0"))
    dmi = smbios.summary(str(tree))
    assert dmi["bios"] == {"Vendor": "Dell Inc.", "Version": "2.10.2",
                           "Release Date": "02/24/2021"}
    assert dmi["system"] == {"Manufacturer": "Dell Inc.", "Product Name": "PowerEdge R640",
                             "Version": "1.0"}


def test_each_dimm_has_its_size_slot_type_and_speed(tree):
    tree.smbios_table(_memory_array(2, 768 * 2**20),
                      smbios_memory_device(16384, "A1", "NODE 0 CHANNEL 0"),
                      smbios_memory_device(0, "A2", "NODE 0 CHANNEL 1"))
    memory = smbios.summary(str(tree))["memory"]
    assert memory["Number Of Devices"] == 2
    assert memory["Maximum Capacity"] == "768 GB"
    assert memory["devices"] == [
        {"Size": "16 GB", "size_mb": 16384, "Locator": "A1", "Bank Locator": "NODE 0 CHANNEL 0",
         "Type": "DDR4", "Speed": "2933 MT/s"},
        {"Size": "No Module Installed", "size_mb": 0, "Locator": "A2",
         "Bank Locator": "NODE 0 CHANNEL 1", "Type": "DDR4", "Speed": "2933 MT/s"}]


def test_a_maximum_capacity_beyond_2_tib_uses_the_extended_field(tree):
    tree.smbios_table(_memory_array(48, 0x80000000, extended=6 * 2**40))
    assert smbios.summary(str(tree))["memory"]["Maximum Capacity"] == "6144 GB"


def test_a_module_below_one_gib_is_shown_in_mb(tree):
    tree.smbios_table(smbios_memory_device(512, "DIMM 0", "BANK 0", kind=0x12, speed=0))
    device = smbios.summary(str(tree))["memory"]["devices"][0]
    assert (device["Size"], device["Type"]) == ("512 MB", "DDR")
    assert "Speed" not in device  # 0: unknown


def test_entries_are_read_when_there_is_no_table(server):
    devices = smbios.summary(str(server))["memory"]["devices"]
    assert [d["size_mb"] for d in devices] == [16384] * 12 + [0]


def test_nothing_readable_gives_empty_sections(tree):
    assert smbios.summary(str(tree)) == {"bios": {}, "system": {}, "cpu": [],
                                         "memory": {"devices": []}}


def test_parsing_stops_at_the_end_of_table_structure():
    blob = smbios_structure(127, b"", []) + _bios("X", "1", "2")
    assert [s.type for s in smbios.parse(blob)] == [127]


def test_a_truncated_table_keeps_the_complete_structures():
    blob = _bios("X", "1", "2") + _system("Y", "Z", "3")[:10]
    assert [s.type for s in smbios.parse(blob)] == [0]


def test_a_string_index_beyond_the_string_set_is_none():
    (structure,) = smbios.parse(smbios_structure(1, bytes([9, 0, 0]), ["only"]))
    assert structure.string(4) is None


def test_a_dimm_serial_number_is_reported_for_the_data_diff(tree):
    tree.smbios_table(smbios_memory_device(8192, "A1", "B0", serial="3A1F00C2"))
    assert smbios.summary(str(tree))["memory"]["devices"][0]["Serial Number"] == "3A1F00C2"
