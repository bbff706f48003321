"""NUMA topology from /sys/devices/system/node, in IPA's `numa_topology` shape."""

from __future__ import annotations

import pytest

from ironsight.agent import numa


def test_each_node_reports_its_memory_in_kb(server):
    server.numa_node(0, 98000000, {0: 0})
    server.numa_node(1, 99000000, {1: 0})
    assert numa.collect(str(server))["ram"] == [{"numa_node": 0, "size_kb": 98000000},
                                                {"numa_node": 1, "size_kb": 99000000}]


def test_threads_of_one_core_are_siblings_and_cores_are_per_node(server):
    server.numa_node(0, 1000, {0: 0, 1: 1, 20: 0, 21: 1})
    server.numa_node(1, 1000, {10: 0, 30: 0})
    assert numa.collect(str(server))["cpus"] == [
        {"cpu": 0, "numa_node": 0, "thread_siblings": [0, 20]},
        {"cpu": 1, "numa_node": 0, "thread_siblings": [1, 21]},
        {"cpu": 0, "numa_node": 1, "thread_siblings": [10, 30]}]


def test_nics_carry_their_device_node_and_others_are_left_out(server):
    server.numa_node(0, 1000, {0: 0})
    server.write("sys/devices/pci0000:17/0000:17:02.0/0000:19:00.0/numa_node", "0\n")
    server.write("sys/devices/pci0000:17/0000:17:02.0/0000:19:00.1/numa_node", "-1\n")
    assert numa.collect(str(server))["nics"] == [{"name": "eno1", "numa_node": 0},
                                                 {"name": "eno2", "numa_node": -1}]


def test_a_kernel_without_nodes_has_no_topology(qemu_vm):
    assert numa.collect(str(qemu_vm)) is None


def test_a_node_without_meminfo_is_an_error(tree):
    tree.mkdir("sys/devices/system/node/node0")
    with pytest.raises(ValueError, match="MemTotal"):
        numa.collect(str(tree))


def test_a_thread_without_core_id_is_an_error(tree):
    tree.numa_node(0, 1000, {})
    tree.mkdir("sys/devices/system/node/node0/cpu3")
    with pytest.raises(ValueError, match="core_id"):
        numa.collect(str(tree))
