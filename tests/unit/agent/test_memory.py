"""Memory collector: kernel total and installed size (DMI type 17, else rounded)."""

from __future__ import annotations

import pytest

from ironsight.agent import memory


def test_total_is_memtotal_in_bytes(qemu_vm):
    assert memory.collect(str(qemu_vm))["total"] == 2013340 * 1024


def test_physical_mb_is_the_sum_of_the_dmi_memory_devices(server):
    assert memory.collect(str(server))["physical_mb"] == 12 * 16384


def test_physical_mb_without_dmi_rounds_the_kernel_total_up_to_128_mib(qemu_vm):
    assert memory.collect(str(qemu_vm))["physical_mb"] == 2048


def test_physical_mb_of_an_exact_multiple_is_not_rounded_further():
    assert memory.round_up_mb(512 * 1024 * 1024) == 512


def test_physical_mb_falls_back_when_dmi_lists_only_empty_slots(qemu_vm):
    qemu_vm.memory_device(0, 0)
    qemu_vm.memory_device(1, 0xFFFF)
    assert memory.collect(str(qemu_vm))["physical_mb"] == 2048


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
