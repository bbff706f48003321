"""CPU collector: IPA's `cpu` fields from /proc/cpuinfo and sysfs."""

from __future__ import annotations

from ironsight.agent import cpu


def test_count_is_the_number_of_logical_cpus(qemu_vm, server):
    assert cpu.collect(str(qemu_vm))["count"] == 2
    assert cpu.collect(str(server))["count"] == 40


def test_model_name_comes_from_cpuinfo(qemu_vm):
    assert cpu.collect(str(qemu_vm))["model_name"] == "QEMU Virtual CPU version 2.5+"


def test_frequency_is_the_cpuinfo_mhz_string_without_cpufreq(qemu_vm):
    assert cpu.collect(str(qemu_vm))["frequency"] == "2494.140"


def test_frequency_prefers_the_cpufreq_maximum_like_lscpu(server):
    assert cpu.collect(str(server))["frequency"] == "3900.0000"


def test_architecture_comes_from_the_kernel(qemu_vm):
    assert cpu.collect(str(qemu_vm))["architecture"] == "x86_64"


def test_architecture_is_unknown_in_a_tree_without_it(qemu_vm):
    qemu_vm.remove("proc/sys/kernel/arch")
    assert cpu.collect(str(qemu_vm))["architecture"] is None


def test_flags_are_a_list(qemu_vm):
    flags = cpu.collect(str(qemu_vm))["flags"]
    assert flags[:3] == ["fpu", "de", "pse"]
    assert "hypervisor" in flags


def test_socket_count_is_the_number_of_physical_ids(qemu_vm, server):
    assert cpu.collect(str(qemu_vm))["socket_count"] == 1
    assert cpu.collect(str(server))["socket_count"] == 2


def test_socket_count_falls_back_to_sysfs_topology(tree):
    tree.write("proc/cpuinfo", "processor\t: 0\n\nprocessor\t: 1\n")
    tree.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n")
    tree.write("sys/devices/system/cpu/cpu1/topology/physical_package_id", "1\n")
    assert cpu.collect(str(tree))["socket_count"] == 2


def test_arm_cpuinfo_uses_features_and_has_no_model_name(tree):
    tree.write("proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n\n"
                               "processor\t: 1\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n")
    result = cpu.collect(str(tree))
    assert (result["count"], result["model_name"], result["flags"]) == (2, None, ["fp", "asimd"])


def test_count_falls_back_to_the_online_cpu_ranges(tree):
    tree.write("sys/devices/system/cpu/online", "0-3,6,8-9\n")
    assert cpu.collect(str(tree))["count"] == 7


def test_an_unreadable_machine_gives_empty_values_not_an_exception(tree):
    assert cpu.collect(str(tree)) == {"model_name": None, "frequency": None, "count": 0,
                                      "architecture": None, "flags": [], "socket_count": 1}
