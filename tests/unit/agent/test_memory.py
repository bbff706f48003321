"""Memory collector: kernel total and installed size (DMI type 17, else memory blocks, else
MemTotal rounded)."""

from __future__ import annotations

import pytest

from ironsight.agent import memory

from .conftest import smbios_memory_device

GiB_BLOCKS_128M = ["1"] * 8  # 8 online blocks of 128 MiB


def test_total_is_memtotal_in_bytes(qemu_vm):
    assert memory.collect(str(qemu_vm))["total"] == 2013340 * 1024


def test_physical_mb_is_the_sum_of_the_dmi_memory_devices(server):
    assert memory.collect(str(server))["physical_mb"] == 12 * 16384


def test_physical_mb_reads_the_whole_dmi_table_when_it_is_there(qemu_vm):
    qemu_vm.smbios_table(smbios_memory_device(8192, "DIMM A1", "BANK 0"),
                         smbios_memory_device(8192, "DIMM B1", "BANK 1"))
    assert memory.collect(str(qemu_vm))["physical_mb"] == 16384


def test_dmi_wins_over_the_memory_blocks(server):
    server.memory_blocks("8000000", GiB_BLOCKS_128M)
    assert memory.collect(str(server))["physical_mb"] == 12 * 16384


def test_physical_mb_without_dmi_is_the_sum_of_online_memory_blocks(qemu_vm):
    qemu_vm.memory_blocks("8000000", GiB_BLOCKS_128M * 2)
    assert memory.collect(str(qemu_vm))["physical_mb"] == 2048


def test_offline_memory_blocks_do_not_count(qemu_vm):
    qemu_vm.memory_blocks("8000000", ["1", "0", "1", "0"])
    assert memory.blocks_physical_mb(str(qemu_vm)) == 256


def test_memory_block_size_is_hexadecimal(tree):
    tree.memory_blocks("80000000", ["1", "1"])  # 2 GiB blocks (large x86 servers)
    assert memory.blocks_physical_mb(str(tree)) == 4096


def test_an_unreadable_block_size_gives_no_block_figure(tree):
    tree.memory_blocks("junk", ["1"])
    assert memory.blocks_physical_mb(str(tree)) == 0


def test_physical_mb_without_dmi_nor_blocks_rounds_the_kernel_total_up_to_128_mib(qemu_vm):
    assert memory.collect(str(qemu_vm))["physical_mb"] == 2048


def test_physical_mb_of_an_exact_multiple_is_not_rounded_further():
    assert memory.round_up_mb(512 * 1024 * 1024) == 512


def test_physical_mb_falls_back_when_dmi_lists_only_empty_slots(qemu_vm):
    qemu_vm.memory_device(0, 0)
    qemu_vm.memory_device(1, 0xFFFF)
    qemu_vm.memory_blocks("8000000", GiB_BLOCKS_128M)
    assert memory.collect(str(qemu_vm))["physical_mb"] == 1024


@pytest.mark.parametrize(("size_field", "extended", "expected"), [
    (2048, 0, 2048),                # MB granularity
    (0x8000 | 16384, 0, 16),        # kB granularity (bit 15)
    (0x7FFF, 65536, 65536),         # Extended Size (>= 32 GiB modules)
    (0, 0, 0),                      # no module installed
    (0xFFFF, 0, 0),                 # unknown
], ids=["mb", "kb", "extended", "empty", "unknown"])
def test_dmi_module_size_decoding(tree, size_field, extended, expected):
    tree.memory_device(0, size_field, extended)
    assert memory.dmi_physical_mb(str(tree)) == expected


def test_a_truncated_dmi_structure_counts_as_nothing():
    assert memory.module_size_mb(bytes([17, 4, 0, 0])) == 0


def test_missing_meminfo_is_an_error(tree):
    with pytest.raises(ValueError, match="MemTotal"):
        memory.collect(str(tree))
